// UblkQueue: one ublk queue served by one thread with one io_uring (SQE128 | CQE32) that
// carries the queue's FETCH / COMMIT_AND_FETCH commands and its device commands.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "userspace/daemon/counters.hpp"
#include "userspace/daemon/io_engine.hpp"
#include "userspace/daemon/policy.hpp"
#include "userspace/ublk/io_cmd.hpp"

struct io_uring;

namespace kvfdp::daemon {

struct QueueSetup {
	uint16_t q_id = 0;
	int char_fd = -1;                              // /dev/ublkcN, shared by the queues
	nvme::Device *device = nullptr;
	const volatile kvfdp_tag_slot *slots = nullptr;  // tagger slot array, or nullptr
	const PolicyTable *policy = nullptr;
	EngineConfig engine;
};

class UblkQueue final : public Committer {
public:
	// Sets up the ring, per-tag buffers (registered), the device queue and the descriptor
	// map, in the calling thread. start() runs the loop in a new thread.
	[[nodiscard]] static Result<std::unique_ptr<UblkQueue>> create(const QueueSetup &setup);
	~UblkQueue() override;

	// Starts the thread: it FETCHes every tag, then serves requests until stop().
	void start();
	// Asks the thread to finish: it completes what it holds (no device command left in
	// flight), submits the last commits and exits. join() waits for it.
	void stop() { stop_.store(true, std::memory_order_release); }
	void join();
	// 0, or the -errno that ended the loop early.
	[[nodiscard]] int exit_status() const { return exit_status_.load(); }
	[[nodiscard]] const QueueCounters &counters() const { return counters_; }
	// Every tag has been FETCHed once (the driver may now start the device).
	[[nodiscard]] bool fetched() const { return fetched_.load(std::memory_order_acquire); }

	void commit(uint16_t tag, int result) override;

private:
	explicit UblkQueue(const QueueSetup &setup);
	void run();

	QueueSetup setup_;
	std::unique_ptr<io_uring> ring_;
	bool ring_ready_ = false;
	ublk::DescMap descs_;
	std::unique_ptr<uint8_t *[]> bufs_;
	uint8_t *buf_area_ = nullptr;
	size_t buf_area_bytes_ = 0;
	std::unique_ptr<nvme::IoQueue> ioq_;
	std::unique_ptr<bpf::SlotReader> tags_;
	std::unique_ptr<IoEngine> engine_;
	QueueCounters counters_;
	std::thread thread_;
	std::atomic<bool> stop_{false};
	std::atomic<bool> fetched_{false};
	std::atomic<int> exit_status_{0};
	uint32_t aborted_ = 0;
};

} // namespace kvfdp::daemon
