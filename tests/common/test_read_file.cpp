// read_config_file: a regular file is read whole; every other file type, and a file over
// the limit, is refused with one line before it can block or exhaust memory.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/read_file.hpp"
#include "common/unique_fd.hpp"
#include "tests/support/temp_files.hpp"

using namespace kvfdp;
using kvfdp::test::TempDir;
using kvfdp::test::write_file;

namespace {

// The refusal of path: one line naming the path and the words in what.
void check_refused(const std::string &path, std::errc code, const std::string &what)
{
	auto r = read_config_file(path);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().code == std::make_error_code(code));
	const std::string m = r.error().message();
	CHECK(m.find('\n') == std::string::npos);
	CHECK(m.find(path) != std::string::npos);
	CHECK_MESSAGE(m.find(what) != std::string::npos, m);
}

}  // namespace

TEST_CASE("read_file: a regular file is read whole, an empty one as empty")
{
	TempDir d;
	const std::string text = "[placement]\nshort = 1\n";
	write_file(d.path + "/a.toml", text);
	auto r = read_config_file(d.path + "/a.toml");
	REQUIRE(r.ok());
	CHECK(*r == text);
	write_file(d.path + "/empty.toml", "");
	auto e = read_config_file(d.path + "/empty.toml");
	REQUIRE(e.ok());
	CHECK(e->empty());
	// A symlink to a regular file is followed.
	REQUIRE(::symlink((d.path + "/a.toml").c_str(), (d.path + "/link.toml").c_str()) == 0);
	auto l = read_config_file(d.path + "/link.toml");
	REQUIRE(l.ok());
	CHECK(*l == text);
}

TEST_CASE("read_file: a missing file is ENOENT, so a caller can fall back to defaults")
{
	TempDir d;
	auto r = read_config_file(d.path + "/none.toml");
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().code == std::error_code(ENOENT, std::system_category()));
	CHECK(r.error().message().find(d.path + "/none.toml") != std::string::npos);
}

TEST_CASE("read_file: a directory is refused, not read as an empty file")
{
	TempDir d;
	check_refused(d.path, std::errc::is_a_directory, "is a directory, not a regular file");
}

TEST_CASE("read_file: a FIFO without a writer is refused at once, not waited on")
{
	TempDir d;
	const std::string fifo = d.path + "/fifo.toml";
	REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
	check_refused(fifo, std::errc::invalid_argument, "is a FIFO, not a regular file");
}

TEST_CASE("read_file: /dev/zero and /dev/null, directly or through a symlink, are refused")
{
	TempDir d;
	check_refused("/dev/zero", std::errc::invalid_argument,
		      "is a character device, not a regular file");
	check_refused("/dev/null", std::errc::invalid_argument,
		      "is a character device, not a regular file");
	const std::string link = d.path + "/kvfdp.toml";
	REQUIRE(::symlink("/dev/zero", link.c_str()) == 0);
	check_refused(link, std::errc::invalid_argument,
		      "is a character device, not a regular file");
}

TEST_CASE("read_file: a Unix socket is refused")
{
	TempDir d;
	const std::string path = d.path + "/sock.toml";
	UniqueFd s = kvfdp::test::bind_unix_socket(path);
	check_refused(path, std::errc::invalid_argument, "is a socket, not a regular file");
}

TEST_CASE("read_file: a file over the limit is refused, one at the limit is read")
{
	TempDir d;
	write_file(d.path + "/at.toml", std::string(64, 'x'));
	auto at = read_config_file(d.path + "/at.toml", 64);
	REQUIRE(at.ok());
	CHECK(at->size() == 64);
	write_file(d.path + "/over.toml", std::string(65, 'x'));
	auto over = read_config_file(d.path + "/over.toml", 64);
	REQUIRE_FALSE(over.ok());
	CHECK(over.error().code == std::make_error_code(std::errc::file_too_large));
	CHECK(over.error().message() ==
	      d.path +
		      "/over.toml is 65 bytes, over the 64 bytes limit for this file: is it the right file?");
	// The default limit is 1 MiB: a sparse 2 MiB file is refused from its size, unread.
	const std::string big = d.path + "/big.toml";
	write_file(big, "");
	REQUIRE(::truncate(big.c_str(), 2 << 20) == 0);
	check_refused(big, std::errc::file_too_large, "over the 1 MiB limit");
}

TEST_CASE("read_file: a file that reports size 0 is still bounded by the limit")
{
	// /proc files report st_size 0; reading stops at the limit, not at the reported size.
	auto r = read_config_file("/proc/self/maps", 16);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().code == std::make_error_code(std::errc::file_too_large));
	CHECK(r.error().message().find("over the 16 bytes limit") != std::string::npos);
	auto whole = read_config_file("/proc/self/maps");
	REQUIRE(whole.ok());
	CHECK(whole->find("[stack]") != std::string::npos);
}
