// ublk control: /dev/ublk-control commands (ADD/SET_PARAMS/START/STOP/DEL, dev info,
// user recovery), each a synchronous uring_cmd on a small SQE128 ring of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "kvfdpd/ublk/uapi.hpp"

struct io_uring;

namespace kvfdp::ublk {

// What ADD_DEV asks for.
struct DevSpec {
	uint16_t queues = 1;
	uint16_t depth = 64;
	uint32_t io_buf_bytes = 512 * 1024;  // per tag; bounds max_sectors
	uint64_t flags = kFlagUserRecovery | kFlagUserRecoveryReissue | kFlagCmdIoctlEncode;
	int32_t dev_id = -1;  // -1: the driver picks
	// Kept verbatim by the driver in the device's info (ublksrv_flags) for the server's own
	// use: kvfdpd's stripe fingerprint (nvme::StripeDevice::fingerprint), 0 for one namespace.
	uint64_t server_flags = 0;
};

// One /dev/ublk-control handle. Not thread-safe: use from one thread.
class Control {
public:
	// Opens /dev/ublk-control (the error says to modprobe ublk_drv when it is missing).
	[[nodiscard]] static Result<std::unique_ptr<Control>> open();
	~Control();
	Control(const Control &) = delete;
	Control &operator=(const Control &) = delete;

	// ADD_DEV; returns the device info the driver filled (dev_id, flags).
	[[nodiscard]] Result<CtrlDevInfo> add_dev(const DevSpec &spec);
	[[nodiscard]] Result<void> set_params(uint32_t dev_id, const Params &params);
	[[nodiscard]] Result<Params> get_params(uint32_t dev_id);
	// START_DEV: blocks until every queue has FETCHed all its tags.
	[[nodiscard]] Result<void> start_dev(uint32_t dev_id, int32_t server_pid);
	// STOP_DEV: removes the disk; in-flight I/O must still be served while it runs.
	[[nodiscard]] Result<void> stop_dev(uint32_t dev_id);
	// TRY_STOP_DEV (a device created with kFlagSafeStopDev): STOP_DEV only while nothing has
	// the disk open. 0, -EBUSY while it is open (the device is untouched), or another -errno.
	[[nodiscard]] int try_stop_dev(uint32_t dev_id);
	[[nodiscard]] Result<void> del_dev(uint32_t dev_id);
	[[nodiscard]] Result<CtrlDevInfo> get_dev_info(uint32_t dev_id);
	// GET_FEATURES (Linux 6.5+): the kFlag* features this driver supports. An older driver
	// refuses the command; that error is returned.
	[[nodiscard]] Result<uint64_t> get_features();
	// START_USER_RECOVERY; -EBUSY while the old server is still tearing down.
	[[nodiscard]] int start_user_recovery(uint32_t dev_id);
	// END_USER_RECOVERY: blocks until every queue has FETCHed again, then resumes I/O.
	[[nodiscard]] Result<void> end_user_recovery(uint32_t dev_id, int32_t server_pid);

private:
	Control(UniqueFd fd, std::unique_ptr<io_uring> ring);
	// Issues one control command; returns cqe->res (0 / -errno).
	int run(uint32_t cmd_op, CtrlCmd &cmd);

	UniqueFd fd_;
	std::unique_ptr<io_uring> ring_;
};

// Basic + discard parameters for a namespace: lba_size bytes per block, nlb blocks,
// max_transfer bytes per command. Pure; used by the daemon and its tests.
struct ParamInput {
	uint32_t lba_size = 4096;
	uint64_t nlb = 0;
	uint32_t max_transfer = 512 * 1024;
	uint32_t io_buf_bytes = 512 * 1024;
	bool volatile_cache = false;
	bool fua = false;
	bool discard = true;
	bool write_zeroes = true;
	// A stripe (nvme/stripe.hpp): bytes per member unit and the member count. A power-of-two
	// unit becomes chunk_sectors (the block layer then sends no request across a unit) and
	// io_min, and a power-of-two row (unit x members) io_opt, for filesystems to align to.
	uint64_t stripe_bytes = 0;
	uint32_t stripe_members = 0;
};
[[nodiscard]] Result<Params> make_params(const ParamInput &in);

// "/dev/ublkbN" and "/dev/ublkcN".
[[nodiscard]] std::string block_path(uint32_t dev_id);
[[nodiscard]] std::string char_path(uint32_t dev_id);

}  // namespace kvfdp::ublk
