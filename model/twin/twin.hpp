// Twin: kvfdpd's live WAF twin. Queue threads push each write (with its handle), discard
// and write zeroes into their own Ring; the twin thread drains the rings into TwinModels,
// sampled to fit a memory bound, and the control thread reads the projection. Soft state:
// a restart starts fresh. Nothing here blocks, allocates or locks on a queue thread; a ring
// that fills past half makes one syscall to wake the twin thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "model/twin/models.hpp"
#include "model/twin/ring.hpp"
#include "model/twin/sampler.hpp"
#include "model/twin/wake.hpp"
#include "model/twin/window.hpp"

namespace kvfdp::twin {

// The twin thread's sleep between drains, in milliseconds (TwinOptions::idle_wait).
inline constexpr int kIdleWaitMs = 100;

struct TwinOptions {
	TwinGeometry geometry;
	uint64_t memory_bytes = kDefaultMemoryBytes;  // bound of the two sampled models
	uint32_t ring_records = 8192;                 // per queue (16 bytes each)
	// How long the twin thread sleeps between drains unless a ring fills past half (which
	// wakes it at once). It bounds how late a record is applied and stamped (the window's
	// times); readers drain first, so it never makes what they show late.
	std::chrono::milliseconds idle_wait{kIdleWaitMs};
	std::string bound_name{kMemoryOption};  // what a refused plan says to change
};

// kvfdpd's settings of the twin (--twin-memory, --twin-op).
struct TwinSettings {
	uint64_t memory_bytes = kDefaultMemoryBytes;  // 0: no twin
	bool memory_given = false;  // --twin-memory was given: a refused plan stops the start
	double op = 0;  // the drive's over-provisioning; 0: the model backend's --op, else 0.07
	// Where the bound came from when not from --twin-memory ("FILE:LINE: twin_memory"): a
	// refused plan's line then names that instead.
	std::string memory_from;
};

class Twin {
public:
	// Plans the sampling and builds both models; the error is the plan's one line.
	[[nodiscard]] static Result<std::unique_ptr<Twin>> create(const TwinOptions &o);
	~Twin();
	Twin(const Twin &) = delete;
	Twin &operator=(const Twin &) = delete;

	// Makes rings for queues [0, n), before those queues run.
	void add_rings(uint16_t n);
	// Queue q's ring (q < the rings added).
	[[nodiscard]] Ring &ring(uint16_t q) { return *rings_[q]; }
	[[nodiscard]] uint16_t rings() const { return static_cast<uint16_t>(rings_.size()); }

	// The twin thread: drains the rings, then sleeps for idle_wait or until a ring fills past
	// half.
	void start();
	// Stops the thread after a last drain.
	void stop();
	// The thread's passes so far: each drains the rings, then waits. Once the count moves,
	// the thread takes nothing more until that wait ends (a signal or idle_wait), so a caller
	// that saw it move knows the thread is asleep or about to be.
	[[nodiscard]] uint64_t sleeps() const { return sleeps_.load(std::memory_order_acquire); }
	// Applies every record in the rings now; how many. The thread's step, every reader's
	// first, and the test seam without a thread.
	uint64_t drain();
	// The projection, with the rings' drops and the memory of models and rings. Drains the
	// rings first: it counts every record pushed before the call.
	[[nodiscard]] TwinReport report();
	[[nodiscard]] const TwinPlan &plan() const { return models_->plan(); }
	// The recent window (docs/advise.md, From a running kvfdpd): its records, the sampling
	// rate and the sampled model's shape; at most max records from record number from on
	// (Window::fill). Drains the rings first, then copies under the models' lock (the control
	// thread).
	[[nodiscard]] proto::TwinWindow window(uint64_t from = 0, uint64_t max = UINT64_MAX);

private:
	Twin(std::unique_ptr<TwinModels> m, const TwinOptions &o, uint64_t window_records);
	// Milliseconds since the twin was made (the window's clock).
	[[nodiscard]] uint32_t now_ms() const;
	void run();

	std::unique_ptr<TwinModels> models_;
	Window window_;  // fed by models_ on the twin thread, read under mu_
	std::chrono::steady_clock::time_point born_;
	uint32_t ring_records_;
	std::chrono::milliseconds idle_wait_;
	std::vector<std::unique_ptr<Ring>> rings_;
	// models_, window_ and the rings' consumer side, between the twin thread and the readers
	// (never a queue thread).
	mutable std::mutex mu_;
	Wake wake_;                        // the rings' and stop()'s signal to the twin thread
	std::atomic<bool> stop_{false};    // set before stop()'s signal
	std::atomic<uint64_t> sleeps_{0};  // the thread's passes (sleeps())
	std::thread thread_;
};

// kvfdpd's twin of the device it serves, its thread started, or null where there is none:
// no FDP (nothing is placed), memory 0, or a refused plan with the default bound (one
// warning line). With a bound given, a refused plan is the error (its one line).
// model_op: the model backend's --op (0 for a drive).
[[nodiscard]] Result<std::unique_ptr<Twin>> twin_for(const nvme::DeviceInfo &info, uint16_t nruh,
						     double model_op, const TwinSettings &s);

}  // namespace kvfdp::twin
