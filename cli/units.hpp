// Sizes with binary suffixes, byte formatting, lifetime class names and the default
// class -> handle map: the small vocabulary every kvfdp subcommand shares. Parsing, names
// and the map are the placement library's (placement/), adapted to the CLI's int classes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "placement/classes.hpp"

namespace kvfdp::cli {

// FDP statistics counters are 128-bit byte counts (NVMe TP4146, log 0x22).
using u128 = unsigned __int128;

// placement::parse_size: "4096", "64KiB", "1.5GiB", "8G", "2TiB" (binary multiples). Fails
// with a one-line message naming the accepted suffixes.
[[nodiscard]] Result<uint64_t> parse_size(std::string_view text);

// "1.50 GiB", "512 B": binary units, two decimals above 1 KiB.
[[nodiscard]] std::string format_bytes(u128 bytes);
// Decimal rendering of a 128-bit counter.
[[nodiscard]] std::string format_u128(u128 v);
// A duration for tables: "3.6s", "12.5m", "2.0h", "3.1d" (one decimal, the largest unit
// that keeps it small).
[[nodiscard]] std::string format_seconds(double s);

// Lifetime classes are the RWH values 0..5 of fcntl(F_SET_RW_HINT) (bpf/tag.h).
inline constexpr int kClassCount = static_cast<int>(placement::kNumClasses);
// Lower-case names as they appear in flags, JSON and metric labels: not_set, none, short,
// medium, long, extreme.
[[nodiscard]] std::string_view class_name(int cls);
// Accepts the names above (any case) or the numbers 0..5; nullopt otherwise.
[[nodiscard]] std::optional<int> parse_class(std::string_view text);
// "not_set, none, short, medium, long, extreme": for error messages.
[[nodiscard]] std::string class_names_list();

// placement::default_map (placement/handle_map.hpp states the rule) as ints; nruh 0 maps
// nothing (-1).
[[nodiscard]] std::array<int, kClassCount> default_class_map(unsigned nruh);
// The classes whose map entry is handle, in class order.
[[nodiscard]] std::vector<int> classes_on_handle(const std::array<int, kClassCount> &map,
						 int handle);

}  // namespace kvfdp::cli
