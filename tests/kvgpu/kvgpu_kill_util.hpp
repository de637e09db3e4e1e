// Doctest-side helper of the kvgpu crash tests (the benches do not link doctest, so it is not in
// kvgpu_test_util.hpp): a child that reports progress over a pipe, killed with SIGKILL mid-work.
#pragma once

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "tests/kvgpu/kvgpu_store_util.hpp"

namespace kvfdp::gpu::test {

// Forks a child that runs body(progress_fd), which writes one byte per step and never returns
// (it _exits on error). The parent reads `after` bytes, then SIGKILLs the child (so the kill
// lands inside a later step), reaps it and checks that SIGKILL is what ended it.
template <class F> void fork_kill_after(int after, F body)
{
	int pipefd[2];
	REQUIRE(::pipe(pipefd) == 0);
	pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		::close(pipefd[0]);
		body(pipefd[1]);
		::_exit(5);
	}
	::close(pipefd[1]);
	int done = 0;
	char buf[64];
	while (done < after) {
		ssize_t r = ::read(pipefd[0], buf, sizeof(buf));
		REQUIRE(r > 0);
		done += int(r);
	}
	::kill(child, SIGKILL);
	int status = 0;
	REQUIRE(::waitpid(child, &status, 0) == child);
	::close(pipefd[0]);
	REQUIRE(WIFSIGNALED(status));
	CHECK(WTERMSIG(status) == SIGKILL);
}

// A bounded store reopened after a crash, at most cap bytes: the journal was trusted, index and
// disk agree (no dead file left), and every chunk among key_of(0..keys-1) that the index lists
// verifies from its key.
inline void check_reopened(kvgpu_ctx *c, const std::string &dir, uint64_t cap, int keys,
			   const std::function<std::string(int)> &key_of)
{
	kvgpu_stats_t s = stats_of(c);
	CHECK(s.index_error == 0);
	CHECK(s.used_bytes <= cap);
	DiskUse u = disk_use(dir);
	CHECK(u.bytes == s.used_bytes);
	CHECK(u.files == s.chunks);
	CHECK(u.dead_files == 0);
	uint64_t found = 0;
	for (int i = 0; i < keys; i++) {
		int r = verify_key(c, key_of(i));
		if (r == KVGPU_ERR_NOT_FOUND)
			continue;
		CAPTURE(i);
		CHECK(r == 1);
		found++;
	}
	CHECK(found == s.chunks);
	CHECK(s.chunks > 0);
}

}  // namespace kvfdp::gpu::test
