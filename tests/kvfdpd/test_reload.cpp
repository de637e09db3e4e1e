// kvfdpd's policy reload (SIGHUP and the `reload` request) with a config that is not a
// readable regular file, or is gone: the old policy stays in force, the generation does not
// move and the error is one line naming the file.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/unique_fd.hpp"
#include "tests/support/temp_files.hpp"
#include "placement/config.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/daemon/ctl/daemon_state.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using kvfdp::test::TempDir;
using kvfdp::test::write_file;

namespace {

// Replaces path by a symlink to target (what an operator's mistake looks like).
void link_to(const std::string &path, const std::string &target)
{
	(void)::unlink(path.c_str());
	REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
}

}  // namespace

TEST_CASE(
	"reload: a config that is a directory, FIFO, socket, /dev/zero or too big keeps the old policy")
{
	TempDir d;
	State s;
	s.nruh = 8;
	s.opts.config_path = d.path + "/kvfdp.toml";
	s.opts.config_explicit = false;  // as the unit runs it: a missing file is the built-in map
	write_file(s.opts.config_path, "[placement]\nshort = 6\n");
	auto first = reload_policy(s);
	REQUIRE_MESSAGE(first.ok(), first.error().message());
	CHECK(*first == 1);
	const auto good = current_policy(s);
	REQUIRE(good);
	CHECK(good->handle[KVFDP_CLASS_SHORT] == 6);
	CHECK(s.table.handle_of(KVFDP_CLASS_SHORT) == 6);

	const std::string dir = d.path + "/a-directory";
	REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
	const std::string fifo = d.path + "/a-fifo";
	REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
	const std::string sock = d.path + "/a-socket";
	UniqueFd sfd = kvfdp::test::bind_unix_socket(sock);
	const std::string big = d.path + "/big.toml";
	write_file(big, "");
	REQUIRE(::truncate(big.c_str(), 3 << 20) == 0);
	const struct {
		std::string target;
		const char *says;
	} bad[] = {{dir, "is a directory, not a regular file"},
		   {fifo, "is a FIFO, not a regular file"},
		   {sock, "is a socket, not a regular file"},
		   {"/dev/zero", "is a character device, not a regular file"},
		   {big, "over the 1 MiB limit"}};
	for (const auto &b : bad) {
		INFO("config -> " << b.target);
		link_to(s.opts.config_path, b.target);
		auto r = reload_policy(s);
		REQUIRE_FALSE(r.ok());
		const std::string m = r.error().message();
		CHECK(m.find(s.opts.config_path) != std::string::npos);
		CHECK(m.find(b.says) != std::string::npos);
		CHECK(m.find('\n') == std::string::npos);
		// The old policy, the same object, and its map in the queues' table.
		CHECK(current_policy(s) == good);
		CHECK(s.generation == 1);
		CHECK(s.table.handle_of(KVFDP_CLASS_SHORT) == 6);
	}
	// A directory where the config is expected is not "missing": it never falls back to
	// the built-in map, even though a missing file would.
	(void)::unlink(s.opts.config_path.c_str());
	REQUIRE(::mkdir(s.opts.config_path.c_str(), 0755) == 0);
	CHECK_FALSE(reload_policy(s).ok());
	CHECK(current_policy(s) == good);
	// A good file again: the next generation.
	REQUIRE(::rmdir(s.opts.config_path.c_str()) == 0);
	write_file(s.opts.config_path, "[placement]\nshort = 7\n");
	auto again = reload_policy(s);
	REQUIRE(again.ok());
	CHECK(*again == 2);
	CHECK(s.table.handle_of(KVFDP_CLASS_SHORT) == 7);
}

TEST_CASE("reload: a missing default config keeps the old policy; at start it is the built-in map")
{
	TempDir d;
	State s;
	s.nruh = 8;
	s.opts.config_path = d.path + "/kvfdp.toml";
	s.opts.config_explicit = false;  // the unit's default path, no --config
	const auto builtin = make_policy(placement::PolicyConfig{}, s.nruh);
	REQUIRE(builtin.ok());

	// At start, no file: the built-in map, generation 1 (documented in docs/deploy.md).
	auto start = reload_policy(s);
	REQUIRE_MESSAGE(start.ok(), start.error().message());
	CHECK(*start == 1);
	CHECK(current_policy(s)->handle == builtin->handle);

	write_file(s.opts.config_path, "[placement]\nshort = 6\n");
	REQUIRE(reload_policy(s).ok());
	const auto good = current_policy(s);
	REQUIRE(good->handle[KVFDP_CLASS_SHORT] == 6);
	REQUIRE(good->handle != builtin->handle);

	// Deleted, then a dangling symlink: refused, nothing moves.
	const std::string gone = d.path + "/gone.toml";
	for (const bool dangling : {false, true}) {
		INFO("dangling symlink: " << dangling);
		(void)::unlink(s.opts.config_path.c_str());
		if (dangling)
			link_to(s.opts.config_path, gone);
		auto r = reload_policy(s);
		REQUIRE_FALSE(r.ok());
		const std::string m = r.error().message();
		CHECK(m.find("config " + s.opts.config_path + " is missing") != std::string::npos);
		CHECK(m.find("restore it") != std::string::npos);
		CHECK((m.find("a symlink to " + gone) != std::string::npos) == dangling);
		CHECK(m.find('\n') == std::string::npos);
		CHECK(current_policy(s) == good);
		CHECK(s.generation == 2);
		CHECK(s.table.handle_of(KVFDP_CLASS_SHORT) == 6);
	}

	// What the refusal suggests: an empty file reloads the built-in map.
	(void)::unlink(s.opts.config_path.c_str());
	write_file(s.opts.config_path, "");
	auto empty = reload_policy(s);
	REQUIRE_MESSAGE(empty.ok(), empty.error().message());
	CHECK(*empty == 3);
	CHECK(current_policy(s)->handle == builtin->handle);
}
