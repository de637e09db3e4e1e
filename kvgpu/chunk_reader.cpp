// ChunkReader: a chunk file opened for loading, its header read (pread or the header-read
// ring) and checked against the key and the file's size.
#include "kvgpu/chunk_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "kvgpu/errors.hpp"
#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {

namespace {

// res_ of a read that was never submitted or reaped.
constexpr int kNotRead = INT32_MIN;

}  // namespace

ChunkReader::~ChunkReader()
{
	if (ring_ok_)
		io_uring_queue_exit(&ring_);
	std::free(bufs_);
}

int ChunkReader::init(int dir_fd, bool direct, Counters *c)
{
	dir_fd_ = dir_fd;
	direct_ = direct;
	c_ = c;
	bufs_ = std::aligned_alloc(kBlock, kHeaderReads * kBlock);
	res_.resize(kHeaderReads);
	if (!bufs_)
		return KVGPU_ERR_NOMEM;
	if (io_uring_queue_init(unsigned(kHeaderReads), &ring_, 0) < 0)
		return KVGPU_ERR_URING;
	ring_ok_ = true;
	return 0;
}

int ChunkReader::open_file(std::string_view key, OpenChunk *out) const
{
	FileName name;
	key_to_name(key, &name);
	bool direct = direct_;
	int fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
	if (fd < 0 && errno == EINVAL && direct) {
		direct = false;
		fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return errno == ENOENT ? KVGPU_ERR_NOT_FOUND : errno_to_kvgpu(errno);
	out->fd.reset(fd);
	out->direct = direct;
	return 0;
}

int ChunkReader::open_chunk(std::string_view key, OpenChunk *out)
{
	if (int rc = open_file(key, out); rc < 0)
		return rc;
	alignas(kBlock) char block[kBlock];
	ssize_t r = ::pread(out->fd.get(), block, kBlock, 0);
	return check_header(key, block, r < 0 ? -errno : r, out);
}

int ChunkReader::check_header(std::string_view key, const char *block, ssize_t r, OpenChunk *out)
{
	int fd = out->fd.get();
	int rc = 0;
	struct stat st {};
	if (r < 0) {
		c_->last_errno.store(int(-r), std::memory_order_relaxed);
		rc = KVGPU_ERR_IO;
	} else if (r < static_cast<ssize_t>(kBlock)) {
		rc = KVGPU_ERR_CORRUPT;
	} else if (int d = decode_header(block, key, &out->header); d < 0) {
		rc = d == -ENOENT ? KVGPU_ERR_NOT_FOUND : KVGPU_ERR_CORRUPT;
	} else if (::fstat(fd, &st) != 0 ||
		   uint64_t(st.st_size) < file_bytes(out->header.payload_bytes) ||
		   out->header.payload_bytes == 0) {
		rc = KVGPU_ERR_CORRUPT;
	}
	if (rc < 0)
		out->fd.reset();
	return rc;
}

void ChunkReader::read_headers(size_t n, const char *const *keys, OpenChunk *pre, int *rc)
{
	std::lock_guard lock(mu_);
	alignas(kBlock) char own[kBlock];  // for a header not read through the ring
	auto read_here = [&](size_t k) {
		ssize_t r = ::pread(pre[k].fd.get(), own, kBlock, 0);
		rc[k] = check_header(std::string_view(keys[k], ::strlen(keys[k])), own,
				     r < 0 ? -errno : r, &pre[k]);
	};
	if (!ring_usable_) {
		for (size_t k = 0; k < n; k++)
			if (rc[k] == 0)
				read_here(k);
		return;
	}
	for (size_t i = 0; i < n;) {
		// Up to kHeaderReads at a time, each into its own block of bufs_.
		size_t first = i, queued = 0;
		for (; i < n && queued < kHeaderReads; i++) {
			if (rc[i] != 0)
				continue;
			io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
			io_uring_prep_read(sqe, pre[i].fd.get(),
					   static_cast<char *>(bufs_) + queued * kBlock, kBlock, 0);
			io_uring_sqe_set_data64(sqe, queued);
			queued++;
		}
		submit_and_reap(queued);
		size_t q = 0;
		for (size_t k = first; k < i; k++) {
			if (rc[k] != 0)
				continue;
			if (res_[q] == kNotRead)
				read_here(k);
			else
				rc[k] = check_header(std::string_view(keys[k], ::strlen(keys[k])),
						     static_cast<char *>(bufs_) + q * kBlock,
						     res_[q], &pre[k]);
			q++;
		}
	}
}

void ChunkReader::submit_and_reap(size_t queued)
{
	std::fill(res_.begin(), res_.end(), kNotRead);
	// Every read submitted is reaped here (an interrupted wait is retried), so no stale
	// completion is left for the next batch; what could not be submitted stays in the
	// submission queue only if the ring failed, and then the ring is not used again.
	size_t submitted = 0;
	while (submitted < queued) {
		int r = io_uring_submit(&ring_);
		if (r > 0)
			submitted += size_t(r);
		else if (r != -EINTR && r != -EAGAIN && r != -EBUSY)
			break;
	}
	size_t got = 0;
	while (got < submitted) {
		io_uring_cqe *cqe = nullptr;
		int r = io_uring_wait_cqe(&ring_, &cqe);
		if (r == -EINTR)
			continue;
		if (r < 0)
			break;
		res_[size_t(io_uring_cqe_get_data64(cqe))] = cqe->res;
		io_uring_cqe_seen(&ring_, cqe);
		got++;
	}
	if (submitted < queued || got < submitted)
		ring_usable_ = false;  // its buffers may still be written: never again
}

}  // namespace kvfdp::gpu
