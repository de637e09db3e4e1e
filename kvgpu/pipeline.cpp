// Pipeline: the worker's loop over its jobs, each piece of a job moving from slot to slot
// state (copy, crc, io_uring read or write), and an evict's publication.
#include "kvgpu/pipeline.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "bpf/tag.h"
#include "kvgpu/chunk_format.hpp"
#include "kvgpu/crc32c.hpp"
#include "kvgpu/errors.hpp"

// kvgpu.h stands alone for C callers; its lifetimes are the tagger's classes (both RWH values).
static_assert(int(KVGPU_LIFETIME_NOT_SET) == int(KVFDP_CLASS_NOT_SET) &&
		      int(KVGPU_LIFETIME_NONE) == int(KVFDP_CLASS_NONE) &&
		      int(KVGPU_LIFETIME_SHORT) == int(KVFDP_CLASS_SHORT) &&
		      int(KVGPU_LIFETIME_MEDIUM) == int(KVFDP_CLASS_MEDIUM) &&
		      int(KVGPU_LIFETIME_LONG) == int(KVFDP_CLASS_LONG) &&
		      int(KVGPU_LIFETIME_EXTREME) == int(KVFDP_CLASS_EXTREME),
	      "kvgpu lifetimes must equal the tagger's lifetime classes");

namespace kvfdp::gpu {
namespace {

// io_uring user_data: the op type in the top byte, a slot or job index below.
constexpr uint64_t kUdSlot = 1;
constexpr uint64_t kUdHeader = 2;
constexpr uint64_t kUdFsync = 3;
constexpr uint64_t kUdWake = 4;

uint64_t make_ud(uint64_t type, uint64_t idx)
{
	return (type << 56) | idx;
}
uint64_t ud_type(uint64_t ud)
{
	return ud >> 56;
}
unsigned ud_index(uint64_t ud)
{
	return static_cast<unsigned>(ud & ((1ull << 56) - 1));
}

}  // namespace

Pipeline::~Pipeline()
{
	if (ring_ok_)
		io_uring_queue_exit(&ring_);
	if (staging_)
		engine_->free_staging(staging_);
	engine_.reset();
	std::free(headers_);
}

int Pipeline::init(int dir_fd, bool dir_direct, StoreIndex *store)
{
	dir_fd_ = dir_fd;
	dir_direct_ = dir_direct;
	store_ = store;
	pid_ = ::getpid();
	wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!wake_)
		return KVGPU_ERR_NOMEM;
	if (int rc = make_engine(); rc < 0)
		return rc;
	if (int rc = alloc_slots(); rc < 0)
		return rc;
	if (io_uring_queue_init(opts_.queue_depth, &ring_, 0) < 0)
		return KVGPU_ERR_URING;
	ring_ok_ = true;
	register_slots();
	return 0;
}

int Pipeline::make_engine()
{
	unsigned engine = opts_.engine;
	if (engine == KVGPU_ENGINE_AUTO)
		engine = cuda_device_count() > 0 ? KVGPU_ENGINE_CUDA : KVGPU_ENGINE_HOST;
	// The prefetch buffers are slots past the ring: the engine copies from them like from any slot.
	unsigned all_slots = opts_.slots + opts_.prefetch_slots;
	return engine == KVGPU_ENGINE_CUDA
		       ? make_cuda_engine(opts_.cuda_device, all_slots, opts_.max_jobs, wake_.get(),
					  &engine_)
		       : make_host_engine(all_slots, opts_.max_jobs, wake_.get(), &engine_);
}

int Pipeline::alloc_slots()
{
	unsigned all_slots = opts_.slots + opts_.prefetch_slots;
	size_t ring_bytes = size_t(all_slots) * opts_.slot_bytes;
	if (int e = engine_->alloc_staging(ring_bytes, &staging_); e < 0)
		return e;
	headers_ = std::aligned_alloc(kBlock, size_t(opts_.max_jobs) * kBlock);
	if (!headers_)
		return KVGPU_ERR_NOMEM;

	slots_.resize(all_slots);
	free_slots_.reserve(opts_.slots);
	for (unsigned i = 0; i < all_slots; i++)
		slots_[i].buf = static_cast<char *>(staging_) + size_t(i) * opts_.slot_bytes;
	for (unsigned i = 0; i < opts_.slots; i++)
		free_slots_.push_back(opts_.slots - 1 - i);
	accepted_.reserve(opts_.max_jobs);
	active_.reserve(opts_.max_jobs);
	return 0;
}

void Pipeline::register_slots()
{
	// The staging slots as io_uring fixed buffers (index = slot): an O_DIRECT read or write
	// then skips pinning and mapping the slot's pages on every I/O. Where the kernel refuses
	// (RLIMIT_MEMLOCK), the plain ops do the same work per I/O.
	std::vector<iovec> iov(slots_.size());
	for (unsigned i = 0; i < slots_.size(); i++)
		iov[i] = {slots_[i].buf, opts_.slot_bytes};
	bufs_registered_ =
		io_uring_register_buffers(&ring_, iov.data(), unsigned(slots_.size())) == 0;
}

void Pipeline::start()
{
	worker_ = std::thread([this] { run(); });
}

void Pipeline::wake()
{
	uint64_t one = 1;
	(void)!::write(wake_.get(), &one, sizeof(one));
}

void Pipeline::join()
{
	if (worker_.joinable())
		worker_.join();
}

io_uring_sqe *Pipeline::get_sqe()
{
	io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
	if (!sqe) {
		// The submission queue is full: hand it to the kernel, which empties it.
		io_uring_submit(&ring_);
		sqe = io_uring_get_sqe(&ring_);
	}
	return sqe;
}

void Pipeline::prep_slot_io(io_uring_sqe *sqe, bool write, int fd, unsigned s, uint64_t len,
			    uint64_t off)
{
	char *buf = slots_[s].buf;
	auto n = static_cast<unsigned>(len);
	if (!bufs_registered_)
		write ? io_uring_prep_write(sqe, fd, buf, n, off)
		      : io_uring_prep_read(sqe, fd, buf, n, off);
	else if (write)
		io_uring_prep_write_fixed(sqe, fd, buf, n, off, int(s));
	else
		io_uring_prep_read_fixed(sqe, fd, buf, n, off, int(s));
}

void Pipeline::arm_wake()
{
	io_uring_sqe *sqe = get_sqe();
	io_uring_prep_read(sqe, wake_.get(), &wake_buf_, sizeof(wake_buf_), 0);
	io_uring_sqe_set_data64(sqe, make_ud(kUdWake, 0));
}

int Pipeline::pop_free_slot()
{
	if (free_slots_.empty())
		return -1;
	unsigned s = free_slots_.back();
	free_slots_.pop_back();
	return static_cast<int>(s);
}

void Pipeline::run()
{
	int bind = engine_->bind_thread();
	arm_wake();
	for (;;) {
		if (bind < 0) {
			// Without a device binding no copy can run: fail everything that arrives.
			accept_jobs();
			for (unsigned j : active_)
				fail(j, bind, 0);
		}
		bool progressed = step();
		io_uring_submit(&ring_);
		if (active_.empty() && jobs_.drained())
			break;
		io_uring_cqe *cqe = nullptr;
		if (!progressed && io_uring_wait_cqe(&ring_, &cqe) < 0)
			continue;
		unsigned head;
		unsigned seen = 0;
		io_uring_for_each_cqe(&ring_, head, cqe)
		{
			handle_cqe(cqe);
			seen++;
		}
		io_uring_cq_advance(&ring_, seen);
	}
}

bool Pipeline::step()
{
	bool p = false;
	size_t before = active_.size();
	accept_jobs();
	p |= active_.size() != before;
	p |= poll_copies();
	for (unsigned j : active_)
		p |= handoff(j);
	for (unsigned j : active_)
		p |= issue(j);
	for (size_t i = 0; i < active_.size();) {
		unsigned j = active_[i];
		bool done = false;
		p |= finish_job(j);
		done = jobs_.job(j).phase == Phase::finished;
		if (done)
			active_.erase(active_.begin() + static_cast<long>(i));
		else
			i++;
	}
	return p;
}

void Pipeline::accept_jobs()
{
	if (!jobs_.take_queued(&accepted_))
		return;
	for (unsigned j : accepted_) {
		start_job(j);
		active_.push_back(j);
	}
	accepted_.clear();
}

void Pipeline::fail(unsigned j, int code, int err_no)
{
	Job &job = jobs_.job(j);
	if (job.err == 0)
		job.err = code;
	if (err_no)
		c_.last_errno.store(err_no, std::memory_order_relaxed);
}

void Pipeline::start_job(unsigned j)
{
	Job &job = jobs_.job(j);
	job.phase = Phase::data;
	job.blocks = (job.bytes + opts_.slot_bytes - 1) / opts_.slot_bytes;
	job.issued = job.handed = job.finished = 0;
	job.ops = 0;
	job.crc = 0;
	job.err = 0;
	job.seq = 0;
	if (job.kind == Kind::evict) {
		job.seq = ++temp_seq_;
		FileName tmp;
		temp_name(pid_, job.seq, &tmp);
		int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
		job.direct = dir_direct_;
		job.fd.reset(
			::openat(dir_fd_, tmp.c_str(), flags | (job.direct ? O_DIRECT : 0), 0644));
		if (!job.fd && errno == EINVAL && job.direct &&
		    opts_.direct_io == KVGPU_DIRECT_AUTO) {
			// Refused after the create on some filesystems: drop the empty file, go buffered.
			::unlinkat(dir_fd_, tmp.c_str(), 0);
			job.direct = false;
			job.fd.reset(::openat(dir_fd_, tmp.c_str(), flags, 0644));
		}
		if (!job.fd) {
			job.seq = 0;  // nothing to unlink
			fail(j, errno_to_kvgpu(errno), errno);
			return;
		}
		// Reserve the whole file first: a full filesystem fails here, before any data moves.
		if (::fallocate(job.fd.get(), 0, 0, static_cast<off_t>(file_bytes(job.bytes))) !=
			    0 &&
		    errno != EOPNOTSUPP && errno != ENOSYS) {
			fail(j, errno_to_kvgpu(errno), errno);
			return;
		}
		// The hint goes on before the first write, so every bio of the file carries it.
		uint64_t hint = static_cast<uint64_t>(job.lifetime);
		if (::fcntl(job.fd.get(), KVFDP_F_SET_RW_HINT, &hint) != 0)
			c_.hint_failures.fetch_add(1, std::memory_order_relaxed);
	}
	if (job.fd)
		(job.direct ? c_.direct_files : c_.buffered_files)
			.fetch_add(1, std::memory_order_relaxed);
	if (job.kind == Kind::prefetch)
		return;  // reads only: nothing on the copy engine to order
	if (int rc = engine_->order_after(j); rc < 0)
		fail(j, rc, 0);
}

void Pipeline::release_slot(unsigned s)
{
	slots_[s].state = SlotState::free;
	if (s < opts_.slots)
		free_slots_.push_back(s);  // prefetch slots belong to their entry, not to the ring
}

bool Pipeline::issue(unsigned j)
{
	Job &job = jobs_.job(j);
	bool p = false;
	if (job.pslot >= 0) {
		// One piece in a prefetch slot: read into it (prefetch), or copy out of it (a staged load).
		if (job.err != 0 || job.issued > 0)
			return false;
		Slot &slot = slots_[unsigned(job.pslot)];
		slot.job = j;
		slot.piece = 0;
		slot.len = static_cast<uint32_t>(job.bytes);
		job.issued = 1;
		if (job.kind == Kind::load) {
			slot.state = SlotState::io_done;
			return true;
		}
		io_uring_sqe *sqe = get_sqe();
		prep_slot_io(sqe, false, job.fd.get(), unsigned(job.pslot), align_up(slot.len),
			     kDataOffset);
		io_uring_sqe_set_data64(sqe, make_ud(kUdSlot, unsigned(job.pslot)));
		slot.state = SlotState::io;
		io_in_flight_++;
		store_max(c_.max_io, io_in_flight_);
		job.ops++;
		return true;
	}
	while (job.err == 0 && job.phase == Phase::data && job.issued < job.blocks) {
		int s = pop_free_slot();
		if (s < 0)
			break;
		Slot &slot = slots_[static_cast<unsigned>(s)];
		uint64_t off = job.issued * opts_.slot_bytes;
		slot.job = j;
		slot.piece = job.issued;
		slot.len = static_cast<uint32_t>(
			std::min<uint64_t>(opts_.slot_bytes, job.bytes - off));
		job.issued++;
		p = true;
		if (job.kind == Kind::evict) {
			if (int rc = engine_->copy(static_cast<unsigned>(s), slot.buf,
						   job.src + off, slot.len);
			    rc < 0) {
				fail(j, rc, 0);
				slot.state =
					SlotState::copied;  // handed back by handoff's error path
				break;
			}
			slot.state = SlotState::copying;
			copies_in_flight_++;
			store_max(c_.max_copies, copies_in_flight_);
		} else {
			io_uring_sqe *sqe = get_sqe();
			prep_slot_io(sqe, false, job.fd.get(), unsigned(s), align_up(slot.len),
				     kDataOffset + off);
			io_uring_sqe_set_data64(sqe, make_ud(kUdSlot, static_cast<unsigned>(s)));
			slot.state = SlotState::io;
			io_in_flight_++;
			store_max(c_.max_io, io_in_flight_);
		}
		job.ops++;
	}
	return p;
}

bool Pipeline::poll_copies()
{
	bool p = false;
	for (unsigned s = 0; s < slots_.size(); s++) {
		Slot &slot = slots_[s];
		if (slot.state != SlotState::copying)
			continue;
		int r = engine_->query(s);
		if (r == 0)
			continue;
		Job &job = jobs_.job(slot.job);
		if (r < 0)
			fail(slot.job, r, 0);
		copies_in_flight_--;
		job.ops--;
		p = true;
		if (job.kind == Kind::load) {
			// H2D done: the slot is free again.
			release_slot(s);
			job.finished++;
		} else {
			slot.state = SlotState::copied;
		}
	}
	return p;
}

bool Pipeline::handoff(unsigned j)
{
	Job &job = jobs_.job(j);
	bool p = false;
	if (job.err != 0) {
		// Give back every slot of the failed job that is not waiting on the kernel or the engine.
		for (unsigned s = 0; s < slots_.size(); s++) {
			Slot &slot = slots_[s];
			if (slot.job == j &&
			    (slot.state == SlotState::copied || slot.state == SlotState::io_done)) {
				release_slot(s);
				job.finished++;
				p = true;
			}
		}
		return p;
	}
	// In piece order: the CRC runs over the payload front to back.
	while (job.handed < job.issued) {
		unsigned s = 0;
		for (; s < slots_.size(); s++)
			if (slots_[s].state != SlotState::free &&
			    slots_[s].state != SlotState::staged && slots_[s].job == j &&
			    slots_[s].piece == job.handed)
				break;
		if (s == slots_.size())
			break;
		Slot &slot = slots_[s];
		SlotState ready = job.kind == Kind::evict ? SlotState::copied : SlotState::io_done;
		if (slot.state != ready)
			break;
		uint64_t off = job.handed * opts_.slot_bytes;
		uint64_t padded = align_up(slot.len);
		job.handed++;
		p = true;
		if (job.kind == Kind::evict) {
			// The last block is zero-padded on disk; the header keeps the true length.
			if (padded != slot.len)
				std::memset(slot.buf + slot.len, 0, padded - slot.len);
			if (opts_.checksum)
				job.crc = crc32c(job.crc, slot.buf, slot.len);
			io_uring_sqe *sqe = get_sqe();
			prep_slot_io(sqe, true, job.fd.get(), s, padded, kDataOffset + off);
			io_uring_sqe_set_data64(sqe, make_ud(kUdSlot, s));
			slot.state = SlotState::io;
			io_in_flight_++;
			store_max(c_.max_io, io_in_flight_);
		} else {
			if (job.check_crc)
				job.crc = crc32c(job.crc, slot.buf, slot.len);
			if (job.kind == Kind::prefetch) {
				// The whole chunk is in its buffer; it stays there until a load claims it.
				slot.state = SlotState::staged;
				job.finished++;
				continue;
			}
			if (int rc = engine_->copy(s, job.dst + off, slot.buf, slot.len); rc < 0) {
				fail(j, rc, 0);
				release_slot(s);
				job.finished++;
				continue;
			}
			slot.state = SlotState::copying;
			copies_in_flight_++;
			store_max(c_.max_copies, copies_in_flight_);
		}
		job.ops++;
	}
	return p;
}

void Pipeline::handle_cqe(const io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	int res = cqe->res;
	switch (ud_type(ud)) {
	case kUdWake: arm_wake(); return;
	case kUdSlot: {
		unsigned s = ud_index(ud);
		Slot &slot = slots_[s];
		unsigned j = slot.job;
		Job &job = jobs_.job(j);
		io_in_flight_--;
		job.ops--;
		if (res < 0)
			fail(j, errno_to_kvgpu(res), -res);
		if (job.kind == Kind::evict) {
			c_.writes.fetch_add(1, std::memory_order_relaxed);
			if (res >= 0 && uint64_t(res) != align_up(slot.len))
				fail(j, KVGPU_ERR_NO_SPACE,
				     ENOSPC);  // a short write: the device ran out of room
			slot.state = SlotState::free;
			free_slots_.push_back(s);
			job.finished++;
		} else {  // load or prefetch
			c_.reads.fetch_add(1, std::memory_order_relaxed);
			if (res >= 0 && uint64_t(res) < slot.len)
				fail(j, KVGPU_ERR_CORRUPT, 0);  // the file ended early
			slot.state = SlotState::io_done;
		}
		return;
	}
	case kUdHeader:
	case kUdFsync: {
		unsigned j = ud_index(ud);
		io_in_flight_--;
		jobs_.job(j).ops--;
		if (res < 0)
			fail(j, errno_to_kvgpu(res), -res);
		else if (ud_type(ud) == kUdHeader && res != static_cast<int>(kBlock))
			fail(j, KVGPU_ERR_NO_SPACE, ENOSPC);
		return;
	}
	default: return;
	}
}

bool Pipeline::finish_job(unsigned j)
{
	Job &job = jobs_.job(j);
	if (job.err != 0) {
		if (job.ops > 0)
			return false;
		if (job.kind == Kind::evict && job.seq != 0) {
			FileName tmp;
			temp_name(pid_, job.seq, &tmp);
			::unlinkat(dir_fd_, tmp.c_str(), 0);
		}
		complete(j, job.err);
		return true;
	}
	if (job.kind != Kind::evict) {
		if (job.finished < job.blocks || job.ops > 0)
			return false;
		if (job.check_crc && job.crc != job.stored_crc) {
			c_.checksum_failures.fetch_add(1, std::memory_order_relaxed);
			complete(j, KVGPU_ERR_CHECKSUM);
			return true;
		}
		complete(j, 0);
		return true;
	}
	if (job.phase == Phase::data) {
		if (job.finished < job.blocks || job.ops > 0)
			return false;
		write_header(j);
		return true;
	}
	if (job.phase == Phase::header && job.ops == 0) {
		publish(j);
		return true;
	}
	return false;
}

void Pipeline::write_header(unsigned j)
{
	Job &job = jobs_.job(j);
	// Every payload block is on disk: the header goes last, so a file with a valid
	// header is complete even before the rename.
	encode_header(header_block(j), std::string_view(job.key, job.key_len), job.bytes,
		      static_cast<uint32_t>(job.lifetime), opts_.checksum != 0, job.crc, now_ns());
	bool durable = opts_.durability == KVGPU_DURABLE_FSYNC;
	io_uring_sqe *sqe = get_sqe();
	io_uring_prep_write(sqe, job.fd.get(), header_block(j), kBlock, 0);
	io_uring_sqe_set_data64(sqe, make_ud(kUdHeader, j));
	job.ops++;
	io_in_flight_++;
	if (durable) {
		sqe->flags |= IOSQE_IO_LINK;
		sqe = get_sqe();
		io_uring_prep_fsync(sqe, job.fd.get(), 0);
		io_uring_sqe_set_data64(sqe, make_ud(kUdFsync, j));
		job.ops++;
		io_in_flight_++;
	}
	store_max(c_.max_io, io_in_flight_);
	job.phase = Phase::header;
}

void Pipeline::publish(unsigned j)
{
	Job &job = jobs_.job(j);
	FileName tmp, name;
	temp_name(pid_, job.seq, &tmp);
	std::string_view key(job.key, job.key_len);
	// rename(2) is atomic: readers see the old chunk or the new one, never a part.
	if (store_) {
		// The index publishes it: rename, journal record and accounting under one lock.
		std::lock_guard lock(store_->mu());
		int rc = store_->commit(tmp.c_str(), key, job.bytes, opts_.checksum ? job.crc : 0,
					static_cast<uint32_t>(job.lifetime),
					opts_.checksum ? kFlagChecksum : 0);
		if (rc < 0) {
			fail(j, errno_to_kvgpu(rc), -rc);
			return;
		}
		job.reserved = 0;
	} else {
		key_to_name(key, &name);
		if (::renameat(dir_fd_, tmp.c_str(), dir_fd_, name.c_str()) != 0) {
			fail(j, errno_to_kvgpu(errno), errno);
			return;
		}
	}
	job.seq = 0;
	if (opts_.durability == KVGPU_DURABLE_FSYNC && ::fsync(dir_fd_) != 0) {
		fail(j, errno_to_kvgpu(errno), errno);
		return;
	}
	complete(j, 0);
}

void Pipeline::complete(unsigned j, int result)
{
	Job &job = jobs_.job(j);
	job.fd.reset();
	job.phase = Phase::finished;
	if (store_ && job.kind == Kind::evict && job.reserved) {
		std::lock_guard lock(store_->mu());
		store_->unreserve(job.reserved);
		job.reserved = 0;
	}
	if (store_ && job.kind == Kind::load && job.key_len &&
	    (result == KVGPU_ERR_CHECKSUM || result == KVGPU_ERR_CORRUPT)) {
		// Damaged on disk: it can never load again, and it holds capacity.
		std::lock_guard lock(store_->mu());
		store_->drop(std::string_view(job.key, job.key_len), job.store_seq);
	}
	if (job.kind == Kind::prefetch) {
		if (result != 0 && job.pslot >= 0)
			slots_[unsigned(job.pslot)].state = SlotState::free;
	} else if (job.kind == Kind::evict) {
		if (result == 0) {
			c_.evicts.fetch_add(1, std::memory_order_relaxed);
			c_.evict_bytes.fetch_add(job.bytes, std::memory_order_relaxed);
		} else {
			c_.evict_errors.fetch_add(1, std::memory_order_relaxed);
		}
	} else if (result == 0) {
		c_.loads.fetch_add(1, std::memory_order_relaxed);
		c_.load_bytes.fetch_add(job.bytes, std::memory_order_relaxed);
	} else {
		c_.load_errors.fetch_add(1, std::memory_order_relaxed);
	}
	std::lock_guard lock(jobs_.mu());
	if (job.pentry >= 0)
		cache_.finish(job.pentry, job.kind == Kind::load,
			      job.kind == Kind::prefetch && result == 0);
	jobs_.finish_locked(j, result);
}

}  // namespace kvfdp::gpu
