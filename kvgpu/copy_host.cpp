// The host copy engine: a copy thread drains a single-producer ring of memcpy requests.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <unistd.h>
#include <vector>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/copy_engine.hpp"
#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {
namespace {

class HostEngine final : public CopyEngine {
public:
	HostEngine(unsigned slots, int wake_fd)
	    : ring_(slots), issued_(slots, 0), done_(slots), wake_fd_(wake_fd)
	{
		for (auto &d : done_)
			d.store(0, std::memory_order_relaxed);
		thread_ = std::thread([this] { run(); });
	}

	~HostEngine() override
	{
		stop_.store(true, std::memory_order_release);
		signal_.fetch_add(1, std::memory_order_release);
		signal_.notify_one();
		thread_.join();
	}

	int kind() const override { return KVGPU_ENGINE_HOST; }

	int alloc_staging(size_t bytes, void **out) override
	{
		void *p = std::aligned_alloc(kBlock, align_up(bytes));
		if (!p)
			return KVGPU_ERR_NOMEM;
		*out = p;
		return 0;
	}

	void free_staging(void *p) override { std::free(p); }

	// Host memory is coherent: nothing queued elsewhere to wait for.
	int mark_source(unsigned, void *) override { return 0; }
	int order_after(unsigned) override { return 0; }

	int copy(unsigned slot, void *dst, const void *src, size_t n) override
	{
		uint64_t h = head_.load(std::memory_order_relaxed);
		// At most one copy per slot is pending, so the ring (one entry per slot) never overflows.
		ring_[h % ring_.size()] = Request{slot, dst, src, n};
		issued_[slot]++;
		head_.store(h + 1, std::memory_order_release);
		signal_.fetch_add(1, std::memory_order_release);
		signal_.notify_one();
		return 0;
	}

	int query(unsigned slot) override
	{
		return done_[slot].load(std::memory_order_acquire) == issued_[slot] ? 1 : 0;
	}

	int bind_thread() override { return 0; }

private:
	struct Request {
		unsigned slot;
		void *dst;
		const void *src;
		size_t n;
	};

	void run()
	{
		uint64_t tail = 0;
		for (;;) {
			uint64_t sig = signal_.load(std::memory_order_acquire);
			while (tail != head_.load(std::memory_order_acquire)) {
				const Request r = ring_[tail % ring_.size()];
				std::memcpy(r.dst, r.src, r.n);
				tail++;
				done_[r.slot].fetch_add(1, std::memory_order_release);
				uint64_t one = 1;
				// The worker re-checks every slot on wake-up; a failed write only delays it
				// until the next completion or submission (it cannot fail for an eventfd).
				(void)!::write(wake_fd_, &one, sizeof(one));
			}
			if (stop_.load(std::memory_order_acquire))
				return;
			signal_.wait(sig, std::memory_order_acquire);
		}
	}

	std::vector<Request> ring_;
	std::vector<uint64_t> issued_;             // worker-only: copies enqueued per slot
	std::vector<std::atomic<uint64_t>> done_;  // copy thread: copies finished per slot
	std::atomic<uint64_t> head_{0};
	std::atomic<uint64_t> signal_{0};
	std::atomic<bool> stop_{false};
	int wake_fd_;
	std::thread thread_;
};

}  // namespace

int make_host_engine(unsigned slots, unsigned, int wake_fd, std::unique_ptr<CopyEngine> *out)
{
	auto *e = new (std::nothrow) HostEngine(slots, wake_fd);
	if (!e)
		return KVGPU_ERR_NOMEM;
	out->reset(e);
	return 0;
}

}  // namespace kvfdp::gpu
