// Block trace recording over the tagger's request ring.
#include "tools/record/record.hpp"

#include <cerrno>
#include <ctime>

#include "bpf/user/devnum.hpp"
#include "bpf/user/tagger.hpp"

namespace kvfdp::bpf {
namespace {

uint64_t now_ns()
{
	timespec ts{};
	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

}  // namespace

uint64_t write_record_row(std::FILE *out, uint64_t t_us, char op, uint64_t sector, uint32_t sectors,
			  uint8_t cls, uint64_t writer)
{
	uint64_t slba = sector >> 3;
	uint64_t end = (sector + sectors + 7) >> 3;
	uint64_t nlb = end - slba;
	std::fprintf(out, "%llu,%c,%llu,%llu,%u,%llu\n", static_cast<unsigned long long>(t_us), op,
		     static_cast<unsigned long long>(slba), static_cast<unsigned long long>(nlb),
		     static_cast<unsigned>(cls), static_cast<unsigned long long>(writer));
	return nlb;
}

Result<RecordSummary> record_trace(const RecordOptions &o, std::FILE *out,
				   const std::atomic<bool> &stop,
				   const std::function<void()> &on_ready)
{
	auto devt = disk_dev(o.disk);
	if (!devt)
		return std::move(devt).error();
	TaggerOptions to;
	to.record_ring_bytes = o.ring_bytes;
	auto tagger = Tagger::load(to);
	if (!tagger)
		return std::move(tagger).error();
	KVFDP_TRY(tagger->watch_disk_dev(*devt, KVFDP_DISK_RECORD));

	RecordSummary sum;
	sum.sources = tagger->sources().describe();
	uint64_t start = now_ns();
	uint64_t end = o.duration_s > 0 ? start + static_cast<uint64_t>(o.duration_s * 1e9) : 0;
	// Flushed at once and after each batch: a file or pipe is fully buffered by stdio, and
	// whoever tails the trace (a script waiting for the header) must see it now.
	if (std::fputs(kRecordHeader, out) < 0 || std::fflush(out) != 0)
		return errno_error(errno, "record: write the trace");
	if (on_ready)
		on_ready();

	EventCallback no_event;
	RecordCallback on_record = [&](const kvfdp_rq_record &r) {
		uint64_t t_us = r.t_ns > start ? (r.t_ns - start) / 1000 : 0;
		char op = r.op == 1 ? 'W' : 'D';
		uint8_t cls = r.cls < KVFDP_NR_CLASSES ? r.cls : 0;
		uint64_t nlb = write_record_row(out, t_us, op, r.sector, r.sectors, cls, r.writer);
		(op == 'W' ? sum.write_bytes : sum.discard_bytes)[cls] += nlb * 4096;
		sum.rows++;
	};
	for (;;) {
		bool done = stop.load(std::memory_order_relaxed) || (end && now_ns() >= end);
		if (done)
			break;
		int n = tagger->poll(100, no_event, on_record);
		if (n < 0 && n != -EINTR)
			return errno_error(n, "record: poll the request ring");
		if (n > 0 && std::fflush(out) != 0)
			return errno_error(errno, "record: write the trace");
	}
	tagger->drain(no_event, on_record);
	sum.dropped = tagger->stats()[KVFDP_STAT_RECORD_DROP];
	if (std::fflush(out) != 0)
		return errno_error(errno, "record: write the trace");
	return sum;
}

}  // namespace kvfdp::bpf
