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
#include "proto/u128_json.hpp"
#include "userspace/daemon/counters.hpp"
#include "userspace/daemon/metrics.hpp"

namespace kvfdp::daemon {

// A 128-bit counter as JSON: a number when it fits in 64 bits, else a decimal string.
using proto::u128_json;

// The `ruh` reply's "members": per member {member, device, nsid, nruhsd, bytes, ruhss: [{index,
// pid, ruhid, earutr, ruamw, bytes}]}, bytes being what kvfdpd wrote to that member per handle
// (c.member_handle_bytes). An unreadable member's RUH Status is an error naming it.
[[nodiscard]] Result<nlohmann::json> members_ruh_json(const nvme::StripeDevice &sd, const CounterSnapshot &c);

// One member's FDP statistics (log 0x22).
struct MemberStats {
	uint32_t member = 0;
	std::string path;
	nvme::FdpStats stats;
};
[[nodiscard]] Result<std::vector<MemberStats>> read_member_stats(const nvme::StripeDevice &sd);
// The `stats` reply's "members": [{member, device, hbmw, mbmw, mbe, waf}] (waf null before
// any host write).
[[nodiscard]] nlohmann::json members_stats_json(const std::vector<MemberStats> &ms);

// The `status` reply's "stripe": {members, stripe_bytes, member_nlb, note, devices: [{member,
// path, nsid, lba_size, nlb, max_transfer, nruh, ru_size, fdp_enabled}]}.
[[nodiscard]] nlohmann::json stripe_status_json(const nvme::StripeDevice &sd);

// Adds the labels member="M" and device="PATH" to every sample of fams.
void label_member(std::vector<MetricFamily> &fams, uint32_t member, const std::string &path);
// Appends src's samples to the family of the same name in dst (a new family when none).
void merge_families(std::vector<MetricFamily> &dst, std::vector<MetricFamily> src);

} // namespace kvfdp::daemon
