// Result<T>, UniqueFd, logging and the FNV-1a hash.
#include <doctest/doctest.h>

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "common/fnv.hpp"
#include "common/log.hpp"
#include "common/result.hpp"
#include "common/unique_fd.hpp"

using namespace kvfdp;

namespace {
Result<int> half(int x)
{
	if (x % 2)
		return make_error(std::errc::invalid_argument, "half of " + std::to_string(x));
	return x / 2;
}
Result<void> quarter_ok(int x)
{
	KVFDP_TRY(half(x));
	KVFDP_TRY(half(x / 2));
	return ok();
}
}  // namespace

TEST_CASE("common: Result carries a value or an error with context")
{
	auto a = half(8);
	REQUIRE(a.ok());
	CHECK(*a == 4);
	auto b = half(3);
	REQUIRE_FALSE(b.ok());
	CHECK(b.error().code == std::errc::invalid_argument);
	CHECK(b.error().message() == "half of 3: Invalid argument");
}

TEST_CASE("common: KVFDP_TRY propagates the first error")
{
	CHECK(quarter_ok(8).ok());
	auto r = quarter_ok(6);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().context == "half of 3");
}

TEST_CASE("common: errno_error accepts negative errno and names the call")
{
	auto e = errno_error(-ENOENT, "open /dev/ng9n9");
	CHECK(e.code.value() == ENOENT);
	CHECK(e.message() == "open /dev/ng9n9: No such file or directory");
}

TEST_CASE("common: a guidance error is its message alone, and keeps its code")
{
	auto g = guidance_error(std::errc::invalid_argument,
				"/dev/nvme0n1 is a block device; use /dev/ng0n1");
	CHECK(g.guidance);
	CHECK(g.code == std::errc::invalid_argument);
	CHECK(g.message() == "/dev/nvme0n1 is a block device; use /dev/ng0n1");
	auto e = guidance_errno(-ENOENT, "cannot find /dev/ng9n9 (see `nvme list`)");
	CHECK(e.code.value() == ENOENT);
	CHECK(e.message() == "cannot find /dev/ng9n9 (see `nvme list`)");
	CHECK_FALSE(errno_error(ENOENT, "x").guidance);
}

TEST_CASE("common: UniqueFd closes on destruction and moves ownership")
{
	int raw;
	{
		auto r = open_fd("/dev/null", O_RDONLY);
		REQUIRE(r.ok());
		UniqueFd fd = std::move(*r);
		raw = fd.get();
		CHECK(fd.valid());
		CHECK(::fcntl(raw, F_GETFD) >= 0);
		CHECK((::fcntl(raw, F_GETFD) & FD_CLOEXEC) != 0);
		UniqueFd moved = std::move(fd);
		CHECK_FALSE(fd.valid());
		CHECK(moved.get() == raw);
	}
	errno = 0;
	CHECK(::fcntl(raw, F_GETFD) == -1);
	CHECK(errno == EBADF);
}

TEST_CASE("common: open_fd reports the path on failure")
{
	auto r = open_fd("/nonexistent/kvfdp", O_RDONLY);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().message().find("/nonexistent/kvfdp") != std::string::npos);
}

TEST_CASE("common: debug categories are off until enabled")
{
	log::set_debug_mask(0);
	CHECK_FALSE(log::debug_enabled(log::kCatNvme));
	log::set_debug_mask(log::kCatNvme | log::kCatUblk);
	CHECK(log::debug_enabled(log::kCatNvme));
	CHECK_FALSE(log::debug_enabled(log::kCatBpf));
	log::set_debug_mask(0);
}

TEST_CASE("common: fnv1a matches FNV-1a 64's vectors, chains, and hashes raw bytes alike")
{
	CHECK(fnv1a("") == 0xcbf29ce484222325ull);
	CHECK(fnv1a("foobar") == 0x85944171f73967e8ull);
	CHECK(fnv1a("bar", fnv1a("foo")) == fnv1a("foobar"));
	const unsigned char bytes[] = {'f', 'o', 'o', 0xff};
	CHECK(fnv1a_bytes(bytes, sizeof bytes) == fnv1a(std::string_view("foo\xff", 4)));
	CHECK(fnv1a_bytes(bytes, 3) != fnv1a_bytes(bytes, 4));
}
