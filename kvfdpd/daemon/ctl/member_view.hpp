// A striped kvfdpd's members as its control replies and metrics show them: each member's own
// RUH Status with the bytes kvfdpd wrote there per handle, its FDP statistics and WAF, and the
// stripe's geometry. A single namespace has no members view: its replies stay as they were.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "nvme/logs.hpp"
#include "nvme/stripe.hpp"
#include "proto/control.hpp"
#include "kvfdpd/daemon/io/queue_counters.hpp"
#include "proto/metrics.hpp"

namespace kvfdp::daemon {

// The `ruh` reply's "members": per member its own RUH Status with the bytes kvfdpd wrote to
// that member per handle (c.member_handle_bytes). An unreadable member's RUH Status is an
// error naming it.
[[nodiscard]] Result<std::vector<proto::RuhMember>> members_ruh(const nvme::StripeDevice &sd,
								const proto::CounterSnapshot &c);

// One member's FDP statistics (log 0x22).
struct MemberStats {
	uint32_t member = 0;
	std::string path;
	nvme::FdpStats stats;
};
[[nodiscard]] Result<std::vector<MemberStats>> read_member_stats(const nvme::StripeDevice &sd);
// The `stats` reply's "members" (waf empty before any host write).
[[nodiscard]] std::vector<proto::StatsMember> members_stats(const std::vector<MemberStats> &ms);

// The `status` reply's "stripe": the geometry and each member namespace.
[[nodiscard]] proto::StripeStatus stripe_status(const nvme::StripeDevice &sd);

// Adds the labels member="M" and device="PATH" to every sample of fams.
void label_member(std::vector<proto::MetricFamily> &fams, uint32_t member, const std::string &path);
// Appends src's samples to the family of the same name in dst (a new family when none).
void merge_families(std::vector<proto::MetricFamily> &dst, std::vector<proto::MetricFamily> src);

}  // namespace kvfdp::daemon
