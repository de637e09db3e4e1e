// `files` reply: FileTable rows -> JSON.
#include "userspace/daemon/files_reply.hpp"

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "userspace/daemon/classes.hpp"

namespace kvfdp::daemon {

namespace {

using nlohmann::json;

int64_t clock_ns(clockid_t c)
{
	timespec ts{};
	clock_gettime(c, &ts);
	return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A monotonic timestamp as Unix seconds; null when unknown (0).
json unix_time(uint64_t mono_ns, int64_t offset_ns)
{
	if (!mono_ns)
		return nullptr;
	return static_cast<double>(static_cast<int64_t>(mono_ns) + offset_ns) / 1e9;
}

std::string dev_text(uint32_t kdev)
{
	return std::to_string(kdev >> 20) + ":" + std::to_string(kdev & 0xfffff);
}

json row(const bpf::FileRecord &r, int64_t offset_ns, const WriterNamer &namer)
{
	const uint64_t life = r.lifetime_ns();
	json j = {{"dev", dev_text(r.dev)},
		{"ino", r.ino},
		{"class", class_name(r.cls < kNumClasses ? r.cls : 0)},
		{"class_from", r.cls == KVFDP_CLASS_NOT_SET ? "none" : r.cls_from_rule ? "rule" : "hint"},
		{"bytes", r.bytes},
		{"birth", unix_time(r.birth_ns, offset_ns)},
		{"death", unix_time(r.death_ns, offset_ns)},
		{"lifetime_s", life ? json(static_cast<double>(life) / 1e9) : json(nullptr)},
		{"pid", r.pid},
		{"comm", r.comm},
		{"writer_id", r.writer},
		{"cgroup_id", r.cgroup_id}};
	if (namer) {
		std::string name = namer(r);
		if (!name.empty())
			j["writer"] = std::move(name);
	}
	return j;
}

} // namespace

int64_t realtime_minus_monotonic_ns() { return clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC); }

json files_json(const bpf::FileTable &table, uint64_t limit, int64_t offset_ns)
{
	FilesQuery q;
	q.limit = limit;
	return files_json(table, q, offset_ns);
}

json files_json(const bpf::FileTable &table, const FilesQuery &q, int64_t offset_ns, const WriterNamer &namer)
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
	auto newest = [](const bpf::FileRecord *r) { return r->death_ns ? r->death_ns : r->birth_ns; };
	auto before = [&](const bpf::FileRecord *a, const bpf::FileRecord *b) {
		if (q.order == FilesQuery::Order::bytes && a->bytes != b->bytes)
			return a->bytes > b->bytes;
		if (newest(a) != newest(b))
			return newest(a) > newest(b);
		return a->ino < b->ino;  // a total order: the same query gives the same rows
	};
	const size_t n = std::min<uint64_t>(all.size(), q.limit);
	std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), before);
	json files = json::array();
	for (size_t i = 0; i < n; i++)
		files.push_back(row(*all[i], offset_ns, namer));
	json lifetimes = json::array();
	for (unsigned c = 0; c < kNumClasses; c++) {
		const bpf::LifetimeHistogram &h = table.histogram(static_cast<uint8_t>(c));
		lifetimes.push_back({{"class", class_name(c)},
				     {"count", h.count()},
				     {"mean_s", h.count() ? json(static_cast<double>(h.sum_ns()) / 1e9 / static_cast<double>(h.count()))
							  : json(nullptr)}});
	}
	return {{"available", true},
		{"live", live.size()},
		{"deleted", table.dead().size()},
		{"matched", all.size()},
		{"files", files},
		{"lifetimes", lifetimes}};
}

} // namespace kvfdp::daemon
