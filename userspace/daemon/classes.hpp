// Lifetime class names and parsing (the F_SET_RW_HINT values of bpf/tag.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "bpf/tag.h"

namespace kvfdp::daemon {

inline constexpr unsigned kNumClasses = KVFDP_NR_CLASSES;

// "not_set", "none", "short", "medium", "long", "extreme"; "?" out of range.
[[nodiscard]] const char *class_name(unsigned cls);
// Accepts the names above (case-insensitive) and the upper-case RWH_WRITE_LIFE_* suffixes.
[[nodiscard]] std::optional<uint8_t> parse_class(std::string_view name);

} // namespace kvfdp::daemon
