// BlockFs: file create / unlink as LBA writes and deallocates.
#include "model/workload/block_fs.hpp"

#include "placement/classes.hpp"

namespace kvfdp::workload {

BlockFs::BlockFs(uint64_t blocks, uint32_t lbas_per_block, sim::BlockSink &sink,
		 LifetimeRecorder *recorder)
    : alloc_(blocks), lbas_per_block_(lbas_per_block), sink_(&sink), recorder_(recorder)
{
}

Result<BlockFs> BlockFs::make(uint64_t logical_lbas, uint32_t lba_size, sim::BlockSink &sink,
			      LifetimeRecorder *recorder)
{
	if (lba_size == 0 || lba_size > kBlockSize || kBlockSize % lba_size != 0)
		return guidance_error(
			std::errc::invalid_argument,
			"LBA size " + std::to_string(lba_size) +
				" does not divide the 4096-byte file block; use 512 or 4096");
	uint32_t per = kBlockSize / lba_size;
	uint64_t blocks = logical_lbas / per;
	if (blocks == 0)
		return guidance_error(std::errc::invalid_argument,
				      "device too small for one 4 KiB block; raise --capacity");
	return BlockFs(blocks, per, sink, recorder);
}

uint64_t BlockFs::blocks_for(uint64_t bytes)
{
	uint64_t b = (bytes + kBlockSize - 1) / kBlockSize;
	return b ? b : 1;
}

bool BlockFs::create(uint64_t bytes, uint8_t cls, FileExtents &out, uint64_t writer)
{
	uint64_t n = blocks_for(bytes);
	if (n > alloc_.free_blocks())
		return false;
	out.extents = alloc_.allocate(n);
	out.blocks = n;
	out.version = recorder_ ? recorder_->birth(counters_.bytes_written, n * kBlockSize)
				: next_version_;
	++next_version_;
	for (const Extent &e : out.extents)
		sink_->write(e.start * lbas_per_block_, e.len * lbas_per_block_, cls, writer);
	if (out.extents.size() > 1)
		++counters_.fragmented_files;
	++counters_.files_written;
	counters_.bytes_written += n * kBlockSize;
	class_bytes_[cls % 6] += n * kBlockSize;
	return true;
}

void BlockFs::unlink(FileExtents &file)
{
	for (const Extent &e : file.extents)
		sink_->deallocate(e.start * lbas_per_block_, e.len * lbas_per_block_);
	alloc_.release(file.extents);
	if (recorder_)
		recorder_->death(file.version, counters_.bytes_written);
	++counters_.files_unlinked;
	counters_.bytes_deallocated += file.blocks * kBlockSize;
	file.extents.clear();
	file.blocks = 0;
}

nlohmann::json class_bytes_json(const uint64_t (&bytes)[6])
{
	nlohmann::json j = nlohmann::json::object();
	for (unsigned c = 0; c < placement::kNumClasses; ++c)
		if (bytes[c])
			j[placement::class_name(c)] = bytes[c];
	return j;
}

}  // namespace kvfdp::workload
