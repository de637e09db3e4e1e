// Names and JSON forms of FDP log fields.
#include "cli/fdp_view.hpp"

#include <cstdio>

#include "nvme/logs.hpp"
#include "proto/backend_kind.hpp"

namespace kvfdp::cli {

std::string event_type_name(uint8_t type)
{
	std::string n = nvme::fdp_event_name(type);
	if (n == "unknown") {
		char buf[16];
		std::snprintf(buf, sizeof buf, "type-0x%02x", type);
		return buf;
	}
	return n;
}

std::string ruha_name(uint8_t ruha)
{
	switch (ruha) {
	case nvme::kRuhaUnused: return "unused";
	case nvme::kRuhaHostSpecified: return "host-specified";
	case nvme::kRuhaControllerSpecified: return "controller-specified";
	default: return "reserved-" + std::to_string(ruha);
	}
}

std::string ruht_name(uint8_t ruht)
{
	switch (ruht) {
	case nvme::kRuhtInitiallyIsolated: return "initially-isolated";
	case nvme::kRuhtPersistentlyIsolated: return "persistently-isolated";
	default: return "reserved-" + std::to_string(ruht);
	}
}

uint64_t json_u64(const nlohmann::json &j, const char *key, uint64_t dflt)
{
	if (!j.is_object() || !j.contains(key))
		return dflt;
	const auto &v = j[key];
	if (v.is_number_unsigned())
		return v.get<uint64_t>();
	if (v.is_number_integer() && v.get<int64_t>() >= 0)
		return static_cast<uint64_t>(v.get<int64_t>());
	return dflt;
}

std::string json_str(const nlohmann::json &j, const char *key, std::string dflt)
{
	if (j.is_object() && j.contains(key) && j[key].is_string())
		return j[key].get<std::string>();
	return dflt;
}

std::string display_path(const nvme::DeviceInfo &info)
{
	return proto::parse_backend(info.backend) == proto::BackendKind::model
		       ? std::string("model")
		       : info.path;
}

nlohmann::json device_json(const nvme::DeviceInfo &i)
{
	return {{"path", display_path(i)},
		{"backend", i.backend},
		{"nsid", i.nsid},
		{"lba_size", i.lba_size},
		{"nlb", i.nlb},
		{"size_bytes", i.nlb * i.lba_size},
		{"max_transfer", i.max_transfer},
		{"fdp_supported", i.fdp_supported},
		{"fdp_enabled", i.fdp_enabled},
		{"endgid", i.endgid},
		{"config_index", i.config_index},
		{"rgif", i.rgif},
		{"nrg", i.nrg},
		{"nruh", i.nruh},
		{"ru_size", i.ru_size},
		{"volatile_cache", i.volatile_cache},
		{"fua", i.fua}};
}

}  // namespace kvfdp::cli
