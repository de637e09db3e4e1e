// The live twin's metric families (proto::twin_families, docs/twin.md): their text, the
// per-handle host and relocated bytes, and one home for every family name in proto/metrics.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "proto/metrics.hpp"
#include "proto/twin_stats.hpp"

using namespace kvfdp::proto;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

// A twin whose handle 3 takes most of GC's copies (docs/twin.md, Noisy handles).
TwinStats noisy_twin()
{
	TwinStats t;
	t.rate = 0.25;
	t.memory_bytes = 64 * kMiB;
	t.records = 5000;
	t.dropped = 3;
	t.host_bytes = 1024 * kMiB;
	t.placed = {1.25, 1280 * kMiB, 256 * kMiB};
	t.none = {1.5, 1536 * kMiB, 512 * kMiB};
	t.saved_bytes = 256 * kMiB;
	t.handles = {{0, 0, 0}, {1, 512 * kMiB, 16 * kMiB}, {3, 512 * kMiB, 224 * kMiB}};
	return t;
}

bool has_line(const std::string &text, const std::string &line)
{
	return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("twin metrics: per handle, the host bytes and the bytes GC relocated, as counters")
{
	const std::string m = render_metrics(twin_families(noisy_twin()));
	CHECK(has_line(m, "# TYPE kvfdp_twin_handle_host_bytes_total counter"));
	CHECK(has_line(m, "# TYPE kvfdp_twin_handle_relocated_bytes_total counter"));
	CHECK(has_line(m, "kvfdp_twin_handle_host_bytes_total{handle=\"0\"} 0"));
	CHECK(has_line(m, "kvfdp_twin_handle_host_bytes_total{handle=\"1\"} 536870912"));
	CHECK(has_line(m, "kvfdp_twin_handle_relocated_bytes_total{handle=\"1\"} 16777216"));
	CHECK(has_line(m, "kvfdp_twin_handle_relocated_bytes_total{handle=\"3\"} 234881024"));
	// No sample for a handle the reply does not list (2), and none unlabelled.
	CHECK(m.find("kvfdp_twin_handle_relocated_bytes_total{handle=\"2\"}") == std::string::npos);
	CHECK(m.find("\nkvfdp_twin_handle_relocated_bytes_total ") == std::string::npos);
}

TEST_CASE("drive metrics: per handle, the bytes the drive reports it relocated, as a counter")
{
	const std::string m = render_metrics({drive_handle_family(noisy_twin().handles)});
	CHECK(has_line(m, "# TYPE kvfdp_drive_handle_relocated_bytes_total counter"));
	CHECK(has_line(m, "kvfdp_drive_handle_relocated_bytes_total{handle=\"1\"} 16777216"));
	CHECK(has_line(m, "kvfdp_drive_handle_relocated_bytes_total{handle=\"3\"} 234881024"));
	CHECK(m.find("kvfdp_drive_handle_relocated_bytes_total{handle=\"2\"}") ==
	      std::string::npos);
}

TEST_CASE("twin metrics: the projection's families keep their text")
{
	const std::string m = render_metrics(twin_families(noisy_twin()));
	for (const char *l : {"kvfdp_twin_waf{placement=\"placed\"} 1.250000",
			      "kvfdp_twin_waf{placement=\"none\"} 1.500000",
			      "kvfdp_twin_host_bytes_total 1073741824",
			      "kvfdp_twin_media_bytes_total{placement=\"placed\"} 1342177280",
			      "kvfdp_twin_media_bytes_total{placement=\"none\"} 1610612736",
			      "kvfdp_twin_saved_bytes 268435456", "kvfdp_twin_records_total 5000",
			      "kvfdp_twin_dropped_total 3", "kvfdp_twin_sample_rate 0.250000000",
			      "kvfdp_twin_memory_bytes 67108864", "# TYPE kvfdp_twin_waf gauge",
			      "# TYPE kvfdp_twin_saved_bytes gauge"})
		CHECK_MESSAGE(has_line(m, l), l);
	TwinStats idle;  // nothing written yet: WAF 0, a negative saving stays signed
	idle.saved_bytes = -4096;
	const std::string i = render_metrics(twin_families(idle));
	CHECK(has_line(i, "kvfdp_twin_waf{placement=\"placed\"} 0.000000"));
	CHECK(has_line(i, "kvfdp_twin_saved_bytes -4096"));
	CHECK(has_family(i,
			 "kvfdp_twin_handle_relocated_bytes_total"));  // declared, with no samples
	CHECK(i.find("kvfdp_twin_handle_relocated_bytes_total{") == std::string::npos);
}

TEST_CASE("metrics: every family name has one home among proto/metrics' tables")
{
	std::map<std::string, int> homes;
	auto count = [&homes](const std::vector<MetricFamily> &fs) {
		for (const MetricFamily &f : fs)
			homes[f.name]++;
	};
	count(counter_families(MetricsInput{}));
	count(ruh_families({kvfdp::nvme::Handle{}}, 4096));
	kvfdp::nvme::FdpStats st;
	st.hbmw = 100;
	st.mbmw = 120;
	count(fdp_stats_families(st, false));
	count({daemon_up_family(true)});
	count(twin_families(noisy_twin()));
	count({drive_handle_family(noisy_twin().handles)});
	CHECK(homes.count("kvfdp_twin_handle_relocated_bytes_total") == 1);
	CHECK(homes.count("kvfdp_drive_handle_relocated_bytes_total") == 1);
	CHECK(homes.count("kvfdp_handle_bytes_total") == 1);
	for (const auto &[name, n] : homes)
		CHECK_MESSAGE(n == 1, name);
}
