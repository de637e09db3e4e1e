// A filesystem-like layer over a BlockSink: files are created on extents of 4 KiB blocks
// (ExtentAllocator), written with a lifetime class, and unlinked with a deallocate.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.hpp"
#include "model/sim/workload.hpp"
#include "model/workload/extent_alloc.hpp"
#include "model/workload/lifetime.hpp"

namespace kvfdp::workload {

// Where a file's data lives, and which written version it is (for the oracle).
struct FileExtents {
	std::vector<Extent> extents;
	uint64_t blocks = 0;
	uint64_t version = 0;
};

struct FsCounters {
	uint64_t files_written = 0;
	uint64_t files_unlinked = 0;
	uint64_t bytes_written = 0;  // block-rounded
	uint64_t bytes_deallocated = 0;
	uint64_t fragmented_files = 0;  // files that needed more than one extent
};

class BlockFs {
public:
	static constexpr uint32_t kBlockSize = 4096;

	// A filesystem over the sink's whole LBA range. lba_size must divide 4096.
	// recorder, when set, gets a birth per file and a death per unlink.
	[[nodiscard]] static Result<BlockFs> make(uint64_t logical_lbas, uint32_t lba_size,
						  sim::BlockSink &sink, LifetimeRecorder *recorder);

	// Blocks a file of `bytes` occupies (rounded up, at least one).
	[[nodiscard]] static uint64_t blocks_for(uint64_t bytes);

	// Allocates and writes a file of `bytes` in class cls for writer. False (nothing
	// written) when fewer blocks are free than it needs: the caller evicts and retries.
	[[nodiscard]] bool create(uint64_t bytes, uint8_t cls, FileExtents &out,
				  uint64_t writer = 0);
	// Ends the warm-up on the sink (see sim::BlockSink::begin_measurement).
	void begin_measurement() { sink_->begin_measurement(); }
	// Deallocates the file's blocks on the sink and frees them.
	void unlink(FileExtents &file);

	// The version number the next create() will get (0, 1, ... in creation order).
	[[nodiscard]] uint64_t next_version() const { return next_version_; }
	[[nodiscard]] uint64_t total_blocks() const { return alloc_.total_blocks(); }
	[[nodiscard]] uint64_t free_blocks() const { return alloc_.free_blocks(); }
	[[nodiscard]] uint64_t used_blocks() const { return total_blocks() - free_blocks(); }
	// The lifetime clock: bytes written so far.
	[[nodiscard]] uint64_t clock() const { return counters_.bytes_written; }
	[[nodiscard]] const FsCounters &counters() const { return counters_; }
	[[nodiscard]] uint64_t class_bytes(uint8_t cls) const { return class_bytes_[cls % 6]; }

private:
	BlockFs(uint64_t blocks, uint32_t lbas_per_block, sim::BlockSink &sink,
		LifetimeRecorder *recorder);

	ExtentAllocator alloc_;
	uint32_t lbas_per_block_;
	sim::BlockSink *sink_;
	LifetimeRecorder *recorder_;
	uint64_t next_version_ = 0;
	FsCounters counters_;
	uint64_t class_bytes_[6] = {};
};

// Bytes written per class as a workload's extra() reports them: {class name: bytes}, for the
// classes that wrote any.
[[nodiscard]] nlohmann::json class_bytes_json(const uint64_t (&bytes)[6]);

}  // namespace kvfdp::workload
