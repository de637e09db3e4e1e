// The BPF build pipeline, end to end: the clang-built CO-RE object, embedded in a bpftool
// skeleton, loads into the running kernel, attaches to a syscall tracepoint and sees a real
// fcntl(F_SET_RW_HINT) call.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "bpf/hint_probe.skel.h"
#include "bpf/tag.h"
#include "common/unique_fd.hpp"
#include "tests/bpf/tracefs.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_files.hpp"

// Capabilities, decided before any check: root, BTF (CO-RE) and syscall tracepoints.
// A load the verifier refuses is a failure (libbpf prints the verifier log above it).
static const kvfdp::test::Requires need_root("root",
					     kvfdp::test::probe_root("loading BPF programs"));
static const kvfdp::test::Requires need_btf("btf", kvfdp::test::probe_btf());
static const kvfdp::test::Requires need_tracefs("tracefs", kvfdp::test::probe_tracefs());

TEST_CASE("bpf: hint_probe loads, attaches and counts F_SET_RW_HINT calls")
{
	hint_probe *skel = hint_probe::open();
	REQUIRE(skel != nullptr);
	skel->rodata->target_tgid = static_cast<uint32_t>(::getpid());
	int err = hint_probe::load(skel);
	if (err)
		hint_probe::destroy(skel);
	REQUIRE_MESSAGE(err == 0, "the kernel refused the tracepoint program hint_probe: "
					  << std::strerror(-err)
					  << " (the verifier log, if any, is above)");
	REQUIRE(hint_probe::attach(skel) == 0);

	const kvfdp::test::TempFile file;
	kvfdp::UniqueFd fd(::open(file.path.c_str(), O_RDWR | O_CLOEXEC));
	REQUIRE(fd.valid());

	uint64_t hint = 4;  // RWH_WRITE_LIFE_LONG
	int rc = ::fcntl(fd.get(), KVFDP_F_SET_RW_HINT, &hint);
	if (rc != 0)
		MESSAGE("fcntl(F_SET_RW_HINT) on /tmp returned "
			<< std::strerror(errno) << "; the tracepoint fires on entry regardless");
	uint64_t probe = 0;
	::fcntl(fd.get(), KVFDP_F_GET_RW_HINT, &probe);  // not counted: a different command

	CHECK(skel->bss->set_hint_calls == 1);
	CHECK(skel->bss->last_hint == 4);
	CHECK(skel->data->last_fd == fd.get());
	hint_probe::destroy(skel);
}
