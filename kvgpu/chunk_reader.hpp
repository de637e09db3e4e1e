// ChunkReader: opens chunk files for loading and checks their headers, one chunk at a time
// (pread) or a batch's chunks at once through the callers' header-read io_uring.
#pragma once

#include <liburing.h>

#include <cstddef>
#include <mutex>
#include <string_view>
#include <vector>

#include "common/unique_fd.hpp"
#include "kvgpu/chunk_format.hpp"
#include "kvgpu/counters.hpp"

namespace kvfdp::gpu {

// A chunk file opened for loading, its header checked (caller thread).
struct OpenChunk {
	UniqueFd fd;
	bool direct = false;
	ChunkHeader header{};
};

class ChunkReader {
public:
	// Headers read in one submission; a batch larger than this is read in groups.
	static constexpr size_t kHeaderReads = 32;

	ChunkReader() = default;
	~ChunkReader();
	ChunkReader(const ChunkReader &) = delete;
	ChunkReader &operator=(const ChunkReader &) = delete;

	// dir_fd stays the caller's; direct: O_DIRECT where the directory takes it. Sets up the
	// header-read ring: 0, KVGPU_ERR_NOMEM or KVGPU_ERR_URING.
	[[nodiscard]] int init(int dir_fd, bool direct, Counters *c);
	// Opens key's file (O_DIRECT where the directory takes it), header not read.
	[[nodiscard]] int open_file(std::string_view key, OpenChunk *out) const;
	// open_file + pread of the header + check_header.
	[[nodiscard]] int open_chunk(std::string_view key, OpenChunk *out);
	// r: the header read's result (bytes or -errno); closes out->fd on error.
	[[nodiscard]] int check_header(std::string_view key, const char *block, ssize_t r,
				       OpenChunk *out);
	// For every k < n with rc[k] == 0 (opened by open_file), reads and checks chunk k's header:
	// rc[k] becomes check_header's result. Up to kHeaderReads reads go in one submission;
	// callers take turns on the ring.
	void read_headers(size_t n, const char *const *keys, OpenChunk *pre, int *rc);

private:
	// Submits queued reads and reaps every one submitted; res_[i] gets read i's result.
	void submit_and_reap(size_t queued);

	int dir_fd_ = -1;
	bool direct_ = false;
	Counters *c_ = nullptr;
	std::mutex mu_;  // one batch at a time on the ring
	io_uring ring_{};
	bool ring_ok_ = false;
	bool ring_usable_ = true;  // false after a submission failed: headers are pread instead
	void *bufs_ = nullptr;     // kHeaderReads blocks, kBlock aligned
	std::vector<int> res_;
};

}  // namespace kvfdp::gpu
