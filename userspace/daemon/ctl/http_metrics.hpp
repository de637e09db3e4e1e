// HttpMetricsServer: GET /metrics in the Prometheus text format (kvfdpd --metrics-listen),
// served by one poll() thread of its own, off the data path. Every connection is bounded:
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
#include <thread>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

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

class HttpMetricsServer {
public:
	// Returns the exposition text; called on the server thread for a GET /metrics, at most once
	// per HttpMetricsOptions::reuse (later GETs in the interval get the same text).
	using Render = std::function<std::string()>;

	// Binds and listens now (so a port in use is refused before anything else starts);
	// requests are served after start().
	[[nodiscard]] static Result<std::unique_ptr<HttpMetricsServer>>
	listen(const HttpMetricsOptions &o, Render render);
	~HttpMetricsServer();
	HttpMetricsServer(const HttpMetricsServer &) = delete;
	HttpMetricsServer &operator=(const HttpMetricsServer &) = delete;

	void start();
	void stop();  // closes every connection; idempotent
	[[nodiscard]] uint16_t port() const { return port_; }
	[[nodiscard]] const std::string &address() const { return address_; }

private:
	HttpMetricsServer(HttpMetricsOptions o, UniqueFd listen_fd, UniqueFd wake_fd, uint16_t port,
			  std::string address, Render render);
	void loop();
	std::string render_reused();  // render_(), or its last text while younger than opts_.reuse

	HttpMetricsOptions opts_;
	UniqueFd listen_fd_;
	UniqueFd wake_fd_;
	uint16_t port_;
	std::string address_;
	Render render_;
	std::string last_text_;
	std::chrono::steady_clock::time_point last_at_{};
	bool have_last_ = false;
	std::thread thread_;
};

// The reply to one complete request head (request line and headers): status line, headers
// and, for GET /metrics, render()'s text. Exposed for tests.
[[nodiscard]] std::string http_reply(const std::string &head,
				     const HttpMetricsServer::Render &render);

}  // namespace kvfdp::daemon
