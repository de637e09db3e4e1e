// Temporary files for tests: a directory removed with what the test made in it, a file
// written whole, a Unix socket bound (and left, as a killed daemon leaves one).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/unique_fd.hpp"

namespace kvfdp::test {

struct TempDir {
	std::string path;
	TempDir()
	{
		char tmpl[] = "/tmp/kvfdp-test-XXXXXX";
		const char *p = ::mkdtemp(tmpl);
		REQUIRE(p != nullptr);
		path = p;
	}
	~TempDir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;
};

inline void write_file(const std::string &path, const std::string &text)
{
	UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
	REQUIRE(fd);
	REQUIRE(::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

// A socket bound at path; closing the returned fd leaves the file (no listener behind it).
inline UniqueFd bind_unix_socket(const std::string &path)
{
	UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	REQUIRE(s);
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	REQUIRE(path.size() < sizeof(addr.sun_path));
	path.copy(addr.sun_path, path.size());
	REQUIRE(::bind(s.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0);
	return s;
}

} // namespace kvfdp::test
