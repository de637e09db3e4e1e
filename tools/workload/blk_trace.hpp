// Replay of a block trace as `kvfdp record` writes it: CSV with the header
// `t_us,op,slba,nlb,class`, op W (write) or D (deallocate), 4096-byte LBAs, class 0..5.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/sim/workload.hpp"

namespace kvfdp::workload {

// LBA size of the trace's slba / nlb columns.
inline constexpr uint32_t kBlkTraceLbaSize = 4096;

struct BlkRecord {
	uint64_t t_us = 0;
	uint64_t slba = 0;
	uint32_t nlb = 0;
	bool write = true;  // false: deallocate
	uint8_t cls = 0;
	uint32_t line = 0;  // line number in the file, for errors
};

// Parses one data line. Errors read "NAME:LINE: <what>".
[[nodiscard]] Result<BlkRecord> parse_blk_line(const std::string &line, const std::string &name,
					       uint32_t line_no);

// Loads a trace. capacity_lbas (4096-byte LBAs, 0 = unchecked) is the logical capacity the
// trace addresses: a record beyond it is an error naming its line.
[[nodiscard]] Result<std::vector<BlkRecord>> load_blk_trace(const std::string &path,
							    uint64_t capacity_lbas);

class BlkTraceWorkload : public sim::Workload {
public:
	BlkTraceWorkload(std::string name, std::vector<BlkRecord> records);

	[[nodiscard]] std::string name() const override { return name_; }
	// none: class 0; hint: the trace's class column; oracle: lifetime quartiles, a
	// write dying when half of its blocks are overwritten or deallocated.
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	[[nodiscard]] std::vector<sim::Placement> placements() const override { return sim::all_placements(); }
	[[nodiscard]] nlohmann::json extra() const override;

private:
	std::string name_;
	std::vector<BlkRecord> records_;
	uint64_t written_bytes_ = 0;
	uint64_t deallocated_bytes_ = 0;
};

} // namespace kvfdp::workload
