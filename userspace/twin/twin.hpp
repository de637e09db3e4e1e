// Twin: kvfdpd's live WAF twin. Queue threads push each write (with its handle), discard
// and write zeroes into their own Ring; the twin thread drains the rings into TwinModels,
// sampled to fit a memory bound, and the control thread reads the projection. Soft state:
// a restart starts fresh. Nothing here blocks, allocates or locks on a queue thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "userspace/twin/models.hpp"
#include "userspace/twin/ring.hpp"
#include "userspace/twin/sampler.hpp"
#include "userspace/twin/window.hpp"

namespace kvfdp::twin {

struct TwinOptions {
	TwinGeometry geometry;
	uint64_t memory_bytes = kDefaultMemoryBytes;  // bound of the two sampled models
	uint32_t ring_records = 8192;                 // per queue (16 bytes each)
	std::string bound_name{kMemoryOption};        // what a refused plan says to change
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

	// The twin thread: drains the rings, waiting a millisecond when they are empty.
	void start();
	// Stops the thread after a last drain.
	void stop();
	// Applies every record in the rings now; how many. The thread's step, and the test seam
	// without a thread.
	uint64_t drain();
	// The projection, with the rings' drops and the memory of models and rings.
	[[nodiscard]] TwinReport report() const;
	[[nodiscard]] const TwinPlan &plan() const { return models_->plan(); }
	// The recent window (docs/advise.md, From a running kvfdpd): its records, the sampling
	// rate and the sampled model's shape; at most max records from record number from on
	// (Window::fill). Copies under the models' lock (the control thread).
	[[nodiscard]] proto::TwinWindow window(uint64_t from = 0, uint64_t max = UINT64_MAX) const;

private:
	Twin(std::unique_ptr<TwinModels> m, uint32_t ring_records, uint64_t window_records);
	// Milliseconds since the twin was made (the window's clock).
	[[nodiscard]] uint32_t now_ms() const;
	void run();

	std::unique_ptr<TwinModels> models_;
	Window window_;  // fed by models_ on the twin thread, read under mu_
	std::chrono::steady_clock::time_point born_;
	uint32_t ring_records_;
	std::vector<std::unique_ptr<Ring>> rings_;
	mutable std::mutex
		mu_;  // models_ between the twin thread and report() (never a queue thread)
	std::mutex wake_mu_;
	std::condition_variable wake_;
	bool stop_ = false;
	std::thread thread_;
};

// kvfdpd's twin of the device it serves, its thread started, or null where there is none:
// no FDP (nothing is placed), memory 0, or a refused plan with the default bound (one
// warning line). With a bound given, a refused plan is the error (its one line).
// model_op: the model backend's --op (0 for a drive).
[[nodiscard]] Result<std::unique_ptr<Twin>> twin_for(const nvme::DeviceInfo &info, uint16_t nruh,
						     double model_op, const TwinSettings &s);

}  // namespace kvfdp::twin
