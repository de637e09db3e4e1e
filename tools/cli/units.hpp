// Sizes with binary suffixes, byte formatting, lifetime class names and the default
// class -> handle map: the small vocabulary every kvfdp subcommand shares.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace kvfdp::cli {

// FDP statistics counters are 128-bit byte counts (NVMe TP4146, log 0x22).
using u128 = unsigned __int128;

// Parses "4096", "64KiB", "1MiB", "8G", "2TiB" (binary multiples; K/M/G/T accepted as
// KiB/MiB/GiB/TiB). Fails with a one-line message naming the accepted suffixes.
[[nodiscard]] Result<uint64_t> parse_size(std::string_view text);

// "1.50 GiB", "512 B": binary units, two decimals above 1 KiB.
[[nodiscard]] std::string format_bytes(u128 bytes);
// Decimal rendering of a 128-bit counter.
[[nodiscard]] std::string format_u128(u128 v);

// Lifetime classes are the RWH values 0..5 of fcntl(F_SET_RW_HINT) (bpf/tag.h).
inline constexpr int kClassCount = 6;
// Lower-case names as they appear in flags, JSON and metric labels: not_set, none, short,
// medium, long, extreme.
[[nodiscard]] std::string_view class_name(int cls);
// Accepts the names above (any case) or the numbers 0..5; nullopt otherwise.
[[nodiscard]] std::optional<int> parse_class(std::string_view text);
// "not_set, none, short, medium, long, extreme": for error messages.
[[nodiscard]] std::string class_names_list();

// The default class -> handle-index map of ARCHITECTURE.md decision 4 for a namespace with
// nruh handles: NOT_SET and NONE -> 0, SHORT -> 1, MEDIUM -> 2, LONG -> 3, EXTREME -> 4;
// with fewer handles, neighbouring classes share one (SHORT..EXTREME are spread evenly
// over handles 1..nruh-1). With one handle every class goes to 0; nruh 0 maps nothing (-1).
[[nodiscard]] std::array<int, kClassCount> default_class_map(unsigned nruh);
// The classes whose map entry is handle, in class order.
[[nodiscard]] std::vector<int> classes_on_handle(const std::array<int, kClassCount> &map,
						 int handle);

} // namespace kvfdp::cli
