// kvfdpd's GET /metrics server over real loopback sockets: replies, a garbage request, an
// oversize one, a client that never finishes its request, the connection cap, concurrent
// scrapes, a port in use; and kvfdpd's exposition of a State on the FDP SSD model, scraped.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "common/unique_fd.hpp"
#include "kvfdpd/daemon/ctl/backend.hpp"
#include "kvfdpd/daemon/ctl/daemon_metrics.hpp"
#include "kvfdpd/daemon/ctl/http_metrics.hpp"
#include "kvfdpd/daemon/learned.hpp"
#include "proto/metrics.hpp"
#include "tests/kvfdpd/http_client_util.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using namespace kvfdp::test::http;

namespace {

const char *kText = "# HELP kvfdp_x x\n# TYPE kvfdp_x gauge\nkvfdp_x 1\n";

// The loop every server of these tests is served on, as kvfdpd's are on its one.
EventLoop &test_loop()
{
	static const std::unique_ptr<EventLoop> loop = [] {
		auto l = EventLoop::create();
		if (!l)
			throw std::runtime_error(l.error().message());
		(*l)->start();
		return std::move(*l);
	}();
	return *loop;
}

std::unique_ptr<HttpMetricsServer> serve(
	HttpMetricsOptions o, HttpMetricsServer::Render r = [] { return std::string(kText); })
{
	if (o.listen.empty())
		o.listen = "127.0.0.1:0";
	auto s = HttpMetricsServer::listen(o, std::move(r));
	REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message()));
	(*s)->start(test_loop());
	return std::move(*s);
}

}  // namespace

TEST_CASE("http metrics: listen addresses: a bare port is loopback; bad ones say how to write one")
{
	auto a = parse_listen_address("9477");
	REQUIRE(a.ok());
	CHECK(a->text == "127.0.0.1:9477");
	CHECK(parse_listen_address("0.0.0.0:80")->text == "0.0.0.0:80");
	CHECK(parse_listen_address("[::1]:9477")->text == "[::1]:9477");
	CHECK(parse_listen_address("localhost:1")->text == "127.0.0.1:1");
	for (const char *bad :
	     {"", "host", "1.2.3.4:99999", "example.org:80", "[::1]9477", "[zz]:1", "1.2.3.4:"}) {
		auto r = parse_listen_address(bad);
		CHECK_MESSAGE(!r.ok(), bad);
		if (!r.ok()) {
			CHECK(r.error().message().find("--metrics-listen") != std::string::npos);
			CHECK(r.error().message().find('\n') == std::string::npos);
		}
	}
}

TEST_CASE("http metrics: GET /metrics, HEAD, other paths and methods, garbage")
{
	auto s = serve({});
	const uint16_t port = s->port();
	REQUIRE(port != 0);
	std::string r = ask(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
	CHECK(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") !=
	      std::string::npos);
	CHECK(r.find("Content-Length: " + std::to_string(std::string(kText).size()) + "\r\n") !=
	      std::string::npos);
	CHECK(body_of(r) == kText);
	CHECK(body_of(ask(port, "GET /metrics?x=1 HTTP/1.0\n\n")) == kText);
	r = ask(port, "HEAD /metrics HTTP/1.1\r\n\r\n");
	CHECK(r.rfind("HTTP/1.1 200 OK", 0) == 0);
	CHECK(body_of(r).empty());
	CHECK(ask(port, "GET /nope HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 ", 0) == 0);
	r = ask(port, "POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
	CHECK(r.rfind("HTTP/1.1 405 ", 0) == 0);
	CHECK(r.find("Allow: GET, HEAD\r\n") != std::string::npos);
	for (std::string g :
	     {std::string("\x00\x01\x02\xff garbage\r\n\r\n", 16), std::string("GET\r\n\r\n"),
	      std::string("GET /metrics\r\n\r\n"), std::string("GET /metrics HTTP/9.9\r\n\r\n"),
	      std::string("GET /me\x01trics HTTP/1.1\r\n\r\n")})
		CHECK_MESSAGE(ask(port, g).rfind("HTTP/1.1 400 ", 0) == 0, g);
	// The server still answers after all that.
	CHECK(body_of(ask(port, "GET /metrics HTTP/1.1\r\n\r\n")) == kText);
}

TEST_CASE("http metrics: an oversize request gets 431 and the connection closes")
{
	HttpMetricsOptions o;
	o.max_request_bytes = 1024;
	auto s = serve(o);
	UniqueFd fd = dial(s->port());
	send_all(fd.get(), "GET /metrics HTTP/1.1\r\nX-Long: " + std::string(64 * 1024, 'a'));
	std::string r = read_all(fd.get());
	CHECK(r.rfind("HTTP/1.1 431 ", 0) == 0);
	CHECK(body_of(ask(s->port(), "GET /metrics HTTP/1.1\r\n\r\n")) == kText);
}

TEST_CASE(
	"http metrics: a client that never finishes its request is closed; others are served meanwhile")
{
	// The deadline is generous: a connection accepted while the server thread renders the
	// large reply below must still be read in time on a loaded CI host (a 300 ms deadline
	// expired there before the complete request was read).
	HttpMetricsOptions o;
	o.timeout = std::chrono::milliseconds(2000);
	auto s = serve(o);
	UniqueFd slow = dial(s->port());
	send_all(slow.get(), "GET /metr");
	// While it dawdles, a complete request is answered (the server does not wait on it).
	CHECK(body_of(ask(s->port(), "GET /metrics HTTP/1.1\r\n\r\n")) == kText);
	// The server closes the slow one: recv sees the end of the stream, not our own time-out.
	CHECK(read_all(slow.get()).empty());
	// A client that reads nothing of a large reply is dropped too.
	std::string big(64 << 20, 'x');
	auto s2 = serve(o, [&big] { return big; });
	UniqueFd lazy = dial(s2->port());
	int small = 4096;
	::setsockopt(lazy.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	send_all(lazy.get(), "GET /metrics HTTP/1.1\r\n\r\n");
	CHECK(body_of(ask(s2->port(), "GET / HTTP/1.1\r\n\r\n")).find("/metrics") !=
	      std::string::npos);
	std::string got = read_all(lazy.get());
	CHECK(got.size() < big.size());  // cut off at the deadline, never completed
}

TEST_CASE("http metrics: at the connection cap the oldest unfinished request makes room")
{
	HttpMetricsOptions o;
	o.max_connections = 4;
	auto s = serve(o);
	std::vector<UniqueFd> idle;
	for (int i = 0; i < 4; i++) {
		idle.push_back(dial(s->port()));
		send_all(idle.back().get(), "GET /");
	}
	// A fifth, complete request is answered...
	CHECK(body_of(ask(s->port(), "GET /metrics HTTP/1.1\r\n\r\n")) == kText);
	// ...after the oldest idle one was closed to make room.
	CHECK(read_all(idle.front().get()).empty());
}

TEST_CASE("http metrics: concurrent scrapes all get the whole text")
{
	std::atomic<int> renders{0};
	HttpMetricsOptions o;
	o.reuse = std::chrono::milliseconds(0);  // a render per GET (the reuse case is below)
	auto s = serve(o, [&renders] {
		renders++;
		return std::string(kText);
	});
	std::atomic<int> good{0};
	std::vector<std::thread> ts;
	for (int t = 0; t < 16; t++)
		ts.emplace_back([&] {
			for (int i = 0; i < 25; i++)
				if (body_of(ask(s->port(), "GET /metrics HTTP/1.1\r\n\r\n")) ==
				    kText)
					good++;
		});
	for (auto &t : ts)
		t.join();
	CHECK(good.load() == 16 * 25);
	CHECK(renders.load() == 16 * 25);
}

TEST_CASE(
	"http metrics: GETs within the reuse interval share one render; a failed render is not kept")
{
	std::atomic<int> renders{0};
	std::atomic<bool> fail_next{true};
	HttpMetricsOptions o;
	o.reuse = std::chrono::hours(
		1);  // longer than the test: every GET after a good render reuses it
	auto s = serve(o, [&] {
		const int n = ++renders;
		if (fail_next.exchange(false))
			throw std::runtime_error("device busy");
		return "kvfdp_render " + std::to_string(n) + "\n";
	});
	CHECK(ask(s->port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 500 ", 0) == 0);
	for (int i = 0; i < 20; i++)
		CHECK(body_of(ask(s->port(), "GET /metrics HTTP/1.1\r\n\r\n")) ==
		      "kvfdp_render 2\n");
	CHECK(renders.load() == 2);
}

TEST_CASE("http metrics: a port in use is refused at listen with one line")
{
	auto s = serve({});
	HttpMetricsOptions o;
	o.listen = "127.0.0.1:" + std::to_string(s->port());
	auto again = HttpMetricsServer::listen(o, [] { return std::string(); });
	REQUIRE(!again.ok());
	const std::string m = again.error().message();
	CHECK(m.find("already in use") != std::string::npos);
	CHECK(m.find("127.0.0.1:" + std::to_string(s->port())) != std::string::npos);
	CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE("http metrics: kvfdpd's exposition of the FDP SSD model, scraped over loopback")
{
	State s;
	BackendOptions b;
	b.kind = "model";
	b.file = "/tmp/kvfdp-test-http-metrics-" + std::to_string(getpid()) + ".img";
	b.size = 64ull << 20;
	b.nruh = 8;
	auto dev = open_backend(b);
	::unlink(b.file.c_str());
	REQUIRE(dev.ok());
	s.device = std::move(*dev);
	s.info = s.device->info();
	auto hs = s.device->handles();
	REQUIRE(hs.ok());
	s.handles = *hs;
	s.nruh = static_cast<uint16_t>(hs->size());
	auto p = kvfdp::placement::make_policy(kvfdp::placement::PolicyConfig{}, s.nruh);
	REQUIRE(p.ok());
	s.policy = std::make_shared<const kvfdp::placement::Policy>(std::move(*p));
	// --placement learned, so the learner's families are part of the scrape too.
	s.learned = LearnedPlacement::create(*s.device, s.nruh, LearnedOptions{});
	REQUIRE(s.learned);
	// Two writers' overwrites (write, then the same LBAs again), so the learner has keys to report.
	for (int round = 0; round < 3; round++)
		for (uint32_t w = 1; w <= 2; w++)
			for (uint64_t lba = 0; lba < 64; lba += 8)
				(void)s.learned->place(w, static_cast<uint8_t>(w + 1),
						       w * 4096 + lba, 8);
	(void)s.learned->recompute_now();
	auto tw = twin::twin_for(s.info, s.nruh, b.op,
				 twin::TwinSettings{});  // the live WAF twin's families
	REQUIRE(tw.ok());
	s.twin = std::move(*tw);
	// The drive's own relocations per handle (its FDP events log), as kvfdpd counts them.
	std::vector<uint16_t> pids;
	for (const nvme::Handle &h : s.handles)
		pids.push_back(h.pid);
	s.drive_relocations =
		std::make_unique<DriveRelocations>(std::move(pids), s.info.nsid, s.info.lba_size);
	auto srv = serve({}, [&s] { return metrics_exposition(s); });
	const std::string r = ask(srv->port(), "GET /metrics HTTP/1.1\r\n\r\n");
	REQUIRE(r.rfind("HTTP/1.1 200 OK", 0) == 0);
	const std::string text = body_of(r);
	for (const char *f :
	     {"kvfdp_class_bytes_total", "kvfdp_handle_bytes_total", "kvfdp_io_errors_total",
	      "kvfdp_stale_tags_total", "kvfdp_start_time_seconds", "kvfdp_ruh_ruamw_bytes",
	      "kvfdp_fdp_hbmw_bytes", "kvfdp_fdp_mbmw_bytes", "kvfdp_fdp_mbe_bytes",
	      "kvfdp_daemon_up", "kvfdp_learned_lifetime_seconds", "kvfdp_twin_waf",
	      "kvfdp_twin_saved_bytes", "kvfdp_drive_handle_relocated_bytes_total"})
		CHECK_MESSAGE(proto::has_family(text, f), f);
	CHECK(text.find("kvfdp_ruh_ruamw_lbas{handle=\"7\",") != std::string::npos);
	// Every handle, 0 before the model's GC has moved anything.
	CHECK(text.find("\nkvfdp_drive_handle_relocated_bytes_total{handle=\"7\"} 0\n") !=
	      std::string::npos);
	CHECK(text.find("\nkvfdp_daemon_up 1\n") != std::string::npos);
	// Each family once.
	size_t n = 0;
	for (size_t at = 0;
	     (at = text.find("# TYPE kvfdp_class_bytes_total ", at)) != std::string::npos; at++)
		n++;
	CHECK(n == 1);
	// For the dashboard test (monitoring/): the scrape as served.
	if (const char *dump = std::getenv("KVFDP_METRICS_DUMP"))
		std::ofstream(dump) << text;
}
