// The drive's own per-handle relocations (docs/twin.md, Noisy handles): the Media Reallocated
// controller events of the FDP events log (0x23, LSP 0), each naming a PID and the LBAs it
// moved (NLBAM), summed per handle. Read off the data path, where the control thread already
// asks the drive (the stats reply, a scrape of /metrics).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "proto/counter_snapshot.hpp"
#include "proto/twin_stats.hpp"

namespace kvfdp::daemon {

class DriveRelocations {
public:
	// pids: each handle index's PID (RUH Status); events of other PIDs or namespaces are
	// not this namespace's handles' and are skipped.
	DriveRelocations(std::vector<uint16_t> pids, uint32_t nsid, uint32_t lba_size);

	// Reads the log and adds each event it has not counted yet: those with a later Timestamp
	// than the newest seen, and those with that Timestamp past the ones already counted (a
	// drive's millisecond clock may stamp several alike). The log keeps the newest 63, so
	// what a drive raises between two polls beyond that is lost.
	[[nodiscard]] Result<void> poll(nvme::Device &dev);
	// Bytes relocated per handle index (NLBAM x LBA size), since kvfdpd started.
	[[nodiscard]] std::vector<uint64_t> bytes() const;
	// Events counted.
	[[nodiscard]] uint64_t events() const;
	// Whether a poll ever read the log (a drive without it reports nothing per handle).
	[[nodiscard]] bool read() const;
	// Polls, then each handle's figures: kvfdpd's host bytes through it (c) beside the bytes
	// the drive relocated out of its RUs; empty while no poll has read the log.
	[[nodiscard]] std::optional<std::vector<proto::TwinHandle>>
	report(nvme::Device &dev, const proto::CounterSnapshot &c);

private:
	mutable std::mutex mu_;
	std::vector<uint16_t> pids_;
	uint32_t nsid_;
	uint32_t lba_size_;
	std::vector<uint64_t> bytes_;
	uint64_t events_ = 0;
	bool read_ = false;
	uint64_t last_time_ = 0;  // the newest Timestamp counted
	uint32_t at_last_ = 0;    // events counted with that Timestamp
};

}  // namespace kvfdp::daemon
