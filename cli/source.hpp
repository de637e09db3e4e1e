// Reading the same facts from kvfdpd or from a device: handles (RUH Status plus the class
// map and kvfdpd's per-handle bytes), FDP statistics, and the device kvfdpd serves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "nvme/logs.hpp"
#include "nvme/emulated.hpp"
#include "proto/control.hpp"
#include "cli/command_context.hpp"

namespace kvfdp::cli {

// One member of a striped kvfdpd: its own RUH Status with kvfdpd's bytes per handle there.
struct RuhMember {
	uint32_t member = 0;
	std::string device;
	uint64_t bytes = 0;  // kvfdpd wrote to this member, all handles
	std::vector<proto::RuhRow> rows;
};

struct RuhView {
	std::string source;  // "daemon" or "device"
	std::string device;  // path of the namespace (or model; a stripe: the members' paths)
	std::string backend;
	uint32_t lba_size = 0;
	std::vector<proto::RuhRow> rows;  // a stripe: the totals (RUAMW summed over members)
	uint64_t stripe_bytes = 0;        // a stripe's unit; 0: one namespace
	std::vector<RuhMember> members;   // a stripe's members; empty: one namespace
};

// RUH Status of an open device with the default class map (ARCHITECTURE.md decision 4).
[[nodiscard]] Result<RuhView> ruh_from_device(nvme::Device &dev);
// kvfdpd's `ruh` reply joined with its `status` device facts.
[[nodiscard]] Result<RuhView> ruh_from_daemon_data(const nlohmann::json &ruh,
						   const nlohmann::json &status);
[[nodiscard]] nlohmann::json to_json(const RuhView &v);

// Reads log 0x22 from the device.
[[nodiscard]] Result<nvme::FdpStats> stats_from_device(nvme::Device &dev);
// The counters of kvfdpd's `stats` reply.
[[nodiscard]] Result<nvme::FdpStats> stats_from_daemon_data(const nlohmann::json &data);

// The error a subcommand shows when a direct device has no usable FDP.
[[nodiscard]] std::optional<Error> fdp_unusable(const nvme::DeviceInfo &info);

// Opens the device to read logs from: --device / --backend, or the namespace kvfdpd serves
// (from its `status`), for commands kvfdpd does not answer itself (configs, events).
[[nodiscard]] Result<std::unique_ptr<nvme::Device>> open_log_device(CommandContext &ctx);

}  // namespace kvfdp::cli
