// Temporary files for tests: a directory removed with what the test made in it, a file
// removed at the end, a file written whole, a Unix socket bound (and left, as a killed daemon
// leaves one). The one copy every test uses.
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

// A fresh directory under base (mkdtemp), removed with what the test made in it. A failed
// mkdtemp fails the test, or with MayFail (a base that may be absent, as /dev/shm in a
// container) leaves path empty and ok() false.
struct TempDir {
	struct MayFail {};
	std::string path;
	explicit TempDir(const std::string &base = "/tmp") : TempDir(base, MayFail{})
	{
		REQUIRE_MESSAGE(ok(), "mkdtemp under " << base);
	}
	TempDir(const std::string &base, MayFail)
	{
		std::string tmpl = base + "/kvfdp-test-XXXXXX";
		if (const char *p = ::mkdtemp(tmpl.data()))
			path = p;
	}
	~TempDir()
	{
		if (ok())
			(void)!std::system(("rm -rf '" + path + "'").c_str());
	}
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;
	[[nodiscard]] bool ok() const { return !path.empty(); }
};

inline void write_file(const std::string &path, const std::string &text)
{
	UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
	REQUIRE(fd);
	REQUIRE(::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

// A fresh file under dir (mkstemp) holding text, unlinked at the end. A failed mkstemp
// fails the test, or with MayFail (an empty file; the caller reports errno) leaves path
// empty and ok() false.
struct TempFile {
	struct MayFail {};
	std::string path;
	explicit TempFile(const std::string &text = {}, const std::string &dir = "/tmp")
	    : TempFile(dir, MayFail{})
	{
		REQUIRE_MESSAGE(ok(), "mkstemp under " << dir);
		if (!text.empty())
			write_file(path, text);
	}
	TempFile(const std::string &dir, MayFail)
	{
		std::string tmpl = dir + "/kvfdp-test-XXXXXX";
		if (UniqueFd fd(::mkstemp(tmpl.data())); fd)
			path = tmpl;
	}
	~TempFile()
	{
		if (ok())
			::unlink(path.c_str());
	}
	TempFile(const TempFile &) = delete;
	TempFile &operator=(const TempFile &) = delete;
	[[nodiscard]] bool ok() const { return !path.empty(); }
};

// A path that does not exist yet (for what the code under test creates), named name in a
// directory of its own that is removed at the end.
struct TempPath {
	TempDir dir;
	std::string path;
	explicit TempPath(const std::string &name = "file") : path(dir.path + "/" + name) {}
};

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

}  // namespace kvfdp::test
