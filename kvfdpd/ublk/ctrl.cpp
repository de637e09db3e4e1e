// ublk control commands over /dev/ublk-control, and parameter derivation.
#include "kvfdpd/ublk/ctrl.hpp"
#include "nvme/spec.hpp"
#include "kvfdpd/ublk/io_cmd.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <liburing.h>

namespace kvfdp::ublk {

namespace {

// NVMe Write Zeroes carries a 16-bit 0-based NLB, DSM a 32-bit 1-based NLB per range.
constexpr uint64_t kMaxWriteZeroesLbas = nvme::kMaxNlb;
constexpr uint64_t kMaxDiscardSectors = 1ull << 22;  // 2 GiB per DISCARD: one DSM range

CtrlCmd make_cmd(uint32_t dev_id)
{
	CtrlCmd c{};
	c.dev_id = dev_id;
	c.queue_id = UINT16_MAX;
	return c;
}

}  // namespace

Control::Control(UniqueFd fd, std::unique_ptr<io_uring> ring)
    : fd_(std::move(fd)), ring_(std::move(ring))
{
}

Control::~Control()
{
	if (ring_)
		io_uring_queue_exit(ring_.get());
}

Result<std::unique_ptr<Control>> Control::open()
{
	int fd = ::open("/dev/ublk-control", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (err == ENOENT)
			return guidance_error(
				std::errc::no_such_device,
				"/dev/ublk-control is missing: run 'modprobe ublk_drv' (the kernel needs CONFIG_BLK_DEV_UBLK)");
		return errno_error(err, "open /dev/ublk-control");
	}
	auto ring = std::make_unique<io_uring>();
	int ret = io_uring_queue_init(4, ring.get(), IORING_SETUP_SQE128);
	if (ret < 0) {
		::close(fd);
		return errno_error(ret, "io_uring_queue_init for ublk control");
	}
	return std::unique_ptr<Control>(new Control(UniqueFd(fd), std::move(ring)));
}

int Control::run(uint32_t cmd_op, CtrlCmd &cmd)
{
	io_uring_sqe *sqe = io_uring_get_sqe(ring_.get());
	if (!sqe)
		return -EBUSY;
	std::memset(sqe, 0, 2 * sizeof(io_uring_sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd_.get();
	sqe->cmd_op = cmd_op;
	static_assert(sizeof(CtrlCmd) <= 80, "fits in an SQE128 cmd area");
	std::memcpy(sqe->cmd, &cmd, sizeof(cmd));
	return submit_and_reap_one(*ring_);
}

Result<CtrlDevInfo> Control::add_dev(const DevSpec &spec)
{
	CtrlDevInfo info{};
	info.nr_hw_queues = spec.queues;
	info.queue_depth = spec.depth;
	info.max_io_buf_bytes = spec.io_buf_bytes;
	info.dev_id = static_cast<uint32_t>(spec.dev_id);
	info.flags = spec.flags;
	info.ublksrv_flags = spec.server_flags;
	CtrlCmd c = make_cmd(static_cast<uint32_t>(spec.dev_id));
	c.addr = reinterpret_cast<uintptr_t>(&info);
	c.len = sizeof(info);
	int ret = run(kUCmdAddDev, c);
	if (ret < 0)
		return errno_error(ret, "ublk ADD_DEV");
	return info;
}

Result<void> Control::set_params(uint32_t dev_id, const Params &params)
{
	Params p = params;
	p.len = sizeof(p);
	CtrlCmd c = make_cmd(dev_id);
	c.addr = reinterpret_cast<uintptr_t>(&p);
	c.len = sizeof(p);
	int ret = run(kUCmdSetParams, c);
	if (ret < 0)
		return errno_error(ret, "ublk SET_PARAMS");
	return ok();
}

Result<Params> Control::get_params(uint32_t dev_id)
{
	Params p{};
	p.len = sizeof(p);
	p.types = kParamTypeBasic | kParamTypeDiscard | kParamTypeDevt;
	CtrlCmd c = make_cmd(dev_id);
	c.addr = reinterpret_cast<uintptr_t>(&p);
	c.len = sizeof(p);
	int ret = run(kUCmdGetParams, c);
	if (ret < 0)
		return errno_error(ret, "ublk GET_PARAMS");
	return p;
}

Result<void> Control::start_dev(uint32_t dev_id, int32_t server_pid)
{
	CtrlCmd c = make_cmd(dev_id);
	c.data[0] = static_cast<uint64_t>(server_pid);
	int ret = run(kUCmdStartDev, c);
	if (ret < 0)
		return errno_error(ret, "ublk START_DEV");
	return ok();
}

Result<void> Control::stop_dev(uint32_t dev_id)
{
	CtrlCmd c = make_cmd(dev_id);
	int ret = run(kUCmdStopDev, c);
	if (ret < 0)
		return errno_error(ret, "ublk STOP_DEV");
	return ok();
}

int Control::try_stop_dev(uint32_t dev_id)
{
	CtrlCmd c = make_cmd(dev_id);
	return run(kUCmdTryStopDev, c);
}

Result<void> Control::del_dev(uint32_t dev_id)
{
	CtrlCmd c = make_cmd(dev_id);
	int ret = run(kUCmdDelDev, c);
	if (ret < 0)
		return errno_error(ret, "ublk DEL_DEV");
	return ok();
}

Result<CtrlDevInfo> Control::get_dev_info(uint32_t dev_id)
{
	CtrlDevInfo info{};
	CtrlCmd c = make_cmd(dev_id);
	c.addr = reinterpret_cast<uintptr_t>(&info);
	c.len = sizeof(info);
	int ret = run(kUCmdGetDevInfo, c);
	if (ret < 0)
		return errno_error(ret, "ublk GET_DEV_INFO of device " + std::to_string(dev_id));
	return info;
}

Result<uint64_t> Control::get_features()
{
	uint64_t features = 0;
	CtrlCmd c = make_cmd(UINT32_MAX);  // not a device command
	c.addr = reinterpret_cast<uintptr_t>(&features);
	c.len = sizeof(features);
	int ret = run(kUCmdGetFeatures, c);
	if (ret < 0)
		return errno_error(ret, "ublk GET_FEATURES");
	return features;
}

int Control::start_user_recovery(uint32_t dev_id)
{
	CtrlCmd c = make_cmd(dev_id);
	return run(kUCmdStartUserRecovery, c);
}

Result<void> Control::end_user_recovery(uint32_t dev_id, int32_t server_pid)
{
	CtrlCmd c = make_cmd(dev_id);
	c.data[0] = static_cast<uint64_t>(server_pid);
	int ret = run(kUCmdEndUserRecovery, c);
	if (ret < 0)
		return errno_error(ret, "ublk END_USER_RECOVERY");
	return ok();
}

Result<Params> make_params(const ParamInput &in)
{
	if (in.lba_size < 512 || in.lba_size > 4096 || !std::has_single_bit(in.lba_size))
		return make_error(std::errc::invalid_argument,
				  "logical block size " + std::to_string(in.lba_size) +
					  " is not supported by ublk (512..4096, a power of two)");
	if (in.nlb == 0)
		return make_error(std::errc::invalid_argument, "the namespace has no blocks");
	if (in.max_transfer < in.lba_size)
		return make_error(std::errc::invalid_argument,
				  "max transfer is smaller than one block");
	Params p{};
	p.len = sizeof(p);
	p.types = kParamTypeBasic;
	const uint8_t shift = static_cast<uint8_t>(std::countr_zero(in.lba_size));
	p.basic.logical_bs_shift = shift;
	p.basic.physical_bs_shift = std::max<uint8_t>(shift, 12);
	p.basic.io_min_shift = shift;
	p.basic.io_opt_shift = std::max<uint8_t>(shift, 12);
	// One ublk request fills at most one tag buffer and one NVMe command (the transfer limit
	// counts MDTS, max_hw_sectors and max_segments): the block layer splits larger ones, so
	// kvfdpd never has to split a request into a full command plus a small remainder.
	const uint32_t max_io =
		std::min(in.io_buf_bytes, in.max_transfer / in.lba_size * in.lba_size);
	p.basic.max_sectors = max_io >> 9;
	p.basic.dev_sectors = in.nlb * (in.lba_size >> 9);
	if (in.stripe_members > 1 && std::has_single_bit(in.stripe_bytes) &&
	    in.stripe_bytes >= in.lba_size) {
		p.basic.chunk_sectors = static_cast<uint32_t>(in.stripe_bytes >> 9);
		p.basic.io_min_shift = static_cast<uint8_t>(std::countr_zero(in.stripe_bytes));
		const uint64_t row = in.stripe_bytes * in.stripe_members;
		p.basic.io_opt_shift = static_cast<uint8_t>(
			std::countr_zero(std::has_single_bit(row) ? row : in.stripe_bytes));
	}
	if (in.volatile_cache)
		p.basic.attrs |= kAttrVolatileCache;
	if (in.fua)
		p.basic.attrs |= kAttrFua;
	if (in.discard || in.write_zeroes) {
		p.types |= kParamTypeDiscard;
		p.discard.discard_granularity = in.lba_size;
		p.discard.max_discard_segments = 1;
		if (in.discard)
			p.discard.max_discard_sectors = static_cast<uint32_t>(
				std::min<uint64_t>(kMaxDiscardSectors, p.basic.dev_sectors));
		if (in.write_zeroes)
			p.discard.max_write_zeroes_sectors = static_cast<uint32_t>(
				std::min<uint64_t>(kMaxWriteZeroesLbas * (in.lba_size >> 9),
						   p.basic.dev_sectors));
	}
	return p;
}

std::string block_path(uint32_t dev_id)
{
	return "/dev/ublkb" + std::to_string(dev_id);
}
std::string char_path(uint32_t dev_id)
{
	return "/dev/ublkc" + std::to_string(dev_id);
}

}  // namespace kvfdp::ublk
