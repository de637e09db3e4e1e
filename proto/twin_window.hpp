// The `twin_window` reply (docs/control.md): the recent window of kvfdpd's live WAF twin, the
// records its sampled model was fed last, in that model's LBAs, with the sampling rate and the
// sampled model's shape. kvfdpd fills it (userspace/twin/window.cpp); `kvfdp advise --twin`
// replays it (tools/sim/window_source.cpp), and `--save-window` writes it to a file as is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvfdp::proto {

// What a window record asked of the sampled model (twin::Op's values).
enum class TwinWindowOp : uint8_t {
	write = 1,
	discard = 2,
	write_zeroes = 3,  // the model trims, as for a discard
};

// One record of the window: [lba, nlb) of the sampled model, in its LBAs. On the wire a
// record is the array [lba, nlb, handle, op] (records are many; keys would triple the size).
struct TwinWindowRecord {
	uint64_t lba = 0;
	uint32_t nlb = 0;
	uint16_t handle = 0;  // writes: the handle kvfdpd placed it on
	TwinWindowOp op = TwinWindowOp::write;
};

// The sampled model both of the twin's copies run (twin::TwinPlan's model).
struct TwinWindowModel {
	uint64_t logical_bytes = 0;
	uint64_t ru_size = 0;
	uint32_t lba_size = 4096;
	uint32_t mapping_unit = 4096;
	uint16_t handles = 1;  // kvfdpd's handles: the placed copy writes through them
	double op = 0.07;      // over-provisioning the twin assumes (--twin-op)
	std::string gc = "greedy";
};

struct TwinWindow {
	double rate = 0;  // fraction of the LBA space (and of each RU) modelled
	TwinWindowModel model;
	uint64_t capacity = 0;  // records the window holds at most
	uint64_t total = 0;     // records ever put in it (older ones were overwritten)
	uint64_t dropped = 0;   // records the queues' rings dropped (never reached the twin)
	uint64_t span_ms = 0;   // from the oldest record to the newest
	uint64_t age_ms = 0;    // since the newest record (when the reply was made)
	std::vector<TwinWindowRecord> records;  // oldest first
};
void to_json(nlohmann::json &j, const TwinWindowModel &v);
void from_json(const nlohmann::json &j, TwinWindowModel &v);
void to_json(nlohmann::json &j, const TwinWindow &v);
// Lenient like every reply (a missing key keeps its default); a record that is not an array
// of four non-negative integers with a known op is left out.
void from_json(const nlohmann::json &j, TwinWindow &v);

}  // namespace kvfdp::proto
