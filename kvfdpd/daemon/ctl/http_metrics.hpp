// HttpMetricsServer: GET /metrics in the Prometheus text format (kvfdpd --metrics-listen),
// served on kvfdpd's control-plane event loop (event_loop.hpp, shared with the control socket),
// off the data path. Every connection is bounded:
// its request may be at most max_request_bytes, it must arrive and its reply be taken within
// timeout, and at most max_connections are open at once (a new one evicts the oldest that is
// still sending its request, else is refused with 503). One request per connection
// (Connection: close), so a malformed or slow client costs one slot for one timeout at most.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "kvfdpd/daemon/ctl/event_loop.hpp"

namespace kvfdp::daemon {

struct HttpMetricsOptions {
	std::string listen;                        // HOST:PORT, [V6]:PORT, or PORT (127.0.0.1:PORT)
	size_t max_connections = 128;              // 100 concurrent scrapers fit
	size_t max_request_bytes = 8192;           // request line and headers; a body is not read
	std::chrono::milliseconds timeout{10000};  // to receive the request and send the reply
	// A render younger than this answers further GETs: however many scrapers there are, the
	// device is asked for RUH Status and FDP statistics at most once per interval (0: every GET).
	std::chrono::milliseconds reuse{1000};
};

// A parsed listen address. A bare port means loopback (127.0.0.1); any other interface must
// be named ("0.0.0.0:9477", "[::]:9477").
struct ListenAddress {
	sockaddr_storage addr{};
	socklen_t len = 0;
	std::string text;  // as given, normalised: "127.0.0.1:9477", "[::1]:9477"
};
[[nodiscard]] Result<ListenAddress> parse_listen_address(const std::string &text);

class HttpSource;  // http_metrics.cpp: the connections, on the loop

class HttpMetricsServer {
public:
	// Returns the exposition text; called on the loop's thread for a GET /metrics, at most
	// once per HttpMetricsOptions::reuse (later GETs in the interval get the same text).
	using Render = std::function<std::string()>;

	// Binds and listens now (so a port in use is refused before anything else starts);
	// requests are served after start().
	[[nodiscard]] static Result<std::unique_ptr<HttpMetricsServer>>
	listen(const HttpMetricsOptions &o, Render render);
	~HttpMetricsServer();  // stop()
	HttpMetricsServer(const HttpMetricsServer &) = delete;
	HttpMetricsServer &operator=(const HttpMetricsServer &) = delete;

	// Serves on loop (from its next turn, or once it starts).
	void start(EventLoop &loop);
	void stop();  // off the loop, every connection closed; idempotent
	[[nodiscard]] uint16_t port() const { return port_; }
	[[nodiscard]] const std::string &address() const { return address_; }

private:
	HttpMetricsServer(uint16_t port, std::string address, std::unique_ptr<HttpSource> source);

	uint16_t port_;
	std::string address_;
	std::unique_ptr<HttpSource> source_;
};

// The reply to one complete request head (request line and headers): status line, headers
// and, for GET /metrics, render()'s text. Exposed for tests.
[[nodiscard]] std::string http_reply(const std::string &head,
				     const HttpMetricsServer::Render &render);

}  // namespace kvfdp::daemon
