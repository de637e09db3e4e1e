// The twin object's JSON.
#include "proto/twin_stats.hpp"

#include "proto/json_read.hpp"

namespace kvfdp::proto {

using nlohmann::json;

void to_json(json &j, const TwinHandle &v)
{
	j = {{"handle", v.handle},
	     {"host_bytes", v.host_bytes},
	     {"relocated_bytes", v.relocated_bytes}};
}

void from_json(const json &j, TwinHandle &v)
{
	read_field(j, "handle", v.handle);
	read_field(j, "host_bytes", v.host_bytes);
	read_field(j, "relocated_bytes", v.relocated_bytes);
}

void to_json(json &j, const TwinCopy &v)
{
	j = {{"waf", opt_json(v.waf)},
	     {"media_bytes", v.media_bytes},
	     {"relocated_bytes", v.relocated_bytes}};
}

void from_json(const json &j, TwinCopy &v)
{
	read_field(j, "waf", v.waf);
	read_field(j, "media_bytes", v.media_bytes);
	read_field(j, "relocated_bytes", v.relocated_bytes);
}

void to_json(json &j, const TwinStats &v)
{
	j = {{"rate", v.rate},
	     {"memory_bytes", v.memory_bytes},
	     {"model_logical_bytes", v.model_logical_bytes},
	     {"model_ru_bytes", v.model_ru_bytes},
	     {"records", v.records},
	     {"dropped", v.dropped},
	     {"model_errors", v.model_errors},
	     {"host_bytes", v.host_bytes},
	     {"placed", v.placed},
	     {"none", v.none},
	     {"saved_bytes", v.saved_bytes},
	     {"handles", v.handles}};
}

void from_json(const json &j, TwinStats &v)
{
	read_field(j, "rate", v.rate);
	read_field(j, "memory_bytes", v.memory_bytes);
	read_field(j, "model_logical_bytes", v.model_logical_bytes);
	read_field(j, "model_ru_bytes", v.model_ru_bytes);
	read_field(j, "records", v.records);
	read_field(j, "dropped", v.dropped);
	read_field(j, "model_errors", v.model_errors);
	read_field(j, "host_bytes", v.host_bytes);
	read_field(j, "placed", v.placed);
	read_field(j, "none", v.none);
	read_field(j, "saved_bytes", v.saved_bytes);
	read_array(j, "handles", v.handles);
}

}  // namespace kvfdp::proto
