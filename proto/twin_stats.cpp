// The twin object's JSON: one field table per struct (proto/json_fields.hpp).
#include "proto/twin_stats.hpp"

#include "proto/json_fields.hpp"

namespace kvfdp::proto {

namespace {

constexpr auto kTwinHandle = std::tuple{field("handle", &TwinHandle::handle),
					field("host_bytes", &TwinHandle::host_bytes),
					field("relocated_bytes", &TwinHandle::relocated_bytes)};

constexpr auto kTwinCopy =
	std::tuple{nullable("waf", &TwinCopy::waf), field("media_bytes", &TwinCopy::media_bytes),
		   field("relocated_bytes", &TwinCopy::relocated_bytes)};

constexpr auto kTwinStats =
	std::tuple{field("rate", &TwinStats::rate),
		   field("memory_bytes", &TwinStats::memory_bytes),
		   field("model_logical_bytes", &TwinStats::model_logical_bytes),
		   field("model_ru_bytes", &TwinStats::model_ru_bytes),
		   field("records", &TwinStats::records),
		   field("dropped", &TwinStats::dropped),
		   field("model_errors", &TwinStats::model_errors),
		   field("host_bytes", &TwinStats::host_bytes),
		   field("placed", &TwinStats::placed),
		   field("none", &TwinStats::none),
		   field("saved_bytes", &TwinStats::saved_bytes),
		   field("handles", &TwinStats::handles)};

}  // namespace

KVFDP_JSON_FIELDS(TwinHandle, kTwinHandle);
KVFDP_JSON_FIELDS(TwinCopy, kTwinCopy);
KVFDP_JSON_FIELDS(TwinStats, kTwinStats);

}  // namespace kvfdp::proto
