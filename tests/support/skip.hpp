// Skipping a test whose capability is missing, the contract `./tools/dev.sh test` enforces:
// a skip prints "SKIP: <capability>: <reason>" and exits 77 (ctest SKIP_RETURN_CODE); the
// capability is one word from the list in docs/build.md (root, btf, tracefs, loop, qemu,
// archive, gpu, cuda, ...). A skip decides nothing about the code under test: a verifier
// refusal, a failed mount or mkfs is a failure, never a skip.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>

namespace kvfdp::test {

// Prints "SKIP: <capability>: <reason>" and exits the process with 77. If a check of this
// executable failed before (any test case), it exits 1 instead, so a skip never hides a
// failure. Prefer KVFDP_REQUIRES-style up-front requirements (Requires below).
[[noreturn]] void skip(const char *capability, const std::string &reason);
// The same with capability "unspecified" (which dev.sh never allows): name the capability.
[[noreturn]] void skip(const char *reason);

// Skips (capability "root") unless running as root.
void require_root(const char *what);

// A capability every test case of this executable needs, probed once before doctest runs
// any case. A probe returns "" when the capability is there, else why it is missing; the
// first missing one skips the executable. Define at namespace scope:
//   static const kvfdp::test::Requires need_root("root", kvfdp::test::probe_root("loading BPF"));
class Requires {
public:
	Requires(const char *capability, std::function<std::string()> probe);
};

// Probes for Requires.
std::function<std::string()> probe_root(const char *what);  // euid 0
std::function<std::string()> probe_btf();                   // /sys/kernel/btf/vmlinux
std::function<std::string()> probe_loop();                  // losetup and /dev/loop-control
// An NVIDIA GPU on the PCI bus (vendor 0x10de, display class), whatever its driver: with one
// present, a CUDA error (driver or runtime mismatch) is a failure, not a missing capability.
std::function<std::string()> probe_gpu();
// At least n NVIDIA GPUs on the PCI bus, counted as probe_gpu does (capability "gpu2" for 2).
std::function<std::string()> probe_gpus(int n);

// A capability only one test case needs, as a doctest decorator decided when the case is
// registered (before any case runs):
//   TEST_CASE("mounts a tmpfs" * kvfdp::test::case_requires("root", kvfdp::test::probe_root("mount")))
// Without it the case does not run, and the executable then exits 77 with "SKIP: <cap>:
// <reason>" once every other case passed (1 if any failed): a skipped case is never a pass.
[[nodiscard]] doctest::skip case_requires(const char *capability,
					  const std::function<std::string()> &probe);

// Ends a doctest run (rc = Context::run()'s): rc, or 77 with the SKIP lines of the cases
// case_requires left out when rc is 0. Called by the shared doctest main.
[[nodiscard]] int finish_run(int rc);

// Runs the registered probes; skips on the first missing capability. Called by the shared
// doctest main before any test case runs.
void check_requirements();

// Failed checks (assertions, exceptions, failed cases) recorded so far in this process.
[[nodiscard]] int failures_so_far();

}  // namespace kvfdp::test
