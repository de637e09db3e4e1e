// The `stats` reply's "twin" object (docs/twin.md): kvfdpd's live WAF twin's projection with
// its placement and with none. kvfdpd fills it (model/twin/report.cpp), `kvfdp stats`
// prints it and carries it in -o json under the same key.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvfdp::proto {

// The key of the twin's object in the stats reply and in `kvfdp stats -o json`.
inline constexpr const char *kTwinKey = "twin";
// The stats reply's per-handle relocations the drive itself reports (FDP events log).
inline constexpr const char *kDriveHandlesKey = "drive_handles";

// One copy of the model: its WAF (empty until something was written), its projected media
// and relocated bytes.
struct TwinCopy {
	std::optional<double> waf;
	uint64_t media_bytes = 0;
	uint64_t relocated_bytes = 0;
};
// One handle of the placed copy (model::HandleStats, projected): the host bytes written
// through it and the bytes GC relocated out of its reclaim units (docs/twin.md, Noisy handles).
struct TwinHandle {
	uint32_t handle = 0;
	uint64_t host_bytes = 0;
	uint64_t relocated_bytes = 0;
};
// twin::TwinReport as reported: bytes are the sampled models' scaled back to the drive.
struct TwinStats {
	double rate = 0;  // fraction of the LBA space (and of each RU) modelled
	uint64_t memory_bytes = 0;
	uint64_t model_logical_bytes = 0;
	uint64_t model_ru_bytes = 0;
	uint64_t records = 0;
	uint64_t dropped = 0;
	uint64_t model_errors = 0;
	uint64_t host_bytes = 0;
	TwinCopy placed, none;
	int64_t saved_bytes = 0;  // none's media bytes minus placed's (may be < 0)
	std::vector<TwinHandle>
		handles;  // the placed copy's, by handle (empty from an older kvfdpd)
};
void to_json(nlohmann::json &j, const TwinHandle &v);
void from_json(const nlohmann::json &j, TwinHandle &v);
void to_json(nlohmann::json &j, const TwinCopy &v);
void from_json(const nlohmann::json &j, TwinCopy &v);
void to_json(nlohmann::json &j, const TwinStats &v);
void from_json(const nlohmann::json &j, TwinStats &v);

}  // namespace kvfdp::proto
