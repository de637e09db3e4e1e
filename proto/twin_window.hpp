// The `twin_window` reply (docs/control.md): the recent window of kvfdpd's live WAF twin, the
// records its sampled model was fed last, in that model's LBAs, with the sampling rate and the
// sampled model's shape. kvfdpd fills it (model/twin/window.cpp); `kvfdp advise --twin`
// replays it (model/sim/window_source.cpp), and `--save-window` writes it to a file as is. A
// reply is one page of at most kTwinWindowPage records; the CLI asks page after page.
#pragma once

#include <cstdint>
#include <optional>
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

// The most records one twin_window reply holds (docs/control.md, twin_window): a reply is a
// page of the window, at most about 25 bytes a record, well under kMaxReplyBytes.
inline constexpr uint64_t kTwinWindowPage = 16384;

// {"cmd":"twin_window","from":N,"max":M}: the records numbered from N on (a record's number
// counts every record ever put in the window, 0 first; absent: the oldest held), at most M
// (absent, 0 or over kTwinWindowPage: kTwinWindowPage).
struct TwinWindowRequest {
	std::optional<uint64_t> from;
	uint64_t max = kTwinWindowPage;
};
void to_json(nlohmann::json &j, const TwinWindowRequest &r);
// The request's arguments; false with the one-line refusal when one is not a non-negative
// integer.
[[nodiscard]] bool parse_twin_window_request(const nlohmann::json &args, TwinWindowRequest &r,
					     std::string &error);

struct TwinWindow {
	double rate = 0;  // fraction of the LBA space (and of each RU) modelled
	TwinWindowModel model;
	uint64_t capacity = 0;  // records the window holds at most
	uint64_t total = 0;     // records ever put in it (older ones were overwritten)
	uint64_t dropped = 0;   // records the queues' rings dropped (never reached the twin)
	uint64_t span_ms = 0;   // from the oldest record held to the newest
	uint64_t age_ms = 0;    // since the newest record (when the reply was made)
	// The number of records[0] (total - held for the oldest) and of the record after the last
	// one here: the next page's "from"; next == total: this page ends at the newest.
	uint64_t first = 0;
	uint64_t next = 0;
	std::vector<TwinWindowRecord> records;  // oldest first
};
void to_json(nlohmann::json &j, const TwinWindowModel &v);
void from_json(const nlohmann::json &j, TwinWindowModel &v);
void to_json(nlohmann::json &j, const TwinWindow &v);
// Lenient like every reply (a missing key keeps its default); a record that is not an array
// of four non-negative integers with a known op is left out.
void from_json(const nlohmann::json &j, TwinWindow &v);

}  // namespace kvfdp::proto
