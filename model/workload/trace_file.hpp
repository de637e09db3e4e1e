// The checks every trace reader makes before reading: the path is a regular file (a device,
// FIFO or directory as a trace gets a one-line error saying what it is, not an I/O error or
// an endless read).
#pragma once

#include <string>

#include "common/result.hpp"

namespace kvfdp::workload {

// ok when path is a regular file (after symlinks). what names the trace ("block trace"),
// option the flag that takes it ("--blk-trace FILE.csv") for the error's advice.
[[nodiscard]] Result<void> check_trace_file(const std::string &path, const std::string &what,
					    const std::string &option);

}  // namespace kvfdp::workload
