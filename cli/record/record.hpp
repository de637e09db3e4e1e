// `kvfdp record`: a tagged block trace of one disk (CSV t_us,op,slba,nlb,class,writer) from
// the BPF tagger's request records, for `kvfdp simulate --blk-trace`. writer is the writer id
// kvfdpd would place the request's file by: a named [[writer]], the writer identity of its
// creating cgroup and directory (docs/bpf.md, "Writer identity"), else the raw cgroup id; 0
// unknown.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bpf/tag.h"
#include "bpf/user/identity.hpp"
#include "common/result.hpp"

namespace kvfdp::bpf {

struct RecordOptions {
	std::string disk;       // a whole block device: /dev/nvme0n1, /dev/loop0, /dev/ublkb0
	double duration_s = 0;  // 0 = until stop
	uint32_t ring_bytes = 16u << 20;  // request ring (power of two)
	// The config's [[writer]] entries and watch_dir, applied as kvfdpd applies them.
	std::vector<WriterSpec> writers;
	std::string watch_dir;
	// Where to write the names of the writer ids the trace holds ("writer,name" CSV, at the
	// end; "" none).
	std::string names_out;
};

struct RecordSummary {
	uint64_t rows = 0;                                     // CSV rows written
	uint64_t dropped = 0;                                  // records lost (ring full)
	std::array<uint64_t, KVFDP_NR_CLASSES> write_bytes{};  // from the rows
	std::array<uint64_t, KVFDP_NR_CLASSES> discard_bytes{};
	std::string sources;  // ActiveSources::describe()
	// Rows whose writer stayed a raw cgroup id: the file was written before its create event
	// was read, or its cgroup or directory had no name (docs/bpf.md, "Writer identity").
	uint64_t raw_rows = 0;
	std::vector<std::string> warnings;  // one line per [[writer]] that matches nothing now
};

// The CSV header line (with newline).
inline constexpr const char *kRecordHeader = "t_us,op,slba,nlb,class,writer\n";

// Writes one row: 512-byte sectors become 4096-byte LBAs (start rounded down, end up).
// op is 'W' or 'D'. Returns the row's length in 4096-byte LBAs.
uint64_t write_record_row(std::FILE *out, uint64_t t_us, char op, uint64_t sector, uint32_t sectors,
			  uint8_t cls, uint64_t writer = 0);

// Traces options.disk until the duration passes or stop becomes true, writing rows to
// out. on_ready runs once the tagger is attached (tests start their writes there).
[[nodiscard]] Result<RecordSummary> record_trace(const RecordOptions &options, std::FILE *out,
						 const std::atomic<bool> &stop,
						 const std::function<void()> &on_ready = {});

}  // namespace kvfdp::bpf
