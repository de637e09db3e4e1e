// Capacity, counters and JSON shared by the chunk-file workloads.
#include "model/workload/chunk_files.hpp"

#include <string>

namespace kvfdp::workload {

Result<uint64_t> store_blocks(const BlockFs &fs, const ChunkFileConfig &cfg, uint64_t largest_bytes,
			      const char *what, ChunkFileStats &st)
{
	if (!(cfg.utilisation > 0.0 && cfg.utilisation <= 1.0))
		return guidance_error(std::errc::invalid_argument,
				      "store utilisation must be in (0, 1] (--util)");
	const uint64_t cap_blocks = static_cast<uint64_t>(
		static_cast<long double>(fs.total_blocks()) * cfg.utilisation);
	if (BlockFs::blocks_for(largest_bytes) > cap_blocks)
		return guidance_error(std::errc::invalid_argument,
				      std::string(what) +
					      " does not fit in the store; lower "
					      "--kv-scale or raise --capacity / --util");
	st.capacity_bytes = cap_blocks * BlockFs::kBlockSize;
	return cap_blocks;
}

void finish_stats(const BlockFs &fs, ChunkFileStats &st)
{
	st.bytes_written = fs.counters().bytes_written;
	st.bytes_deallocated = fs.counters().bytes_deallocated;
}

void add_chunk_file_json(nlohmann::json &j, const ChunkFileStats &s)
{
	j["chunks_written"] = s.chunks_written;
	j["evictions"] = s.evictions;
	j["store_capacity_bytes"] = s.capacity_bytes;
	j["bytes_written"] = s.bytes_written;
	j["bytes_deallocated"] = s.bytes_deallocated;
}

}  // namespace kvfdp::workload
