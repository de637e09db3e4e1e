// Option value parsers of `kvfdp simulate`: sizes with IEC suffixes, bounded numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kvfdp::sim {

// placement::parse_size ("4096", "512B", "64KiB", "1.5GiB", "2TiB"), as an optional; nullopt
// for anything it refuses and for zero.
[[nodiscard]] std::optional<uint64_t> parse_size(std::string_view s);
// A finite decimal number; nullopt for trailing junk.
[[nodiscard]] std::optional<double> parse_number(std::string_view s);
// A non-negative integer; nullopt for anything else.
[[nodiscard]] std::optional<uint64_t> parse_uint(std::string_view s);

}  // namespace kvfdp::sim
