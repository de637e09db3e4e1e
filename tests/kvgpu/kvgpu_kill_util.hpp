// Doctest-side helper of the kvgpu crash tests (the benches do not link doctest, so it is not in
// kvgpu_test_util.hpp): a child that reports progress over a pipe, killed with SIGKILL mid-work.
#pragma once

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

} // namespace kvfdp::gpu::test
