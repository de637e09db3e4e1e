// Prometheus text exposition of kvfdpd's counters (for node_exporter's textfile collector).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "userspace/daemon/counters.hpp"

namespace kvfdp::daemon {

struct MetricsInput {
	CounterSnapshot counters;
	uint64_t generation = 0;
	uint16_t nruh = 0;
	std::vector<uint16_t> pids;  // pid per handle index
	bool tagger_active = false;
	bool zero_copy = false;  // the data path (ublk::DataMode)
	uint64_t uptime_s = 0;
};

// The metric names are listed in docs/control.md (metrics).
[[nodiscard]] std::string format_metrics(const MetricsInput &m);

} // namespace kvfdp::daemon
