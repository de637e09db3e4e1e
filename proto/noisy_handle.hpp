// The noisy-handle rule (docs/twin.md, "Noisy handles"): a handle whose reclaim units the
// twin's GC copies from far more than from the others' (WARP, FAST '26: a "noisy RUH" whose
// churn raises every handle's WAF). `kvfdp status` prints its one warning line and carries it
// in -o json under kNoisyHandleKey.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/twin_stats.hpp"

namespace kvfdp::proto {

// The key in `kvfdp status -o json`: the NoisyHandle, null when none, absent without a twin.
inline constexpr const char *kNoisyHandleKey = "noisy_handle";

// The rule's thresholds, all ratios of the handles' own bytes (scale-free).
inline constexpr double kNoisyMinShare = 0.5;  // more than this of all relocations
inline constexpr double kNoisyMinLead = 4.0;   // at least this times the next handle's
inline constexpr double kNoisyMinRelocatedPerHost =
	0.05;  // relocations at least this of host bytes

// A handle the rule names: its share of the handles' relocated bytes and of their host bytes.
struct NoisyHandle {
	uint32_t handle = 0;
	double relocated_share = 0;
	double host_share = 0;
	bool drive = false;  // the figures are the drive's own (FDP events log), not the twin's
};

// The handle that takes more than kNoisyMinShare of the relocated bytes and at least
// kNoisyMinLead times the next handle's, where the relocations add up to at least
// kNoisyMinRelocatedPerHost of the host bytes and two or more handles were written; else none
// (an idle twin, a balanced one, or one handle doing everything).
[[nodiscard]] std::optional<NoisyHandle> find_noisy_handle(const std::vector<TwinHandle> &handles);
// The rule on the drive's own figures (the stats reply's drive_handles) where it names a
// handle there, else on the twin's; none without either.
[[nodiscard]] std::optional<NoisyHandle>
find_noisy_handle(const std::optional<std::vector<TwinHandle>> &drive,
		  const std::vector<TwinHandle> &twin);
// Its one line: what it takes, why, what to do.
[[nodiscard]] std::string noisy_handle_line(const NoisyHandle &n);
// {"handle", "relocated_share", "host_share", "source": "drive" | "twin", "warning":
// noisy_handle_line}.
[[nodiscard]] nlohmann::json noisy_handle_json(const NoisyHandle &n);

}  // namespace kvfdp::proto
