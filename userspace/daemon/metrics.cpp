// Prometheus text formatting.
#include "userspace/daemon/metrics.hpp"

#include <string>

namespace kvfdp::daemon {

namespace {

void header(std::string &o, const char *name, const char *type, const char *help)
{
	o += "# HELP ";
	o += name;
	o += ' ';
	o += help;
	o += "\n# TYPE ";
	o += name;
	o += ' ';
	o += type;
	o += '\n';
}

void sample(std::string &o, const char *name, const std::string &labels, uint64_t v)
{
	o += name;
	if (!labels.empty())
		o += "{" + labels + "}";
	o += ' ';
	o += std::to_string(v);
	o += '\n';
}

} // namespace

std::string format_metrics(const MetricsInput &m)
{
	const CounterSnapshot &c = m.counters;
	std::string o;
	header(o, "kvfdp_class_bytes_total", "counter", "Bytes written per lifetime class.");
	for (unsigned i = 0; i < kNumClasses; i++)
		sample(o, "kvfdp_class_bytes_total", std::string("class=\"") + class_name(i) + "\"", c.class_bytes[i]);
	header(o, "kvfdp_class_writes_total", "counter", "Write requests per lifetime class.");
	for (unsigned i = 0; i < kNumClasses; i++)
		sample(o, "kvfdp_class_writes_total", std::string("class=\"") + class_name(i) + "\"", c.class_writes[i]);
	header(o, "kvfdp_handle_bytes_total", "counter", "Bytes written per placement handle.");
	const unsigned nh = m.nruh ? m.nruh : 1;
	for (unsigned h = 0; h < nh && h < kMaxHandles; h++) {
		std::string l = "handle=\"" + std::to_string(h) + "\"";
		if (h < m.pids.size())
			l += ",pid=\"" + std::to_string(m.pids[h]) + "\"";
		sample(o, "kvfdp_handle_bytes_total", l, c.handle_bytes[h]);
	}
	header(o, "kvfdp_io_total", "counter", "Requests served per operation.");
	sample(o, "kvfdp_io_total", "op=\"read\"", c.reads);
	sample(o, "kvfdp_io_total", "op=\"write\"", c.writes);
	sample(o, "kvfdp_io_total", "op=\"flush\"", c.flushes);
	sample(o, "kvfdp_io_total", "op=\"discard\"", c.discards);
	sample(o, "kvfdp_io_total", "op=\"write_zeroes\"", c.write_zeroes);
	header(o, "kvfdp_io_bytes_total", "counter", "Bytes per operation.");
	sample(o, "kvfdp_io_bytes_total", "op=\"read\"", c.read_bytes);
	sample(o, "kvfdp_io_bytes_total", "op=\"write\"", c.write_bytes);
	sample(o, "kvfdp_io_bytes_total", "op=\"discard\"", c.discard_bytes);
	sample(o, "kvfdp_io_bytes_total", "op=\"write_zeroes\"", c.write_zeroes_bytes);
	header(o, "kvfdp_stale_tags_total", "counter", "Writes whose tag slot did not match (placed as not_set).");
	sample(o, "kvfdp_stale_tags_total", "", c.stale_tags);
	header(o, "kvfdp_io_errors_total", "counter", "Requests completed with an error.");
	sample(o, "kvfdp_io_errors_total", "", c.errors);
	header(o, "kvfdp_copied_bytes_total", "counter",
	       "Read/write bytes copied between requests' pages and kvfdpd's buffers (0 in zero-copy mode).");
	sample(o, "kvfdp_copied_bytes_total", "", c.copied_bytes);
	header(o, "kvfdp_zero_copy", "gauge", "1 when requests reach the device from their own pages (UBLK_F_AUTO_BUF_REG).");
	sample(o, "kvfdp_zero_copy", "", m.zero_copy ? 1 : 0);
	header(o, "kvfdp_tagger_active", "gauge", "1 when the BPF tagger classifies requests.");
	sample(o, "kvfdp_tagger_active", "", m.tagger_active ? 1 : 0);
	header(o, "kvfdp_policy_generation", "gauge", "Policy reload generation.");
	sample(o, "kvfdp_policy_generation", "", m.generation);
	header(o, "kvfdp_uptime_seconds", "gauge", "Seconds since kvfdpd started.");
	sample(o, "kvfdp_uptime_seconds", "", m.uptime_s);
	return o;
}

} // namespace kvfdp::daemon
