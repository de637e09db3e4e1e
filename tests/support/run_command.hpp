// Runs a shell command line in a test's directory and keeps its exit status, stdout and
// stderr apart (stderr through a file in that directory).
#pragma once

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "tests/support/temp_files.hpp"

namespace kvfdp::test {

struct CommandRun {
	int rc = -1;  // the exit status, -1 when killed by a signal
	std::string out, err;
};

// Runs `cd dir && command`; dir/stderr is overwritten.
inline CommandRun run_command(const TempDir &dir, const std::string &command)
{
	const std::string errf = dir.path + "/stderr";
	const std::string cmd = "cd '" + dir.path + "' && " + command + " 2>'" + errf + "'";
	CommandRun r;
	FILE *p = popen(cmd.c_str(), "r");
	REQUIRE(p != nullptr);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, p)) > 0)
		r.out.append(buf, n);
	const int st = pclose(p);
	r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	FILE *e = std::fopen(errf.c_str(), "r");
	REQUIRE(e != nullptr);
	while ((n = fread(buf, 1, sizeof buf, e)) > 0)
		r.err.append(buf, n);
	std::fclose(e);
	return r;
}

// The number of '\n' in s (a one-line message has 1).
inline size_t line_count(const std::string &s)
{
	size_t n = 0;
	for (char c : s)
		n += c == '\n';
	return n;
}

}  // namespace kvfdp::test
