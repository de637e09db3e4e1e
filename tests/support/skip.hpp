// Skipping a test whose capability is missing: print why, exit 77 (ctest SKIP_RETURN_CODE).
#pragma once

namespace kvfdp::test {

// Prints "SKIP: <reason>" and exits the process with 77. Call before any check runs,
// or from a test case when the rest of the executable cannot run either.
[[noreturn]] void skip(const char *reason);

// Skips unless running as root.
void require_root(const char *what);

} // namespace kvfdp::test
