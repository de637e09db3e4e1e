// Block trace recording over the tagger's request ring.
#include "cli/record/record.hpp"

#include <cerrno>
#include <ctime>
#include <map>

#include "bpf/user/devnum.hpp"
#include "bpf/user/tagger.hpp"
#include "common/lru_map.hpp"

namespace kvfdp::bpf {
namespace {

uint64_t now_ns()
{
	timespec ts{};
	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

// Writes "writer,name" for each writer id of the trace (names in double quotes, '"' doubled).
Result<void> write_names(const std::string &path, const std::map<uint32_t, std::string> &names)
{
	std::FILE *f = std::fopen(path.c_str(), "w");
	if (!f)
		return errno_error(errno, "record: write " + path);
	std::fputs("writer,name\n", f);
	for (const auto &[w, n] : names) {
		std::string q;
		for (char c : n)
			q += c == '"' ? std::string("\"\"") : std::string(1, c);
		std::fprintf(f, "%u,\"%s\"\n", w, q.c_str());
	}
	if (std::fclose(f) != 0)
		return errno_error(errno, "record: write " + path);
	return ok();
}

// The name of writer id w for the --names file: its [[writer]] entry's label, its resolved
// identity, else its cgroup's path ("" unknown).
std::string writer_name(uint32_t w, const std::vector<WriterSpec> &writers, IdentityResolver &ident)
{
	if (w & KVFDP_WRITER_NAMED) {
		const uint32_t i = (w & ~KVFDP_WRITER_NAMED) - 1;
		return i < writers.size() ? writers[i].label : "";
	}
	if (w & KVFDP_WRITER_IDENT)
		return ident.name_of(w);
	return ident.cgroups().resolve(w);
}

// Polls the tagger's rings until stop becomes true or the monotonic clock reaches end (0: no
// end), flushing out after each batch so that whoever tails the trace sees it.
Result<void> poll_until(Tagger &tagger, std::FILE *out, const std::atomic<bool> &stop, uint64_t end,
			const EventCallback &on_event, const RecordCallback &on_record)
{
	for (;;) {
		bool done = stop.load(std::memory_order_relaxed) || (end && now_ns() >= end);
		if (done)
			break;
		int n = tagger.poll(100, on_event, on_record);
		if (n < 0 && n != -EINTR)
			return errno_error(n, "record: poll the request ring");
		if (n > 0 && std::fflush(out) != 0)
			return errno_error(errno, "record: write the trace");
	}
	return ok();
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
	IdentityResolver ident(*tagger);

	RecordSummary sum;
	sum.warnings = ident.configure(o.writers, o.watch_dir);
	sum.sources = tagger->sources().describe();
	uint64_t start = now_ns();
	uint64_t end = o.duration_s > 0 ? start + static_cast<uint64_t>(o.duration_s * 1e9) : 0;
	// Flushed at once and after each batch: a file or pipe is fully buffered by stdio, and
	// whoever tails the trace (a script waiting for the header) must see it now.
	if (std::fputs(kRecordHeader, out) < 0 || std::fflush(out) != 0)
		return errno_error(errno, "record: write the trace");
	if (on_ready)
		on_ready();

	// A file's identity, by inode, for its requests issued before the resolver rewrote its
	// writer entry (they carry the raw id, or a wrong provisional one); bounded like the
	// tagger's own map.
	LruMap<uint64_t, uint32_t> by_ino(KVFDP_INODE_MAP_ENTRIES);
	std::map<uint32_t, std::string> names;  // writer ids of the trace (with --names)
	EventCallback on_event = [&](const kvfdp_event &e) {
		const uint32_t w = ident.on_create(e);
		if (e.type == KVFDP_EV_CREATE && w != e.writer)
			by_ino.put(e.ino, w);
		else if (e.type == KVFDP_EV_CREATE)  // a reused inode number: its own id holds
			by_ino.erase(e.ino);
	};
	RecordCallback on_record = [&](const kvfdp_rq_record &r) {
		uint64_t t_us = r.t_ns > start ? (r.t_ns - start) / 1000 : 0;
		char op = r.op == 1 ? 'W' : 'D';
		uint8_t cls = r.cls < KVFDP_NR_CLASSES ? r.cls : 0;
		uint32_t writer = r.writer;
		if (const uint32_t *w = r.ino ? by_ino.find(r.ino) : nullptr)
			writer = *w;
		else if (kvfdp_writer_is_raw(writer) && r.ino)
			sum.raw_rows++;
		if (!o.names_out.empty() && writer && names.size() < KVFDP_IDENT_MAP_ENTRIES &&
		    !names.count(writer))
			names[writer] = writer_name(writer, o.writers, ident);
		uint64_t nlb = write_record_row(out, t_us, op, r.sector, r.sectors, cls, writer);
		(op == 'W' ? sum.write_bytes : sum.discard_bytes)[cls] += nlb * 4096;
		sum.rows++;
	};
	KVFDP_TRY(poll_until(*tagger, out, stop, end, on_event, on_record));
	tagger->drain(on_event, on_record);
	sum.dropped = tagger->stats()[KVFDP_STAT_RECORD_DROP];
	if (std::fflush(out) != 0)
		return errno_error(errno, "record: write the trace");
	if (!o.names_out.empty())
		KVFDP_TRY(write_names(o.names_out, names));
	return sum;
}

}  // namespace kvfdp::bpf
