// EventLoop: epoll over the sources' fds and a wake eventfd; the sources' ticks bound the wait.
#include "kvfdpd/daemon/ctl/event_loop.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"

namespace kvfdp::daemon {

namespace {

constexpr std::chrono::milliseconds kLongestWait{60000};

void wake(int fd)
{
	const uint64_t one = 1;
	(void)!::write(fd, &one, sizeof one);
}

}  // namespace

Result<std::unique_ptr<EventLoop>> EventLoop::create()
{
	UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
	if (!ep)
		return errno_error(errno, "epoll_create1");
	UniqueFd wake_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!wake_fd)
		return errno_error(errno, "eventfd");
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.fd = wake_fd.get();
	if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, wake_fd.get(), &ev) < 0)
		return errno_error(errno, "epoll_ctl");
	return std::unique_ptr<EventLoop>(new EventLoop(std::move(ep), std::move(wake_fd)));
}

EventLoop::EventLoop(UniqueFd epoll_fd, UniqueFd wake_fd)
    : epoll_fd_(std::move(epoll_fd)), wake_fd_(std::move(wake_fd))
{
}

EventLoop::~EventLoop()
{
	stop();
	while (!sources_.empty())
		detach(*sources_.back());
}

void EventLoop::start()
{
	std::lock_guard g(mu_);
	if (thread_.joinable())
		return;
	running_ = true;
	stopping_ = false;
	thread_ = std::thread([this] { run(); });
	loop_id_ = thread_.get_id();
}

void EventLoop::stop()
{
	{
		std::lock_guard g(mu_);
		if (!thread_.joinable())
			return;
		stopping_ = true;
	}
	wake(wake_fd_.get());
	thread_.join();
}

void EventLoop::attach(EventSource &s)
{
	call([this, &s] {
		if (s.loop_)
			return;  // on a loop already
		s.loop_ = this;
		sources_.push_back(&s);
		s.on_attach(*this);
	});
}

void EventLoop::detach(EventSource &s)
{
	if (s.loop_ != this)
		return;
	call([this, &s] {
		for (auto it = watched_.begin(); it != watched_.end();) {
			if (it->second != &s) {
				++it;
				continue;
			}
			::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, it->first, nullptr);
			it = watched_.erase(it);
		}
		sources_.erase(std::remove(sources_.begin(), sources_.end(), &s), sources_.end());
		s.loop_ = nullptr;
		s.on_detach();
	});
}

bool EventLoop::watch(int fd, uint32_t events, EventSource &s)
{
	epoll_event ev{};
	ev.events = events;
	ev.data.fd = fd;
	if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev) < 0)
		return false;
	watched_[fd] = &s;
	return true;
}

void EventLoop::rewatch(int fd, uint32_t events)
{
	epoll_event ev{};
	ev.events = events;
	ev.data.fd = fd;
	::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, fd, &ev);
}

void EventLoop::unwatch(int fd)
{
	::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
	watched_.erase(fd);
}

void EventLoop::call(const std::function<void()> &fn)
{
	std::unique_lock lk(mu_);
	if (!running_ || std::this_thread::get_id() == loop_id_) {
		lk.unlock();
		fn();
		return;
	}
	Call c{&fn};
	calls_.push_back(&c);
	wake(wake_fd_.get());
	done_cv_.wait(lk, [&c] { return c.done; });
}

bool EventLoop::on_wake()
{
	uint64_t n = 0;
	(void)!::read(wake_fd_.get(), &n, sizeof n);
	std::lock_guard g(mu_);
	for (Call *c : calls_) {
		(*c->fn)();
		c->done = true;
	}
	calls_.clear();
	done_cv_.notify_all();
	if (stopping_)
		running_ = false;  // calls from now on run on their caller's thread
	return !stopping_;
}

int EventLoop::tick_ms()
{
	std::chrono::milliseconds wait = kLongestWait;
	for (EventSource *s : sources_)
		wait = std::min(wait, s->on_tick());
	return static_cast<int>(std::max<int64_t>(wait.count(), 0));
}

void EventLoop::run()
{
	epoll_event events[32];
	for (;;) {
		const int n = ::epoll_wait(epoll_fd_.get(), events, 32, tick_ms());
		if (n < 0 && errno != EINTR) {
			log::error("control event loop: epoll_wait: %s", std::strerror(errno));
			std::lock_guard g(mu_);
			stopping_ = true;
			break;
		}
		for (int i = 0; i < n; i++) {
			const int fd = events[i].data.fd;
			if (fd == wake_fd_.get()) {
				if (!on_wake())
					return;
				continue;
			}
			// A source may have unwatched fd while handling an earlier event of this turn.
			if (auto it = watched_.find(fd); it != watched_.end())
				it->second->on_ready(fd, events[i].events);
		}
	}
	(void)on_wake();  // serve the calls waiting, and let later ones run on their callers
}

}  // namespace kvfdp::daemon
