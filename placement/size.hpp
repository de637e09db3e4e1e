// Sizes with binary suffixes ("64KiB", "1.5GiB"): the one parser kvfdpd's options, the CLI,
// the simulator and the config share.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.hpp"

namespace kvfdp::placement {

// Parses "4096", "512B", "64KiB", "512KB", "1MiB", "1.5GiB", "8G", "2TiB": a decimal number (at
// most 9 fraction digits) and an optional suffix B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB
// (binary multiples, any case: KB is 1024 bytes). The grammar of docs/cli.md "Sizes". The result must be a whole number of bytes below 2^64; 0 is accepted (callers
// that need a positive size check). Fails with one line naming the accepted suffixes.
[[nodiscard]] Result<uint64_t> parse_size(std::string_view text);

}  // namespace kvfdp::placement
