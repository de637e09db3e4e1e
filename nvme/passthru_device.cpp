// The passthru backend: nvme::Device over /dev/ngXnY, I/O as uring_cmd in the caller's ring.
#include <algorithm>
#include <cerrno>
#include <mutex>

#include "nvme/backends.hpp"
#include "nvme/commands.hpp"
#include "nvme/discovery.hpp"
#include "nvme/inflight.hpp"
#include "nvme/status.hpp"
#include "nvme/uring.hpp"

namespace kvfdp::nvme {
namespace {

class PassthruQueue final : public IoQueue {
public:
	PassthruQueue(int fd, const DeviceInfo &info, std::vector<uint16_t> pids, size_t depth)
	    : fd_(fd), nsid_(info.nsid), lba_size_(info.lba_size), nlb_(info.nlb),
	      max_nlb_(info.max_transfer / info.lba_size), pids_(std::move(pids)),
	      dsm_slots_(depth), dsm_free_(depth), dsm_map_(depth)
	{
		for (size_t i = 0; i < depth; ++i)
			dsm_free_[i] = static_cast<uint32_t>(depth - 1 - i);
	}

	Prep prep(io_uring &ring, const IoRequest &req) override
	{
		UringCmd cmd;
		uint32_t slot = 0;
		bool dsm = false;
		if (req.op != IoOp::flush) {
			if (req.nlb == 0 || req.slba >= nlb_ || req.nlb > nlb_ - req.slba)
				return Prep{false, -EINVAL};
		}
		switch (req.op) {
		case IoOp::read:
		case IoOp::write: {
			// A registered buffer is addressed by offset: 0 is valid there (zero copy).
			if (req.nlb > max_nlb_ || (!req.buf && req.buf_index < 0))
				return Prep{false, -EINVAL};
			uint32_t len = req.nlb * lba_size_;
			if (req.op == IoOp::read) {
				cmd = make_read(nsid_, req.slba, req.nlb, req.buf, len);
			} else {
				if (req.handle >= pids_.size())
					return Prep{false, -EINVAL};
				cmd = make_write(nsid_, req.slba, req.nlb, req.buf, len,
						 pids_[req.handle]);
			}
			break;
		}
		case IoOp::flush: cmd = make_flush(nsid_); break;
		case IoOp::write_zeroes:
			if (req.nlb > kMaxNlb)
				return Prep{false, -EINVAL};
			cmd = make_write_zeroes(nsid_, req.slba, req.nlb);
			break;
		case IoOp::deallocate:
			if (dsm_free_.empty())
				return Prep{false, -EBUSY};
			slot = dsm_free_.back();
			dsm_slots_[slot] = make_dsm_range(req.slba, req.nlb);
			cmd = make_dsm_deallocate(nsid_, &dsm_slots_[slot], 1);
			dsm = true;
			break;
		default: return Prep{false, -ENOTSUP};
		}
		if (dsm && !dsm_map_.insert(req.user_data, slot))
			return Prep{false, -EBUSY};
		io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		if (!sqe) {
			if (dsm)
				dsm_map_.take(req.user_data, slot);
			return Prep{false, -EBUSY};
		}
		if (dsm)
			dsm_free_.pop_back();
		// Fixed buffers only carry data; DSM's range lives in our own memory.
		int bi = (req.op == IoOp::read || req.op == IoOp::write) ? req.buf_index : -1;
		prep_uring_cmd(sqe, fd_, kUringCmdIo, cmd, req.user_data, bi);
		return Prep{true, 0};
	}

	int complete(const io_uring_cqe &cqe) override
	{
		uint32_t slot;
		if (!dsm_map_.empty() && dsm_map_.take(cqe.user_data, slot))
			dsm_free_.push_back(slot);
		return cqe.res;
	}

private:
	int fd_;
	uint32_t nsid_;
	uint32_t lba_size_;
	uint64_t nlb_;
	uint32_t max_nlb_;
	std::vector<uint16_t> pids_;
	std::vector<DsmRange> dsm_slots_;
	std::vector<uint32_t> dsm_free_;
	InflightMap<uint32_t> dsm_map_;
};

class PassthruDevice final : public Device {
public:
	explicit PassthruDevice(Discovery d) : d_(std::move(d)) {}

	const DeviceInfo &info() const override { return d_.info; }

	Result<std::vector<Handle>> handles() override
	{
		std::lock_guard lock(mu_);
		auto rs = read_ruh_status(d_.ng_fd.get(), d_.info.nsid);
		if (!rs)
			return rs.error();
		return make_handles(*rs, d_.config);
	}

	Result<std::vector<uint8_t>> log_page(uint8_t lid, uint8_t lsp) override
	{
		std::lock_guard lock(mu_);
		uint16_t lsi = d_.info.endgid ? d_.info.endgid : 1;
		return read_fdp_log(d_.admin_fd.get(), lid, lsi, lsp);
	}

	Result<void> ruh_update(std::span<const uint16_t> handles) override
	{
		std::vector<uint16_t> pids;
		pids.reserve(handles.size());
		for (uint16_t h : handles) {
			if (h >= d_.pids.size())
				return make_error(std::errc::invalid_argument,
						  "RUH Update: no handle " + std::to_string(h) +
							  " (the namespace has " +
							  std::to_string(d_.pids.size()) + ")");
			pids.push_back(d_.pids[h]);
		}
		// At most ruh_update_batch() PIDs per command: QEMU (hw/nvme/ctrl.c) refuses
		// NPID >= min(128, nrg x nruh) with Invalid Field, one short of the whole list.
		const size_t batch = ruh_update_batch(d_.pids.size());
		std::lock_guard lock(mu_);
		for (size_t i = 0; i < pids.size(); i += batch) {
			const auto n = static_cast<uint16_t>(std::min(batch, pids.size() - i));
			int ret = io_ioctl(d_.ng_fd.get(),
					   make_io_mgmt_send(d_.info.nsid, &pids[i], n));
			if (ret > 0)
				return Error{
					std::error_code(ret, nvme_category()),
					ruh_update_refusal(NvmeStatus{static_cast<uint16_t>(ret)}),
					true};
			if (ret < 0)
				return result_error(ret, "I/O Management Send (RUH Update)");
		}
		return ok();
	}

	Result<std::unique_ptr<IoQueue>> open_queue(io_uring &ring) override
	{
		if ((ring.flags & kPassthruRingFlags) != kPassthruRingFlags)
			return make_error(std::errc::invalid_argument,
					  "passthru queue: the ring needs IORING_SETUP_SQE128 | "
					  "IORING_SETUP_CQE32");
		size_t depth = ring.cq.ring_entries ? ring.cq.ring_entries : 128;
		return make_passthru_queue(d_.ng_fd.get(), d_.info, d_.pids, depth);
	}

private:
	Discovery d_;
	std::mutex mu_;
};

}  // namespace

Result<std::unique_ptr<Device>> open_passthru_device(const std::string &ng_path)
{
	auto d = discover(ng_path, true);
	if (!d)
		return d.error();
	return std::unique_ptr<Device>(new PassthruDevice(std::move(*d)));
}

std::unique_ptr<IoQueue> make_passthru_queue(int ng_fd, const DeviceInfo &info,
					     std::vector<uint16_t> pids, size_t depth)
{
	return std::make_unique<PassthruQueue>(ng_fd, info, std::move(pids), depth);
}

}  // namespace kvfdp::nvme
