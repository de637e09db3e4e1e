// CRC32C (Castagnoli), the chunk payload and header checksum: SSE4.2 when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvfdp::gpu {

// Extends crc (0 to start) over n bytes at p; crc32c(crc32c(0, a), b) == crc32c(0, a || b).
[[nodiscard]] uint32_t crc32c(uint32_t crc, const void *p, size_t n) noexcept;

// The portable table-driven version, for tests that compare it with the hardware one.
[[nodiscard]] uint32_t crc32c_portable(uint32_t crc, const void *p, size_t n) noexcept;

}  // namespace kvfdp::gpu
