// The twin's stats object and its metric families (its text is proto/twin_text.cpp's).
#include "model/twin/report.hpp"

#include <optional>

#include "proto/control.hpp"
#include "proto/metrics.hpp"

namespace kvfdp::twin {

namespace {

proto::TwinCopy copy_of(double waf, uint64_t host, uint64_t media, uint64_t relocated)
{
	return {host ? std::optional<double>(waf) : std::nullopt, media, relocated};
}

}  // namespace

proto::TwinStats report_stats(const TwinReport &t)
{
	proto::TwinStats s;
	s.rate = t.rate;
	s.memory_bytes = t.memory_bytes;
	s.model_logical_bytes = t.model_logical_bytes;
	s.model_ru_bytes = t.model_ru_bytes;
	s.records = t.records;
	s.dropped = t.dropped;
	s.model_errors = t.model_errors;
	s.host_bytes = t.host_bytes;
	s.placed =
		copy_of(t.waf_placed, t.host_bytes, t.media_bytes_placed, t.relocated_bytes_placed);
	s.none = copy_of(t.waf_none, t.host_bytes, t.media_bytes_none, t.relocated_bytes_none);
	s.saved_bytes = t.saved_bytes;
	for (uint32_t h = 0; h < t.handles_placed.size(); h++)
		s.handles.push_back(
			{h, t.handles_placed[h].host_bytes, t.handles_placed[h].relocated_bytes});
	return s;
}

std::string metrics_text(const TwinReport &t)
{
	return proto::render_metrics(proto::twin_families(report_stats(t)));
}

}  // namespace kvfdp::twin
