// Reading a small text file that a person names (a config, a policy) without letting its
// type, size or filesystem hurt the reader: only a regular file is read, and only up to a
// limit. A directory, FIFO, socket or device (/dev/zero) is refused before a byte is read, so
// it can neither block the caller nor exhaust its memory. A regular file on a filesystem that
// hangs (an unreachable NFS server: stat, open and read all wait in the kernel, and O_NONBLOCK
// means nothing to a regular file) is read by a helper thread the caller waits for only up to a
// deadline, so a reload or a start fails with one line instead of hanging.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "common/result.hpp"

namespace kvfdp {

inline constexpr size_t kMaxConfigFileBytes = 1 << 20;
// How long a reader waits for the helper thread: far longer than a local file ever takes.
inline constexpr std::chrono::milliseconds kConfigReadDeadline{5000};
// Helpers left blocked (their reads never returned) at most; past them a read fails at once.
inline constexpr int kMaxStuckConfigReads = 4;

// The whole of path (symlinks followed), or one line that names the path and what is wrong
// with it. Error codes: the errno of stat/open/read (ENOENT for a missing file, so a caller
// can treat that as "use the defaults"), is_a_directory for a directory, invalid_argument
// for any other non-regular file, file_too_large above limit bytes, timed_out when the read
// did not finish within deadline (its helper thread is left to finish on its own) or too
// many earlier ones are still blocked. A deadline of 0 reads in the calling thread.
[[nodiscard]] Result<std::string>
read_config_file(const std::string &path, size_t limit = kMaxConfigFileBytes,
		 std::chrono::milliseconds deadline = kConfigReadDeadline);

// Helper threads whose reads passed their deadline and have not returned yet.
[[nodiscard]] int stuck_config_reads();

}  // namespace kvfdp
