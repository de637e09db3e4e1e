// The /metrics HTTP server: an EventSource over the listening socket and the open
// connections, each with a fixed deadline.
#include "kvfdpd/daemon/ctl/http_metrics.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <map>

namespace kvfdp::daemon {

namespace {

using Clock = std::chrono::steady_clock;

Error listen_error(const std::string &text, const std::string &why)
{
	return guidance_error(
		std::errc::invalid_argument,
		"--metrics-listen '" + text + "': " + why +
			"; use PORT (loopback), HOST:PORT or [IPV6]:PORT, e.g. 127.0.0.1:9477");
}

struct Conn {
	UniqueFd fd;
	Clock::time_point deadline;
	std::string in;   // the request as received so far (at most max_request_bytes)
	std::string out;  // the reply; empty while the request is being received
	size_t sent = 0;
	bool replying() const { return !out.empty(); }
};

std::string response(int code, const char *reason, const std::string &type, const std::string &body,
		     bool with_body, const char *extra = "")
{
	std::string r = "HTTP/1.1 " + std::to_string(code) + " " + reason +
			"\r\nContent-Type: " + type +
			"\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
			"Connection: close\r\n\r\n";
	if (with_body)
		r += body;
	return r;
}

std::string plain(int code, const char *reason, const std::string &body, const char *extra = "")
{
	return response(code, reason, "text/plain; charset=utf-8", body, true, extra);
}

// Where the request head ends ("\r\n\r\n", or "\n\n" from lenient clients), or npos.
size_t head_end(const std::string &in)
{
	size_t a = in.find("\r\n\r\n");
	size_t b = in.find("\n\n");
	return std::min(a, b);
}

}  // namespace

Result<ListenAddress> parse_listen_address(const std::string &text)
{
	std::string host = "127.0.0.1";
	std::string port_text = text;
	bool v6 = false;
	if (!text.empty() && text.front() == '[') {
		const size_t close = text.find(']');
		if (close == std::string::npos || close + 1 >= text.size() ||
		    text[close + 1] != ':')
			return listen_error(text, "an IPv6 address is written [ADDRESS]:PORT");
		host = text.substr(1, close - 1);
		port_text = text.substr(close + 2);
		v6 = true;
	} else if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
		host = text.substr(0, colon);
		port_text = text.substr(colon + 1);
	}
	unsigned port = 0;
	auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
	if (port_text.empty() || ec != std::errc() || p != port_text.data() + port_text.size() ||
	    port > 65535)
		return listen_error(text, "the port must be a number 0..65535");
	ListenAddress a;
	if (v6) {
		auto *s6 = reinterpret_cast<sockaddr_in6 *>(&a.addr);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(static_cast<uint16_t>(port));
		if (inet_pton(AF_INET6, host.c_str(), &s6->sin6_addr) != 1)
			return listen_error(text, "'" + host + "' is not an IPv6 address");
		a.len = sizeof(sockaddr_in6);
		a.text = "[" + host + "]:" + std::to_string(port);
	} else {
		if (host == "localhost")
			host = "127.0.0.1";
		auto *s4 = reinterpret_cast<sockaddr_in *>(&a.addr);
		s4->sin_family = AF_INET;
		s4->sin_port = htons(static_cast<uint16_t>(port));
		if (inet_pton(AF_INET, host.c_str(), &s4->sin_addr) != 1)
			return listen_error(
				text,
				"'" + host + "' is not an IPv4 address (names are not resolved)");
		a.len = sizeof(sockaddr_in);
		a.text = host + ":" + std::to_string(port);
	}
	return a;
}

std::string http_reply(const std::string &head, const HttpMetricsServer::Render &render)
{
	const size_t eol = head.find_first_of("\r\n");
	const std::string line = head.substr(0, eol);
	// METHOD SP TARGET SP HTTP/1.x, nothing else on the line.
	const size_t sp1 = line.find(' ');
	const size_t sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
	if (sp1 == std::string::npos || sp2 == std::string::npos ||
	    line.find(' ', sp2 + 1) != std::string::npos ||
	    (line.compare(sp2 + 1, std::string::npos, "HTTP/1.0") != 0 &&
	     line.compare(sp2 + 1, std::string::npos, "HTTP/1.1") != 0))
		return plain(400, "Bad Request",
			     "not an HTTP/1.x request line; try GET /metrics\n");
	const std::string method = line.substr(0, sp1);
	std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
	target = target.substr(0, target.find('?'));
	for (char c : target)
		if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
			return plain(400, "Bad Request", "bad request target\n");
	const bool head_only = method == "HEAD";
	if (method != "GET" && !head_only)
		return plain(405, "Method Not Allowed", "only GET and HEAD\n",
			     "Allow: GET, HEAD\r\n");
	if (target == "/metrics") {
		std::string text;
		try {
			text = render();
		} catch (const std::exception &e) {
			return plain(500, "Internal Server Error",
				     std::string("rendering the metrics failed: ") + e.what() +
					     "\n");
		}
		return response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", text,
				!head_only);
	}
	if (target == "/")
		return response(200, "OK", "text/plain; charset=utf-8",
				"kvfdpd: Prometheus metrics at /metrics\n", !head_only);
	return plain(404, "Not Found", "not found; the metrics are at /metrics\n");
}

namespace {

// Reads what the client sent; once the head is complete (or over max_request_bytes) the
// reply is set, to be sent when the socket is writable. False: the connection goes.
bool receive(Conn &c, const HttpMetricsOptions &o, const HttpMetricsServer::Render &render)
{
	char buf[4096];
	const ssize_t r =
		::recv(c.fd.get(), buf, std::min(sizeof buf, o.max_request_bytes - c.in.size()),
		       MSG_DONTWAIT);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
		return false;
	if (r > 0)
		c.in.append(buf, static_cast<size_t>(r));
	const size_t end = head_end(c.in);
	if (end != std::string::npos)
		c.out = http_reply(c.in.substr(0, end), render);
	else if (c.in.size() >= o.max_request_bytes)
		c.out = plain(431, "Request Header Fields Too Large",
			      "request over " + std::to_string(o.max_request_bytes) + " bytes\n");
	if (c.replying())
		std::string().swap(c.in);
	return true;
}

// Sends what the socket takes of the reply. False: the connection goes (a failed send, or
// the whole reply sent and the write side shut).
bool send_some(Conn &c)
{
	const ssize_t w = ::send(c.fd.get(), c.out.data() + c.sent, c.out.size() - c.sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w < 0 && errno != EAGAIN && errno != EINTR)
		return false;
	if (w > 0)
		c.sent += static_cast<size_t>(w);
	if (c.sent == c.out.size()) {
		::shutdown(c.fd.get(), SHUT_WR);
		return false;
	}
	return true;
}

}  // namespace

// One HttpMetricsServer's state on the loop: the listening socket, the connections (by fd)
// and the last render.
class HttpSource final : public EventSource {
public:
	HttpSource(HttpMetricsOptions o, UniqueFd listen_fd, HttpMetricsServer::Render render)
	    : opts_(std::move(o)), listen_fd_(std::move(listen_fd)), render_(std::move(render))
	{
		opts_.max_connections = std::max<size_t>(opts_.max_connections, 1);
		opts_.max_request_bytes = std::max<size_t>(opts_.max_request_bytes, 64);
	}

protected:
	void on_attach(EventLoop &loop) override
	{
		(void)loop.watch(listen_fd_.get(), EPOLLIN, *this);
	}
	void on_ready(int fd, uint32_t events) override;
	std::chrono::milliseconds on_tick() override;
	void on_detach() override { conns_.clear(); }

private:
	using ConnMap = std::map<int, Conn>;

	void accept_all();
	// Makes room for one more: the oldest connection still sending its request goes. False
	// when every connection is being answered.
	bool evict_one();
	void drop(ConnMap::iterator it)
	{
		loop()->unwatch(it->first);
		conns_.erase(it);
	}
	std::string render_reused();  // render_(), or its last text while younger than opts_.reuse

	HttpMetricsOptions opts_;
	UniqueFd listen_fd_;
	HttpMetricsServer::Render render_;
	const HttpMetricsServer::Render reused_ = [this] { return render_reused(); };
	std::string last_text_;
	Clock::time_point last_at_{};
	bool have_last_ = false;
	ConnMap conns_;
};

std::string HttpSource::render_reused()
{
	const Clock::time_point now = Clock::now();
	if (!have_last_ || opts_.reuse.count() <= 0 || now - last_at_ >= opts_.reuse) {
		last_text_ =
			render_();  // a throw leaves the last text as it was (the GET gets 500)
		last_at_ = now;
		have_last_ = true;
	}
	return last_text_;
}

// A connection's socket is ready: receive its request (and answer at once), or send more of
// the reply; it goes when done or failed.
void HttpSource::on_ready(int fd, uint32_t /*events: receive and send tell*/)
{
	if (fd == listen_fd_.get()) {
		accept_all();
		return;
	}
	auto it = conns_.find(fd);
	if (it == conns_.end())
		return;
	Conn &c = it->second;
	const bool was_replying = c.replying();
	bool keep = was_replying || receive(c, opts_, reused_);
	if (keep && c.replying())
		keep = send_some(c);
	if (!keep)
		drop(it);
	else if (!was_replying && c.replying())
		loop()->rewatch(fd, EPOLLOUT);
}

// Expired connections go, whatever they were doing: reset (SO_LINGER 0), so that no unsent
// reply stays queued in the kernel for a client that does not read. The wait: until the
// nearest deadline.
std::chrono::milliseconds HttpSource::on_tick()
{
	const auto now = Clock::now();
	auto next = now + std::chrono::hours(1);
	for (auto it = conns_.begin(); it != conns_.end();) {
		if (it->second.deadline > now) {
			next = std::min(next, it->second.deadline);
			++it;
			continue;
		}
		const linger l{1, 0};
		(void)::setsockopt(it->first, SOL_SOCKET, SO_LINGER, &l, sizeof l);
		loop()->unwatch(it->first);
		it = conns_.erase(it);
	}
	return std::chrono::duration_cast<std::chrono::milliseconds>(next - now) +
	       std::chrono::milliseconds(1);
}

bool HttpSource::evict_one()
{
	auto oldest = conns_.end();
	for (auto it = conns_.begin(); it != conns_.end(); ++it)
		if (!it->second.replying() &&
		    (oldest == conns_.end() || it->second.deadline < oldest->second.deadline))
			oldest = it;
	if (oldest == conns_.end())
		return false;
	drop(oldest);
	return true;
}

// Accepts every pending connection. Full: the oldest connection still sending its request
// makes room; when all are being answered, the new one gets a short 503 (best effort) instead.
void HttpSource::accept_all()
{
	for (;;) {
		UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr,
				      SOCK_NONBLOCK | SOCK_CLOEXEC));
		if (!fd)
			break;
		if (conns_.size() >= opts_.max_connections && !evict_one()) {
			const std::string r =
				plain(503, "Service Unavailable", "too many connections\n");
			(void)!::send(fd.get(), r.data(), r.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
			continue;
		}
		const int n = fd.get();
		if (!loop()->watch(n, EPOLLIN, *this))
			continue;
		Conn &c = conns_[n];
		c.fd = std::move(fd);
		c.deadline = Clock::now() + opts_.timeout;
	}
}

Result<std::unique_ptr<HttpMetricsServer>> HttpMetricsServer::listen(const HttpMetricsOptions &o,
								     Render render)
{
	auto a = parse_listen_address(o.listen);
	if (!a)
		return std::move(a).error();
	UniqueFd fd(::socket(a->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (!fd)
		return errno_error(errno, "--metrics-listen " + a->text + ": socket");
	const int one = 1;
	// Rebinding while old connections linger in TIME_WAIT (a restart); a listening socket
	// still refuses the bind on Linux.
	(void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (::bind(fd.get(), reinterpret_cast<const sockaddr *>(&a->addr), a->len) != 0) {
		const int e = errno;
		if (e == EADDRINUSE)
			return guidance_errno(
				e,
				"--metrics-listen " + a->text +
					": address already in use (another kvfdpd or exporter?); choose a free port");
		if (e == EADDRNOTAVAIL)
			return guidance_errno(
				e,
				"--metrics-listen " + a->text +
					": no interface has this address; use 127.0.0.1 or an address of this host");
		return errno_error(e, "--metrics-listen " + a->text + ": bind");
	}
	if (::listen(fd.get(), 128) != 0)
		return errno_error(errno, "--metrics-listen " + a->text + ": listen");
	sockaddr_storage bound{};
	socklen_t blen = sizeof bound;
	uint16_t port = 0;
	if (::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&bound), &blen) == 0)
		port = ntohs(bound.ss_family == AF_INET6
				     ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
				     : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
	std::string text = a->text.substr(0, a->text.rfind(':') + 1) + std::to_string(port);
	return std::unique_ptr<HttpMetricsServer>(new HttpMetricsServer(
		port, std::move(text),
		std::make_unique<HttpSource>(o, std::move(fd), std::move(render))));
}

HttpMetricsServer::HttpMetricsServer(uint16_t port, std::string address,
				     std::unique_ptr<HttpSource> source)
    : port_(port), address_(std::move(address)), source_(std::move(source))
{
}

HttpMetricsServer::~HttpMetricsServer()
{
	stop();
}

void HttpMetricsServer::start(EventLoop &loop)
{
	loop.attach(*source_);
}

void HttpMetricsServer::stop()
{
	if (EventLoop *loop = source_->loop())
		loop->detach(*source_);
}

}  // namespace kvfdp::daemon
