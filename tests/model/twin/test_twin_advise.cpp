// `kvfdp advise --socket` end to end: kvfdpd's State on the FDP SSD model backend, its twin
// fed two writers of different turnover through the queue ring, its control handler behind a
// Unix socket, and the real kvfdp binary asking it. The recommendation meets the target, no
// higher utilisation of the sweep did, and it agrees run for run with a direct sweep of the
// same window (WindowSource) and with the saved window's check command. Without a twin, or
// with an empty window, one line says what to do.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <poll.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/unique_fd.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_files.hpp"
#include "tests/model/twin/two_writers.hpp"
#include "model/sim/window_source.hpp"
#include "kvfdpd/daemon/ctl/backend.hpp"
#include "kvfdpd/daemon/ctl/control_handlers.hpp"
#include "kvfdpd/daemon/ctl/daemon_state.hpp"
#include "model/twin/twin.hpp"

#ifndef KVFDP_BIN
#error "KVFDP_BIN must name the kvfdp binary"
#endif

using namespace kvfdp;
using nlohmann::json;

namespace {

constexpr const char *kSweep = "util=0.70:1.00:0.10";

// kvfdpd's state over a 64 MiB model (1 MiB RUs, 8 handles), its twin at OP 0.07 (memory:
// 0 for none).
void make_state(daemon::State &s, const std::string &dir, uint64_t twin_memory)
{
	daemon::BackendOptions b;
	b.kind = "model";
	b.file = dir + "/model.img";
	b.size = 64ull << 20;
	b.ru_size = 1 << 20;
	b.nruh = 8;
	auto dev = daemon::open_backend(b);
	REQUIRE_MESSAGE(dev.ok(), dev.error().message());
	s.device = std::move(*dev);
	s.info = s.device->info();
	s.nruh = 8;
	auto p = kvfdp::placement::make_policy(kvfdp::placement::PolicyConfig{}, 8);
	REQUIRE(p.ok());
	s.policy = std::make_shared<const kvfdp::placement::Policy>(std::move(*p));
	twin::TwinSettings ts;
	ts.memory_bytes = twin_memory;
	ts.op = 0.07;
	auto t = twin::twin_for(s.info, s.nruh, 0.28, ts);
	REQUIRE_MESSAGE(t.ok(), t.error().message());
	s.twin = std::move(*t);
}

// kvfdpd's control socket at path for `requests` connections, one request line each,
// answered by the real handler.
class Server {
public:
	Server(daemon::State &s, const std::string &path, int requests) : s_(s)
	{
		fd_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
		REQUIRE(fd_.get() >= 0);
		sockaddr_un a{};
		a.sun_family = AF_UNIX;
		REQUIRE(path.size() < sizeof a.sun_path);
		path.copy(a.sun_path, path.size());
		REQUIRE(::bind(fd_.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
		REQUIRE(::listen(fd_.get(), 4) == 0);
		thread_ = std::thread([this, requests] { serve(requests); });
	}
	~Server() { thread_.join(); }

private:
	void serve(int requests)
	{
		for (int i = 0; i < requests; i++) {
			pollfd p{fd_.get(), POLLIN, 0};
			if (::poll(&p, 1, 60000) != 1)  // a guard against a client that never came
				return;
			UniqueFd c(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
			std::string line;
			char buf[4096];
			ssize_t n;
			while (line.find('\n') == std::string::npos &&
			       (n = ::read(c.get(), buf, sizeof buf)) > 0)
				line.append(buf, static_cast<size_t>(n));
			std::string reply =
				daemon::handle_control_line(s_, line.substr(0, line.find('\n')));
			if (reply.empty() || reply.back() != '\n')
				reply += '\n';
			for (size_t off = 0; off < reply.size();) {
				n = ::send(c.get(), reply.data() + off, reply.size() - off,
					   MSG_NOSIGNAL);
				if (n <= 0)
					break;
				off += static_cast<size_t>(n);
			}
		}
	}

	daemon::State &s_;
	UniqueFd fd_;
	std::thread thread_;
};

test::CommandRun kvfdp_cli(const test::TempDir &dir, const std::string &args)
{
	return test::run_command(dir, std::string(KVFDP_BIN) + " " + args);
}

// The run of j's "runs" at util and placement.
const json *run_at(const json &j, double util, const std::string &placement)
{
	for (const json &r : j["runs"])
		if (std::abs(r["util"].get<double>() - util) < 1e-9 && r["placement"] == placement)
			return &r;
	return nullptr;
}

}  // namespace

TEST_CASE(
	"twin advise: kvfdp advise --socket recommends from kvfdpd's twin window, as a direct sweep does")
{
	test::TempDir dir;
	daemon::State s;
	make_state(s, dir.path, twin::kDefaultMemoryBytes);
	REQUIRE(s.twin);
	const uint64_t pushed = test::push_two_writers(*s.twin);
	const proto::TwinWindow w = s.twin->window();
	CHECK(w.rate == 1);
	CHECK(w.total == pushed);  // at rate 1 each 128 KiB write is one record of the window
	CHECK(w.records.size() == pushed);
	CHECK(w.model.logical_bytes == s.twin->plan().model.logical_bytes);

	const std::string sock = dir.path + "/kvfdpd.sock";
	json got;
	{
		Server srv(s, sock, 1);
		const auto r =
			kvfdp_cli(dir, "advise --socket " + sock +
					       " --save-window win.json -o json --sweep " + kSweep);
		REQUIRE_MESSAGE(r.rc == 0, r.err);
		got = json::parse(r.out);
	}
	MESSAGE(got.dump());
	CHECK(got["workload"] == "kvfdpd's twin window");
	CHECK(got["source"]["records"] == pushed);
	CHECK(got["source"]["rate"] == 1.0);
	const json &rec = got["recommendation"];
	REQUIRE(rec.is_object());
	const double target = got["target"].get<double>();
	CHECK(rec["waf"].get<double>() <= target);
	for (const json &r : got["runs"])  // no higher utilisation met the target
		if (r["util"].get<double>() > rec["util"].get<double>() + 1e-9)
			CHECK_MESSAGE(!r["meets"].get<bool>(), r.dump());
	// The choice matters here: without placement the full drive misses the target.
	const json *none_full = run_at(got, 1.0, "none");
	REQUIRE(none_full);
	CHECK(none_full->at("waf").get<double>() > target);

	// A direct sweep of the same window agrees run for run.
	sim::WindowSource src(w, "", "1.05");
	sim::AdviseOptions o;
	o.sweep = *sim::parse_advise_sweep(kSweep);
	auto direct = sim::advise(src, o);
	REQUIRE(direct);
	REQUIRE(direct->pick);
	CHECK(got["runs"].size() == direct->cells.size());
	for (const sim::AdviseCell &c : direct->cells) {
		const json *r =
			run_at(got, c.setting.util, sim::placement_name(c.setting.placement));
		REQUIRE(r);
		CHECK(r->at("host_bytes") == c.run.host_bytes);
		CHECK(r->at("media_bytes") == c.run.media_bytes);
	}
	const sim::AdviseCell &pick = direct->cells[*direct->pick];
	CHECK(rec["placement"] == sim::placement_name(pick.setting.placement));
	CHECK(std::abs(rec["util"].get<double>() - pick.setting.util) < 1e-9);

	// The check line reruns the recommendation from the saved window: the same bytes.
	REQUIRE(rec.contains("check"));
	const std::string check = rec["check"].get<std::string>();
	CHECK(check.rfind("kvfdp advise --window win.json ", 0) == 0);
	const auto again = kvfdp_cli(dir, check.substr(std::string("kvfdp ").size()) + " -o json");
	REQUIRE_MESSAGE(again.rc == 0, again.err);
	const json a = json::parse(again.out);
	CHECK(a["runs"].size() == 1);
	CHECK(a["recommendation"]["host_bytes"] == rec["host_bytes"]);
	CHECK(a["recommendation"]["media_bytes"] == rec["media_bytes"]);
	CHECK(a["source"]["file"] == "win.json");

	// The table says where the runs came from.
	const auto table =
		kvfdp_cli(dir, std::string("advise --window win.json --sweep ") + kSweep);
	REQUIRE_MESSAGE(table.rc == 0, table.err);
	MESSAGE(table.out);
	CHECK(table.out.find("from kvfdpd's twin: its sampled window of " + std::to_string(pushed) +
			     " records") != std::string::npos);
	CHECK(table.out.find("rate 1 of the LBA space") != std::string::npos);
	CHECK(table.out.find("recommend: utilisation") != std::string::npos);
}

TEST_CASE(
	"twin advise: no twin, an empty window and a bad option each get one line that says what to do")
{
	test::TempDir dir;
	const std::string sock = dir.path + "/kvfdpd.sock";
	{
		daemon::State s;
		make_state(s, dir.path, 0);
		REQUIRE(!s.twin);
		Server srv(s, sock, 1);
		const auto r = kvfdp_cli(dir, "advise --socket " + sock);
		CHECK(r.rc == 1);
		CHECK(r.out.empty());
		CHECK(test::line_count(r.err) == 1);
		CHECK_MESSAGE(r.err.find("runs no WAF twin") != std::string::npos, r.err);
		CHECK(r.err.find("kvfdp advise --blk-trace FILE") != std::string::npos);
	}
	::unlink(sock.c_str());
	{
		daemon::State s;
		make_state(s, dir.path, twin::kDefaultMemoryBytes);
		REQUIRE(s.twin);
		Server srv(s, sock, 1);
		const auto r = kvfdp_cli(dir, "advise --twin --socket " + sock);
		CHECK(r.rc == 1);
		CHECK(test::line_count(r.err) == 1);
		CHECK_MESSAGE(r.err.find("the twin's window is empty") != std::string::npos, r.err);
	}
	::unlink(sock.c_str());
	const auto gone = kvfdp_cli(dir, "advise --twin --socket " + sock);
	CHECK(gone.rc == 3);
	CHECK(test::line_count(gone.err) == 1);
	const auto cap = kvfdp_cli(dir, "advise --twin --capacity 1GiB --socket " + sock);
	CHECK(cap.rc == 2);
	CHECK(cap.err.find("--capacity: the twin's window brings its own") != std::string::npos);
	const auto hint = kvfdp_cli(dir, "advise --window none.json --placement hint");
	CHECK(hint.rc == 2);
	CHECK(hint.err.find("--placement: 'hint'") != std::string::npos);
	const auto missing = kvfdp_cli(dir, "advise --window none.json");
	CHECK(missing.rc == 2);
	CHECK(missing.err.find("--window: cannot read 'none.json'") != std::string::npos);
}
