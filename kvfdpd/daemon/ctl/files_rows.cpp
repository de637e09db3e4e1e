// `files` reply: FileTable rows -> proto::FilesReply (proto/files_reply.hpp) -> JSON.
#include "kvfdpd/daemon/ctl/files_rows.hpp"

#include <algorithm>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "proto/files_reply.hpp"
#include "placement/classes.hpp"

namespace kvfdp::daemon {

namespace {

using nlohmann::json;

int64_t clock_ns(clockid_t c)
{
	timespec ts{};
	clock_gettime(c, &ts);
	return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A monotonic timestamp as Unix seconds; empty when unknown (0).
std::optional<double> unix_time(uint64_t mono_ns, int64_t offset_ns)
{
	if (!mono_ns)
		return std::nullopt;
	return static_cast<double>(static_cast<int64_t>(mono_ns) + offset_ns) / 1e9;
}

std::string dev_text(uint32_t kdev)
{
	return std::to_string(kdev >> 20) + ":" + std::to_string(kdev & 0xfffff);
}

proto::FileRow row(const bpf::FileRecord &r, int64_t offset_ns, const WriterNamer &namer)
{
	proto::FileRow f;
	f.dev = dev_text(r.dev);
	f.ino = r.ino;
	f.cls = placement::class_name(r.cls < placement::kNumClasses ? r.cls : 0);
	f.class_from = r.cls == KVFDP_CLASS_NOT_SET ? "none" : r.cls_from_rule ? "rule" : "hint";
	f.bytes = r.bytes;
	f.birth = unix_time(r.birth_ns, offset_ns);
	f.death = unix_time(r.death_ns, offset_ns);
	if (const uint64_t life = r.lifetime_ns())
		f.lifetime_s = static_cast<double>(life) / 1e9;
	f.pid = r.pid;
	f.comm = r.comm;
	f.writer_id = r.writer;
	f.cgroup_id = r.cgroup_id;
	if (namer) {
		std::string name = namer(r);
		if (!name.empty())
			f.writer = std::move(name);
	}
	return f;
}

}  // namespace

int64_t realtime_minus_monotonic_ns()
{
	return clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
}

json files_json(const bpf::FileTable &table, uint64_t limit, int64_t offset_ns)
{
	proto::FilesQuery q;
	q.limit = limit;
	return files_json(table, q, offset_ns);
}

json files_json(const bpf::FileTable &table, const proto::FilesQuery &q, int64_t offset_ns,
		const WriterNamer &namer)
{
	std::vector<const bpf::FileRecord *> all;
	const std::vector<bpf::FileRecord> live = table.live();
	auto keep = [&](const bpf::FileRecord &r) {
		return (!q.cls || r.cls == *q.cls) && (!q.live_only || !r.death_ns);
	};
	for (const bpf::FileRecord &r : live)
		if (keep(r))
			all.push_back(&r);
	for (const bpf::FileRecord &r : table.dead())
		if (keep(r))
			all.push_back(&r);
	auto newest = [](const bpf::FileRecord *r) {
		return r->death_ns ? r->death_ns : r->birth_ns;
	};
	auto before = [&](const bpf::FileRecord *a, const bpf::FileRecord *b) {
		if (q.order == proto::FilesQuery::Order::bytes && a->bytes != b->bytes)
			return a->bytes > b->bytes;
		if (newest(a) != newest(b))
			return newest(a) > newest(b);
		return a->ino < b->ino;  // a total order: the same query gives the same rows
	};
	const size_t n = std::min<uint64_t>(all.size(), q.limit);
	std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
			  before);
	proto::FilesReply d;
	d.live = live.size();
	d.deleted = table.dead().size();
	d.matched = all.size();
	for (size_t i = 0; i < n; i++)
		d.files.push_back(row(*all[i], offset_ns, namer));
	d.lifetimes.emplace();
	for (unsigned c = 0; c < placement::kNumClasses; c++) {
		const bpf::LifetimeHistogram &h = table.histogram(static_cast<uint8_t>(c));
		proto::ClassLifetime l{placement::class_name(c), h.count(), std::nullopt};
		if (h.count())
			l.mean_s = static_cast<double>(h.sum_ns()) / 1e9 /
				   static_cast<double>(h.count());
		d.lifetimes->push_back(std::move(l));
	}
	return d;
}

}  // namespace kvfdp::daemon
