// ControlServer's caps with real clients of other uids (the test takes uids 65534 and 65533
// with seteuid, so it needs root): one uid's idle connections cannot lock out root or other
// users, the slots kept for root stay free for root, and idle connections are closed. And who
// may send what: a non-root client outside the admin group is refused stop and reload, in one
// line naming the group, while status still works; in the group (primary or supplementary),
// or as root, it is served.
#include <doctest/doctest.h>

#include <grp.h>
#include <unistd.h>
#include <vector>

#include "tests/kvfdpd/control_client_util.hpp"
#include "tests/support/skip.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using namespace kvfdp::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// Connections made while it lives carry uid as their peer credential.
struct AsUid {
	explicit AsUid(uid_t uid) { REQUIRE(::seteuid(uid) == 0); }
	~AsUid() { (void)!::seteuid(0); }
};

// Connections made while it lives carry uid, gid and groups as their peer credentials
// (SO_PEERCRED, SO_PEERGROUPS).
struct AsUser {
	std::vector<gid_t> saved;
	AsUser(uid_t uid, gid_t gid, const std::vector<gid_t> &groups)
	{
		const int n = ::getgroups(0, nullptr);
		REQUIRE(n >= 0);
		saved.resize(static_cast<size_t>(n));
		REQUIRE(::getgroups(n, saved.data()) == n);
		REQUIRE(::setgroups(groups.size(), groups.data()) == 0);
		REQUIRE(::setegid(gid) == 0);
		REQUIRE(::seteuid(uid) == 0);
	}
	~AsUser()
	{
		(void)!::seteuid(0);
		(void)!::setegid(0);
		(void)!::setgroups(saved.size(), saved.data());
	}
};

// A refused connection: its one line, then the close.
std::string refusal(int fd)
{
	Reader r{fd, {}};
	auto line = r.line();
	REQUIRE(line.has_value());
	json j = json::parse(*line);
	CHECK(j["ok"] == false);
	CHECK(r.closed_without_more());
	return j.value("error", std::string());
}

}  // namespace

TEST_CASE(
	"control socket: another uid holding its connections cannot lock out root, and its idle ones close")
{
	require_root("connecting as other uids (seteuid)");
	ControlLimits l;
	l.max_connections = 8;
	l.reserved_for_root = 2;
	l.max_per_uid = 4;
	l.idle_timeout = 60s;
	TestServer ts(l);
	REQUIRE(::chmod(ts.dir.path.c_str(), 0755) == 0);
	REQUIRE(::chmod(ts.path.c_str(), 0666) ==
		0);  // the test's socket; kvfdpd's is root:kvfdp 0660

	std::vector<UniqueFd> nobody;
	{
		AsUid as(65534);
		for (int i = 0; i < 4; i++) {
			nobody.push_back(connect_to(ts.path));
			CHECK(ask(nobody.back().get(), "{\"cmd\":\"idle\"}")["ok"] == true);
		}
		UniqueFd fifth = connect_to(ts.path);
		CHECK(refusal(fifth.get())
			      .rfind("uid 65534 has 4 connections open to kvfdpd, the most one user may hold: close idle ones",
				     0) == 0);
	}
	std::vector<UniqueFd> other;
	{
		AsUid as(65533);  // a second user fills the shared slots
		for (int i = 0; i < 2; i++) {
			other.push_back(connect_to(ts.path));
			CHECK(ask(other.back().get(), "{\"cmd\":\"idle\"}")["ok"] == true);
		}
		UniqueFd more = connect_to(ts.path);
		CHECK(refusal(more.get())
			      .find("6 connections open; the other 2 are kept for root") !=
		      std::string::npos);
	}
	// Root still gets in, twice; a third root connection meets the total limit.
	UniqueFd root1 = connect_to(ts.path);
	CHECK(ask(root1.get(), "{\"cmd\":\"status\"}")["data"]["cmd"] == "status");
	UniqueFd root2 = connect_to(ts.path);
	CHECK(ask(root2.get(), "{\"cmd\":\"status\"}")["data"]["cmd"] == "status");
	UniqueFd root3 = connect_to(ts.path);
	CHECK(refusal(root3.get()).find("8 connections open, its limit") != std::string::npos);

	// Time passes: every idle connection is closed by the server.
	for (auto *group : {&nobody, &other})
		for (UniqueFd &fd : *group) {
			REQUIRE(ts.advance_until_closed(fd.get(), 120s));
			Reader r{fd.get(), {}};
			CHECK(r.closed_without_more());
		}
	REQUIRE(ts.advance_until_closed(root1.get(), 120s));
	// The user whose connections were closed is served again.
	AsUid as(65534);
	UniqueFd again = connect_to(ts.path);
	CHECK(ask(again.get(), "{\"cmd\":\"again\"}")["data"]["cmd"] == "again");
}

TEST_CASE(
	"control socket: stop and reload need root or the admin group, status does not, and a refusal changes nothing")
{
	require_root("connecting as another uid with chosen groups (seteuid, setgroups)");
	constexpr gid_t kAdmin = 64999;  // stands for kvfdp-admin (the host may have no such group)
	ControlLimits l;
	l.admin_gid = kAdmin;
	TestServer ts(l);
	REQUIRE(::chmod(ts.dir.path.c_str(), 0755) == 0);
	REQUIRE(::chmod(ts.path.c_str(), 0666) == 0);
	const std::string refused =
		" needs root or membership of group kvfdp-admin (usermod -aG kvfdp-admin USER, then log "
		"in again); nothing was changed";
	{
		AsUser as(65534, 65534, {65534, 64998});  // a kvfdp member, not an admin
		UniqueFd fd = connect_to(ts.path);
		CHECK(ask(fd.get(), R"({"cmd":"status"})")["data"]["cmd"] == "status");
		const unsigned before = ts.served->load();
		for (const char *req : {R"({"cmd":"stop"})", R"({"cmd":"stop","force":true})",
					R"({"cmd":"reload"})"}) {
			const json r = ask(fd.get(), req);
			CHECK(r["ok"] == false);
			const std::string cmd = json::parse(req)["cmd"];
			CHECK(r.value("error", std::string()) == cmd + refused);
		}
		CHECK(ts.served->load() == before);  // the handler never saw them
		// The connection stays usable: the read-only requests are still served.
		CHECK(ask(fd.get(), R"({"cmd":"status"})")["data"]["cmd"] == "status");
		CHECK(ask(fd.get(), R"({"cmd":"policy"})")["data"]["cmd"] == "policy");
	}
	{
		AsUser as(65534, 65534, {65534, kAdmin});  // the admin group as a supplementary one
		UniqueFd fd = connect_to(ts.path);
		CHECK(ask(fd.get(), R"({"cmd":"stop","force":true})")["data"]["cmd"] == "stop");
	}
	{
		AsUser as(65533, kAdmin, {});  // as the primary group
		UniqueFd fd = connect_to(ts.path);
		CHECK(ask(fd.get(), R"({"cmd":"reload"})")["data"]["cmd"] == "reload");
	}
	UniqueFd root = connect_to(ts.path);
	CHECK(ask(root.get(), R"({"cmd":"stop"})")["data"]["cmd"] == "stop");
}
