// Reading a small text file that a person names (a config, a policy) without letting its
// type or size hurt the reader: only a regular file is read, and only up to a limit. A
// directory, FIFO, socket or device (/dev/zero) is refused before a byte is read, so it can
// neither block the caller nor exhaust its memory.
#pragma once

#include <cstddef>
#include <string>

#include "common/result.hpp"

namespace kvfdp {

inline constexpr size_t kMaxConfigFileBytes = 1 << 20;

// The whole of path (symlinks followed), or one line that names the path and what is wrong
// with it. Error codes: the errno of stat/open/read (ENOENT for a missing file, so a caller
// can treat that as "use the defaults"), is_a_directory for a directory, invalid_argument
// for any other non-regular file, file_too_large above limit bytes.
[[nodiscard]] Result<std::string> read_config_file(const std::string &path, size_t limit = kMaxConfigFileBytes);

} // namespace kvfdp
