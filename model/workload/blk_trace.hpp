// Replay of a block trace as `kvfdp record` writes it: CSV with the header
// `t_us,op,slba,nlb,class[,writer]`, op W (write) or D (deallocate), 4096-byte LBAs, class
// 0..5, writer an opaque non-negative integer (who wrote; 0 unknown). Rows are in time order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/sim/workload.hpp"

namespace kvfdp::workload {

// LBA size of the trace's slba / nlb columns.
inline constexpr uint32_t kBlkTraceLbaSize = 4096;

struct BlkRecord {
	uint64_t t_us = 0;
	uint64_t slba = 0;
	uint32_t nlb = 0;
	bool write = true;  // false: deallocate
	uint8_t cls = 0;
	uint64_t writer = 0;  // the optional writer column; 0 when absent
	uint32_t line = 0;    // line number in the file, for errors
};

// Parses one data line of 5 or 6 fields (fields = 0 accepts either; 5 or 6 requires that
// many, as the header declared). Errors read "NAME:LINE: <what>".
[[nodiscard]] Result<BlkRecord> parse_blk_line(const std::string &line, const std::string &name,
					       uint32_t line_no, unsigned fields = 0);

// Loads a trace. capacity_lbas (4096-byte LBAs, 0 = unchecked) is the logical capacity the
// trace addresses: a record beyond it is an error naming its line, and so is a t_us earlier
// than the line before. path must be a regular file.
[[nodiscard]] Result<std::vector<BlkRecord>> load_blk_trace(const std::string &path,
							    uint64_t capacity_lbas);

class BlkTraceWorkload : public sim::Workload {
public:
	BlkTraceWorkload(std::string name, std::vector<BlkRecord> records);

	[[nodiscard]] std::string name() const override { return name_; }
	// none: class 0; hint: the trace's class column; oracle: lifetime quartiles, a
	// write dying when half of its blocks are overwritten or deallocated. Every write
	// carries the trace's writer column.
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	[[nodiscard]] nlohmann::json extra() const override;

private:
	std::string name_;
	std::vector<BlkRecord> records_;
	uint64_t written_bytes_ = 0;
	uint64_t deallocated_bytes_ = 0;
};

}  // namespace kvfdp::workload
