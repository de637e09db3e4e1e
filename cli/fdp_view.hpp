// FDP data as the CLI shows it: names for log fields, 128-bit counters in JSON, the device
// identity document. Decoding itself is nvme/logs.hpp's.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "nvme/device.hpp"
#include "proto/u128_json.hpp"
#include "cli/units.hpp"

namespace kvfdp::cli {

// "ru-not-fully-written", "invalid-pid", ...; "type-0xNN" when unknown.
[[nodiscard]] std::string event_type_name(uint8_t type);
// "unused", "host-specified", "controller-specified".
[[nodiscard]] std::string ruha_name(uint8_t ruha);
// "initially-isolated", "persistently-isolated".
[[nodiscard]] std::string ruht_name(uint8_t ruht);

// j[key] as an unsigned integer; dflt when j is not an object, the key is missing, or the
// value is not a non-negative integer.
[[nodiscard]] uint64_t json_u64(const nlohmann::json &j, const char *key, uint64_t dflt = 0);
// j[key] as a string; dflt when missing or not a string.
[[nodiscard]] std::string json_str(const nlohmann::json &j, const char *key, std::string dflt = {});

// The name shown for a device: its path, or "model" for the FDP SSD model (whose path is a
// temporary data file).
[[nodiscard]] std::string display_path(const nvme::DeviceInfo &info);
// The device's identity as JSON (path, backend, nsid, lba_size, nlb, fdp flags, ...).
[[nodiscard]] nlohmann::json device_json(const nvme::DeviceInfo &info);

}  // namespace kvfdp::cli
