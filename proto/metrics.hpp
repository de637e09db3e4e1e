// Prometheus text exposition (format 0.0.4) of kvfdp's metrics: the one renderer and the one
// definition of every metric family (name, help, type, labels), used by kvfdpd's `metrics`
// control reply and GET /metrics (kvfdpd/daemon/ctl/http_metrics.hpp) and by the kvfdp CLI
// (`kvfdp metrics` straight from a device; from kvfdpd it prints kvfdpd's text). The names are listed in docs/cli.md (Metrics).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nvme/fdp_stats.hpp"
#include "nvme/handle.hpp"
#include "proto/counter_snapshot.hpp"

namespace kvfdp::proto {

struct TwinStats;      // proto/twin_stats.hpp
struct TwinHandle;     // proto/twin_stats.hpp
struct LearnedPolicy;  // proto/policy_reply.hpp

struct MetricSample {
	std::vector<std::pair<std::string, std::string>> labels;  // in print order
	std::string value;                                        // already formatted
};

struct MetricFamily {
	std::string name;
	std::string help;
	std::string type;  // counter | gauge
	std::vector<MetricSample> samples;
};

// "# HELP", "# TYPE" and sample lines per family; label values escaped (\\, \", \n).
[[nodiscard]] std::string render_metrics(const std::vector<MetricFamily> &families);
// True when exposition text already has a family of this name (a "# TYPE name" line).
[[nodiscard]] bool has_family(const std::string &text, const std::string &name);

// kvfdpd's own state.
struct MetricsInput {
	CounterSnapshot counters;
	uint64_t generation = 0;
	uint16_t nruh = 0;
	std::vector<uint16_t> pids;  // pid per handle index
	bool tagger_active = false;
	bool zero_copy = false;  // the data path (ublk::DataMode)
	uint64_t uptime_s = 0;
	uint64_t start_time_s = 0;  // Unix time this kvfdpd started (a restart changes it)
	bool recovered = false;     // this kvfdpd re-attached to a disk a previous one left
	// A stripe's members (paths, in order) and each member's pid per handle: then
	// kvfdp_handle_bytes_total has one sample per member and handle, labelled member and
	// device (sum by handle for the totals). Empty for a single namespace: no member label.
	std::vector<std::string> members;
	std::vector<std::vector<uint16_t>> member_pids;
};

// kvfdp_class_bytes_total, kvfdp_class_writes_total, kvfdp_handle_bytes_total, kvfdp_io_total,
// kvfdp_io_bytes_total, kvfdp_stale_tags_total, kvfdp_io_errors_total, kvfdp_copied_bytes_total,
// kvfdp_zero_copy, kvfdp_tagger_active, kvfdp_policy_generation, kvfdp_uptime_seconds,
// kvfdp_start_time_seconds, kvfdp_recovered.
[[nodiscard]] std::vector<MetricFamily> counter_families(const MetricsInput &m);
[[nodiscard]] std::string format_metrics(const MetricsInput &m);  // render(counter_families)

// kvfdp_ruh_ruamw_lbas, kvfdp_ruh_ruamw_bytes, kvfdp_ruh_earutr_seconds per handle
// ({handle, pid, ruhid}) from RUH Status.
[[nodiscard]] std::vector<MetricFamily> ruh_families(const std::vector<nvme::Handle> &handles,
						     uint32_t lba_size);
// kvfdp_fdp_hbmw_bytes, kvfdp_fdp_mbmw_bytes, kvfdp_fdp_mbe_bytes, and kvfdp_fdp_waf (lifetime,
// only when the counters support one: nvme::assess_waf).
[[nodiscard]] std::vector<MetricFamily> fdp_stats_families(const nvme::FdpStats &s, bool emulated);
// kvfdp_daemon_up.
[[nodiscard]] MetricFamily daemon_up_family(bool up);
// The live WAF twin's (docs/twin.md), from the stats reply's twin object: kvfdp_twin_waf{placement},
// kvfdp_twin_host_bytes_total, kvfdp_twin_media_bytes_total{placement}, kvfdp_twin_saved_bytes,
// kvfdp_twin_records_total, kvfdp_twin_dropped_total, kvfdp_twin_sample_rate,
// kvfdp_twin_memory_bytes, and the placed copy's per handle: kvfdp_twin_handle_host_bytes_total
// and kvfdp_twin_handle_relocated_bytes_total ({handle}; docs/twin.md, Noisy handles).
[[nodiscard]] std::vector<MetricFamily> twin_families(const TwinStats &t);
// The drive's own relocations per handle (the stats reply's drive_handles: Media Reallocated
// events of the FDP events log): kvfdp_drive_handle_relocated_bytes_total{handle}.
[[nodiscard]] MetricFamily drive_handle_family(const std::vector<TwinHandle> &handles);
// --placement learned's, from the policy reply's learned object: per key ({writer, class,
// handle}; an unnamed writer is "", a newline in a name is dropped)
// kvfdp_learned_lifetime_bytes, kvfdp_learned_lifetime_seconds, kvfdp_learned_write_share and
// kvfdp_learned_live_bytes; kvfdp_learned_groups, kvfdp_ruh_updates_total and
// kvfdp_ruh_update_refused_total. Values are written %.17g.
[[nodiscard]] std::vector<MetricFamily> learned_families(const LearnedPolicy &l);

// One bounded table of the BPF tagger or its userspace side (docs/bpf.md, "Bounded state").
struct TableBound {
	std::string table;       // the label: file_table, inode_policy, cgroup_paths, ...
	uint64_t entries = 0;    // now (the BPF maps: added - removed, at most limit)
	uint64_t limit = 0;      // the bound
	uint64_t evictions = 0;  // entries dropped to stay within it (the BPF maps: at least)
	uint64_t failed = 0;     // inserts that failed (the BPF maps)
};
// The tagger's bounds and what its writer identities did.
struct TaggerBounds {
	std::vector<TableBound> tables;
	uint64_t identities_resolved = 0;    // (cgroup, directory) pairs given an id
	uint64_t identities_by_pattern = 0;  // of those, by a [[writer]] cgroup_pattern
	uint64_t identities_unresolved = 0;  // raw or provisional ids kept (no cgroup/dir name)
	uint64_t identities_rewritten = 0;   // new files whose writer entry was rewritten
	uint64_t identity_early_bytes = 0;   // bytes those files wrote with the raw or wrong id
	uint64_t renames_over = 0;           // renames onto an existing file the tagger saw
	// Write, discard and write-zeroes requests the tagger classified on watched disks, and
	// block requests of any disk the kernel issued without running it (BPF recursion
	// protection; a write among them is placed as not_set).
	uint64_t requests = 0;
	uint64_t missed_runs = 0;
	// Creates given their writer directory's id provisionally; of those, the ones the
	// resolver confirmed (right) and rewrote (wrong).
	uint64_t identities_provisional = 0;
	uint64_t identities_provisional_right = 0;
	uint64_t identities_provisional_wrong = 0;
};
// kvfdp_tagger_table_entries, kvfdp_tagger_table_limit, kvfdp_tagger_table_evictions_total
// and kvfdp_tagger_table_failed_inserts_total ({table}); kvfdp_writer_identities_total
// ({result}: resolved, by_pattern, unresolved, rewritten, provisional, provisional_right,
// provisional_wrong),
// kvfdp_writer_identity_early_bytes_total, kvfdp_tagger_renames_over_total,
// kvfdp_tagger_requests_total, kvfdp_tagger_missed_runs_total.
[[nodiscard]] std::vector<MetricFamily> tagger_bound_families(const TaggerBounds &b);

}  // namespace kvfdp::proto
