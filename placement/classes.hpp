// Lifetime class names and parsing: the F_SET_RW_HINT values of bpf/tag.h, the one copy
// every binary (kvfdpd, kvfdp, the simulator) uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bpf/tag.h"

namespace kvfdp::placement {

inline constexpr unsigned kNumClasses = KVFDP_NR_CLASSES;

// "not_set", "none", "short", "medium", "long", "extreme"; "?" out of range.
[[nodiscard]] const char *class_name(unsigned cls);
// Accepts the names above in any case, "not-set"/"notset", and the numbers 0..5;
// nullopt for anything else.
[[nodiscard]] std::optional<uint8_t> parse_class(std::string_view text);
// ASCII case-insensitive equality (class names, size suffixes).
[[nodiscard]] bool iequal(std::string_view a, std::string_view b);
// "not_set, none, short, medium, long, extreme": for error messages and help.
[[nodiscard]] std::string class_names_list();

}  // namespace kvfdp::placement
