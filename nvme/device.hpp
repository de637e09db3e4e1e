// Device: what kvfdpd and the CLI need from an FDP namespace, whatever backs it.
// Backends: passthru (/dev/ngXnY over io_uring uring_cmd), file (a plain file, no placement),
// model (the FDP SSD model, model/ftl/); a stripe of several of them (nvme/stripe.hpp). An operation a backend cannot do returns -ENOTSUP
// explicitly; there are no empty slots.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "nvme/handle.hpp"

struct io_uring;
struct io_uring_cqe;

namespace kvfdp::nvme {

// What discovery found about the namespace. LBA counts are in logical blocks of lba_size.
struct DeviceInfo {
	std::string path;     // /dev/ng0n1, /dev/nvme0n1 (streams), a file path, or "model:..."
	std::string backend;  // "passthru", "streams", "file" or "model"
	uint32_t nsid = 0;
	// The namespace's identity, the same through any path and reboot (namespace_identity(),
	// nvme/discovery.hpp): "nguid-<hex>", "eui64-<hex>" or "sn-<serial>-ns<nsid>"; a
	// stripe's members' joined by ','; "" where the backend has none (file, model, streams).
	std::string identity;
	uint32_t lba_size = 0;        // bytes
	uint64_t nlb = 0;             // namespace size (NSZE) in LBAs
	uint32_t max_transfer = 0;    // bytes per command, any buffer layout: min(MDTS,
				      // max_hw_sectors_kb, max_segments - 1 pages) (docs/nvme.md)
	bool fdp_supported = false;   // Identify Controller CTRATT bit 19
	bool fdp_enabled = false;     // Get Features 0x1D bit 0
	bool volatile_cache = false;  // VWC present: flush is meaningful
	bool fua = false;
	uint16_t endgid = 0;       // endurance group (Identify Namespace byte 102)
	uint8_t rgif = 0;          // reclaim group identifier format (bits of PID)
	uint16_t nrg = 0;          // reclaim groups
	uint16_t nruh = 0;         // reclaim unit handles in the active configuration
	uint64_t ru_size = 0;      // reclaim unit size in bytes (RUNS)
	uint8_t config_index = 0;  // active FDP configuration
	// The queue's max_segments (0: unknown or not a block queue). A registered (fixed) buffer
	// should span at most this many pages: Linux 6.1 fails a fixed-buffer command with
	// -EINVAL when the registration holds more pages from the command's start on.
	uint32_t max_segments = 0;
};

enum class IoOp : uint8_t { read, write, flush, deallocate, write_zeroes };

// One I/O. nlb is the count of logical blocks (1-based here; builders convert), and must
// not exceed info().max_transfer / lba_size: callers split larger I/O.
struct IoRequest {
	IoOp op = IoOp::read;
	// a stripe's member (StripeDevice's queue routes by it, slba is that member's LBA:
	// nvme/stripe.hpp); 0 for any other device
	uint8_t member = 0;
	uint16_t handle = 0;  // handle index for writes (not the PID)
	uint32_t nlb = 0;
	uint64_t slba = 0;
	void *buf = nullptr;     // data for read / write; with buf_index, the address within
				 // that buffer (one the kernel registered, such as a ublk
				 // request's pages, starts at address 0)
	int buf_index = -1;      // registered buffer index in the caller's ring, or -1
	uint64_t user_data = 0;  // returned in the completion; bits 63:56 must be 0 (a
				 // stripe's queue carries the member index there)
};

// How prep() went: queued on the ring (a CQE with req.user_data will follow and must be
// passed to complete()), or finished inline with result.
struct Prep {
	bool queued = false;
	int result = 0;  // when !queued: 0, -errno, or a positive NVMe status
};

// The I/O side of a device, bound to one caller-owned io_uring (SQE128 | CQE32).
// Single-threaded: one IoQueue per queue thread. No allocation, locks or syscalls in prep().
class IoQueue {
public:
	virtual ~IoQueue() = default;
	// Adds the SQE(s) for req to the ring, or does the I/O inline. Does not submit.
	virtual Prep prep(io_uring &ring, const IoRequest &req) = 0;
	// Decodes a CQE of a queued request: 0, -errno, or a positive NVMe status
	// (SCT << 8 | SC, with DNR in bit 14 as the kernel reports it).
	virtual int complete(const io_uring_cqe &cqe) = 0;
};

class Device {
public:
	virtual ~Device() = default;
	[[nodiscard]] virtual const DeviceInfo &info() const = 0;
	// Live RUH Status (reads the device each call).
	[[nodiscard]] virtual Result<std::vector<Handle>> handles() = 0;
	// Raw FDP log page (0x20 configurations, 0x21 RUH usage, 0x22 statistics, 0x23
	// events), same bytes as the drive returns; lsp is the log-specific parameter.
	[[nodiscard]] virtual Result<std::vector<uint8_t>> log_page(uint8_t lid,
								    uint8_t lsp = 0) = 0;
	// An I/O queue bound to ring, for one thread. Requests name the caller's registered
	// buffers by index (IoRequest::buf_index) for fixed-buffer passthrough.
	[[nodiscard]] virtual Result<std::unique_ptr<IoQueue>> open_queue(io_uring &ring) = 0;
	// RUH Update (I/O Management Send, MO 1) of the given handle indexes (not PIDs): each
	// handle's open reclaim unit is closed as it stands and its next write opens a fresh
	// one, so a handle kvfdp stops using does not keep an RU open. Off the data path (a
	// synchronous command). Errors: an invalid index (EINVAL); a backend without placement
	// (ENOTSUP); a drive that refuses the command (the NVMe status, nvme_category()), after
	// which the handles stay as they were and the device keeps working.
	[[nodiscard]] virtual Result<void> ruh_update(std::span<const uint16_t> handles) = 0;
};

}  // namespace kvfdp::nvme
