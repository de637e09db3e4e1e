// The FDP SSD model's FTL: flat arrays (L2P, reverse map, per-RU counts), greedy buckets.
#include "model/ftl/ftl.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>

namespace kvfdp::model {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kUnmapped = kNone;  // l2p: logical unit not written / deallocated
constexpr uint32_t kInvalid = kNone;   // p2l: physical unit holds no live data
constexpr uint16_t kShared = 0xFFFF;   // owner of RUs of the shared GC stream

Error violation(const char *fmt, unsigned long long a, unsigned long long b = 0,
		unsigned long long c = 0)
{
	char buf[256];
	// fmt is a literal at every call site, with only %llu conversions.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	std::snprintf(buf, sizeof buf, fmt, a, b, c);
#pragma GCC diagnostic pop
	return make_error(std::errc::state_not_recoverable, std::string("model invariant: ") + buf);
}

}  // namespace

Stats Stats::since(const Stats &b) const
{
	Stats d;
	d.host_bytes = host_bytes - b.host_bytes;
	d.media_bytes = media_bytes - b.media_bytes;
	d.erased_bytes = erased_bytes - b.erased_bytes;
	d.gc_runs = gc_runs - b.gc_runs;
	d.relocated_bytes = relocated_bytes - b.relocated_bytes;
	d.deallocated_bytes = deallocated_bytes - b.deallocated_bytes;
	return d;
}

double Stats::waf() const
{
	return host_bytes ? static_cast<double>(media_bytes) / static_cast<double>(host_bytes)
			  : 0.0;
}

Result<std::unique_ptr<Ftl>> Ftl::create(const ModelConfig &cfg)
{
	KVFDP_TRY(validate(cfg));
	return std::unique_ptr<Ftl>(new Ftl(cfg));
}

Ftl::Ftl(const ModelConfig &cfg) : cfg_(cfg)
{
	lbas_per_unit_ = cfg.mapping_unit / cfg.lba_size;
	logical_units_ = static_cast<uint32_t>(cfg.logical_bytes / cfg.mapping_unit);
	logical_lbas_ = cfg.logical_bytes / cfg.lba_size;
	upr_ = static_cast<uint32_t>(cfg.ru_size / cfg.mapping_unit);
	const long double physical = static_cast<long double>(cfg.logical_bytes) * (1.0L + cfg.op);
	const auto total = static_cast<uint64_t>(physical / cfg.ru_size);
	rus_per_rg_ = static_cast<uint32_t>(total / cfg.nrg);
	total_rus_ = rus_per_rg_ * cfg.nrg;
	gc_low_ = cfg.gc_low ? cfg.gc_low : 2;
	gc_high_ = cfg.gc_high ? cfg.gc_high : gc_low_ + 1;
	buckets_on_ = cfg.gc == GcPolicy::greedy;

	l2p_.assign(logical_units_, kUnmapped);
	p2l_.assign(uint64_t{total_rus_} * upr_, kInvalid);
	valid_.assign(total_rus_, 0);
	state_.assign(total_rus_, kFree);
	owner_.assign(total_rus_, kShared);
	closed_at_.assign(total_rus_, 0);
	if (buckets_on_) {
		next_.assign(total_rus_, kNone);
		prev_.assign(total_rus_, kNone);
		heads_.assign(size_t{upr_ + 1} * cfg.nrg, kNone);
	}
	free_.resize(total_rus_);
	nfree_.assign(cfg.nrg, rus_per_rg_);
	nopen_.assign(cfg.nrg, 0);
	for (uint32_t rg = 0; rg < cfg.nrg; rg++) {
		// A stack per group, lowest RU on top.
		for (uint32_t i = 0; i < rus_per_rg_; i++)
			free_[size_t{rg} * rus_per_rg_ + i] =
				rg * rus_per_rg_ + (rus_per_rg_ - 1 - i);
	}
	streams_.assign(size_t{cfg.nrg} * streams_per_rg(), Stream{kNone, 0});
	used_.assign(handles(), 0);
	handle_stats_.assign(handles(), HandleStats{});
	persistent_.assign(cfg.nruh, 0);
	for (size_t i = 0; i < cfg.ruh_types.size(); i++)
		persistent_[i] = cfg.ruh_types[i] == HandleType::persistently_isolated;
}

Ftl::~Ftl() = default;

uint64_t Ftl::memory_for(const ModelConfig &cfg)
{
	// The sizes the constructor gives each array, times their element sizes.
	const uint64_t units = cfg.logical_bytes / cfg.mapping_unit;
	const uint64_t upr = cfg.ru_size / cfg.mapping_unit;
	const long double physical = static_cast<long double>(cfg.logical_bytes) * (1.0L + cfg.op);
	const uint64_t rus = static_cast<uint64_t>(physical / cfg.ru_size) / cfg.nrg * cfg.nrg;
	const uint64_t handles = uint64_t{cfg.nrg} * cfg.nruh;
	uint64_t b = units * sizeof(uint32_t) + rus * upr * sizeof(uint32_t);  // l2p, p2l
	b += rus * (sizeof(uint32_t) + sizeof(uint8_t) + sizeof(uint16_t) +
		    sizeof(uint64_t));  // valid, state, owner, closed_at
	b += rus * sizeof(uint32_t) +
	     2 * uint64_t{cfg.nrg} * sizeof(uint32_t);  // free, nfree, nopen
	if (cfg.gc == GcPolicy::greedy)
		b += 2 * rus * sizeof(uint32_t) +
		     (upr + 1) * cfg.nrg * sizeof(uint32_t);  // next, prev, heads
	b += uint64_t{cfg.nrg} * (2u * cfg.nruh + 1) * sizeof(Stream) + handles +
	     cfg.nruh;                       // streams, used, persistent
	b += handles * sizeof(HandleStats);  // handle_stats
	return b;
}

uint64_t Ftl::memory_bytes() const
{
	auto bytes = [](const auto &v) { return uint64_t{v.capacity()} * sizeof(v[0]); };
	return bytes(l2p_) + bytes(p2l_) + bytes(valid_) + bytes(state_) + bytes(owner_) +
	       bytes(closed_at_) + bytes(next_) + bytes(prev_) + bytes(heads_) + bytes(free_) +
	       bytes(nfree_) + bytes(nopen_) + bytes(streams_) + bytes(used_) + bytes(persistent_) +
	       bytes(handle_stats_);
}

HandleType Ftl::handle_type(uint32_t ruh) const
{
	return persistent_[ruh] ? HandleType::persistently_isolated
				: HandleType::initially_isolated;
}

uint64_t Ftl::ruamw(uint32_t h) const
{
	const uint32_t rg = h / cfg_.nruh;
	const Stream &st = streams_[size_t{rg} * streams_per_rg() + h % cfg_.nruh];
	const uint32_t left = st.ru == kNone ? upr_ : upr_ - st.wp;
	return uint64_t{left} * lbas_per_unit_;
}

int Ftl::ruh_update(uint32_t h)
{
	if (h >= handles())
		return -EINVAL;
	Stream &st = streams_[size_t{h / cfg_.nruh} * streams_per_rg() + h % cfg_.nruh];
	if (st.ru != kNone) {
		close_ru(st.ru);
		st.ru = kNone;
		st.wp = 0;
	}
	return 0;
}

uint32_t Ftl::ru_of_lba(uint64_t lba) const
{
	if (lba >= logical_lbas_)
		return kNoRu;
	const uint32_t p = l2p_[lba / lbas_per_unit_];
	return p == kUnmapped ? kNoRu : p / upr_;
}

int Ftl::ru_owner(uint32_t ru) const
{
	return owner_[ru] == kShared ? -1 : owner_[ru];
}

RuCounts Ftl::ru_counts(uint32_t rg) const
{
	RuCounts c;
	for (uint32_t ru = rg * rus_per_rg_; ru < (rg + 1) * rus_per_rg_; ru++) {
		c.free += state_[ru] == kFree;
		c.open += state_[ru] == kOpen;
		c.full += state_[ru] == kFull;
	}
	return c;
}

int Ftl::write(uint32_t h, uint64_t slba, uint64_t nlb)
{
	if (h >= handles() || nlb == 0 || slba >= logical_lbas_ || nlb > logical_lbas_ - slba)
		return -EINVAL;
	const uint32_t rg = h / cfg_.nruh;
	const uint32_t s = h % cfg_.nruh;
	stats_.host_bytes += nlb * cfg_.lba_size;
	handle_stats_[h].host_bytes += nlb * cfg_.lba_size;
	used_[h] = 1;
	const auto first = static_cast<uint32_t>(slba / lbas_per_unit_);
	const auto last = static_cast<uint32_t>((slba + nlb - 1) / lbas_per_unit_);
	// One unit: no run to fold, and program() is about 40 instructions cheaper than a run of
	// one (callgrind of the twin's drain, docs/twin.md).
	if (first == last)
		return program(rg, s, first);
	Stream &st = streams_[size_t{rg} * streams_per_rg() + s];
	for (uint32_t lu = first; lu <= last;) {
		if (st.ru == kNone) {
			int r = open_ru(rg, s);
			if (r)
				return r;
		}
		const uint32_t n = std::min(last - lu + 1, upr_ - st.wp);
		program_run(st, lu, n);
		lu += n;
	}
	return 0;
}

int Ftl::deallocate(uint64_t slba, uint64_t nlb)
{
	if (nlb == 0 || slba >= logical_lbas_ || nlb > logical_lbas_ - slba)
		return -EINVAL;
	// Only units wholly inside the range: a partly covered unit still holds live LBAs.
	const uint64_t first = (slba + lbas_per_unit_ - 1) / lbas_per_unit_;
	const uint64_t end = (slba + nlb) / lbas_per_unit_;
	for (uint64_t lu = first; lu < end; lu++) {
		const uint32_t p = l2p_[lu];
		if (p == kUnmapped)
			continue;
		invalidate(p);
		l2p_[lu] = kUnmapped;
		live_units_--;
		stats_.deallocated_bytes += cfg_.mapping_unit;
	}
	return 0;
}

// Appends logical unit lu to stream s of group rg, invalidating its old copy.
int Ftl::program(uint32_t rg, uint32_t s, uint32_t lu)
{
	Stream &st = streams_[size_t{rg} * streams_per_rg() + s];
	if (st.ru == kNone) {
		int r = open_ru(rg, s);
		if (r)
			return r;
	}
	const uint32_t old = l2p_[lu];
	if (old != kUnmapped)
		invalidate(old);
	else
		live_units_++;
	const uint32_t ru = st.ru;
	const uint32_t p = ru * upr_ + st.wp++;
	l2p_[lu] = p;
	p2l_[p] = lu;
	valid_[ru]++;
	stats_.media_bytes += cfg_.mapping_unit;
	clock_++;
	if (st.wp == upr_) {
		close_ru(ru);
		st.ru = kNone;
	}
	return 0;
}

// program() for units [lu, lu + n) of a host write, n no more than st's open RU has left: the
// same end state, one unit at a time. Nothing between two of its units looks at the buckets
// (no RU opens, so no GC runs), so a run of old copies in one RU leaves that RU's bucket once,
// by the run's length, where one unit at a time would leave and rejoin it at each unit; both
// end with the RU at the head of the bucket of its new count.
void Ftl::program_run(Stream &st, uint32_t lu, uint32_t n)
{
	const uint32_t ru = st.ru;
	uint32_t p = ru * upr_ + st.wp;
	uint32_t run_ru = kNone, run_n = 0;  // the run of old copies in one RU, not yet counted
	for (const uint32_t end = lu + n; lu < end; lu++, p++) {
		const uint32_t old = l2p_[lu];
		if (old != kUnmapped) {
			p2l_[old] = kInvalid;
			const uint32_t oru = old / upr_;
			if (oru == run_ru) {
				run_n++;
			} else {
				if (run_n)
					drop_valid(run_ru, run_n);
				run_ru = oru;
				run_n = 1;
			}
		} else {
			live_units_++;
		}
		l2p_[lu] = p;
		p2l_[p] = lu;
	}
	if (run_n)
		drop_valid(run_ru, run_n);
	valid_[ru] += n;
	st.wp += n;
	stats_.media_bytes += uint64_t{n} * cfg_.mapping_unit;
	clock_ += n;
	if (st.wp == upr_) {
		close_ru(ru);
		st.ru = kNone;
	}
}

// Gives stream s of group rg a fresh RU, running GC first when the group is low on space.
int Ftl::open_ru(uint32_t rg, uint32_t s)
{
	if (!in_gc_ && nfree_[rg] < gc_low_)
		run_gc(rg);
	if (nfree_[rg] == 0)
		return -ENOSPC;
	const uint32_t ru = free_[size_t{rg} * rus_per_rg_ + --nfree_[rg]];
	state_[ru] = kOpen;
	nopen_[rg]++;
	const uint32_t nruh = cfg_.nruh;
	owner_[ru] = static_cast<uint16_t>(s < nruh ? s : s == nruh ? kShared : s - nruh - 1);
	Stream &st = streams_[size_t{rg} * streams_per_rg() + s];
	st.ru = ru;
	st.wp = 0;
	return 0;
}

void Ftl::close_ru(uint32_t ru)
{
	state_[ru] = kFull;
	nopen_[ru / rus_per_rg_]--;
	closed_at_[ru] = clock_;
	if (buckets_on_)
		bucket_insert(ru);
}

void Ftl::invalidate(uint32_t p)
{
	p2l_[p] = kInvalid;
	drop_valid(p / upr_, 1);
}

void Ftl::drop_valid(uint32_t ru, uint32_t k)
{
	if (buckets_on_ && state_[ru] == kFull) {
		bucket_remove(ru);
		valid_[ru] -= k;
		bucket_insert(ru);
	} else {
		valid_[ru] -= k;
	}
}

void Ftl::bucket_insert(uint32_t ru)
{
	const uint32_t rg = cfg_.nrg == 1 ? 0 : ru / rus_per_rg_;
	uint32_t &head = heads_[size_t{rg} * (upr_ + 1) + valid_[ru]];
	next_[ru] = head;
	prev_[ru] = kNone;
	if (head != kNone)
		prev_[head] = ru;
	head = ru;
}

void Ftl::bucket_remove(uint32_t ru)
{
	const uint32_t n = next_[ru], pr = prev_[ru];
	if (pr != kNone) {
		next_[pr] = n;
	} else {
		const uint32_t rg = cfg_.nrg == 1 ? 0 : ru / rus_per_rg_;
		heads_[size_t{rg} * (upr_ + 1) + valid_[ru]] = n;
	}
	if (n != kNone)
		prev_[n] = pr;
}

// A full RU worth reclaiming (fewer than upr_ valid units), or kNone.
uint32_t Ftl::pick_victim(uint32_t rg) const
{
	if (buckets_on_) {
		const uint32_t *h = &heads_[size_t{rg} * (upr_ + 1)];
		for (uint32_t v = 0; v < upr_; v++) {
			if (h[v] != kNone)
				return h[v];
		}
		return kNone;
	}
	uint32_t best = kNone;
	double best_score = -1;
	for (uint32_t ru = rg * rus_per_rg_; ru < (rg + 1) * rus_per_rg_; ru++) {
		if (state_[ru] != kFull || valid_[ru] >= upr_)
			continue;
		const double u = static_cast<double>(valid_[ru]) / upr_;
		const double age = static_cast<double>(clock_ - closed_at_[ru]) + 1.0;
		const double score = (1.0 - u) * age / (1.0 + u);
		if (score > best_score) {
			best_score = score;
			best = ru;
		}
	}
	return best;
}

// Relocates the victim's live units to its GC stream, then erases it.
int Ftl::reclaim(uint32_t rg, uint32_t victim)
{
	const uint16_t owner = owner_[victim];
	const uint32_t s =
		owner != kShared && persistent_[owner] ? cfg_.nruh + 1u + owner : cfg_.nruh;
	// The live units fit in the GC stream's open RU plus at most one fresh RU (a victim
	// holds fewer than upr_); without that RU, leave everything as it is.
	const Stream &dest = streams_[size_t{rg} * streams_per_rg() + s];
	const uint32_t room = dest.ru == kNone ? 0 : upr_ - dest.wp;
	if (valid_[victim] > room && nfree_[rg] == 0)
		return -ENOSPC;
	if (buckets_on_)
		bucket_remove(victim);
	state_[victim] = kVictim;
	uint64_t moved = 0;
	const uint32_t base = victim * upr_;
	for (uint32_t i = 0; i < upr_ && valid_[victim] > 0; i++) {
		const uint32_t lu = p2l_[base + i];
		if (lu == kInvalid)
			continue;
		int r = program(rg, s, lu);
		if (r)
			return r;
		moved++;
	}
	stats_.relocated_bytes += moved * cfg_.mapping_unit;
	if (owner != kShared)
		handle_stats_[rg * cfg_.nruh + owner].relocated_bytes += moved * cfg_.mapping_unit;
	stats_.erased_bytes += cfg_.ru_size;
	stats_.gc_runs++;
	state_[victim] = kFree;
	owner_[victim] = kShared;
	free_[size_t{rg} * rus_per_rg_ + nfree_[rg]++] = victim;
	return 0;
}

void Ftl::run_gc(uint32_t rg)
{
	in_gc_ = true;
	while (nfree_[rg] < gc_high_) {
		const uint32_t victim = pick_victim(rg);
		if (victim == kNone || reclaim(rg, victim) != 0)
			break;
	}
	in_gc_ = false;
}

Result<uint64_t> Ftl::check_rus() const
{
	uint64_t sum_valid = 0;
	for (uint32_t ru = 0; ru < total_rus_; ru++) {
		uint32_t live = 0;
		for (uint32_t i = 0; i < upr_; i++) {
			const uint32_t p = ru * upr_ + i;
			const uint32_t lu = p2l_[p];
			if (lu == kInvalid)
				continue;
			if (lu >= logical_units_ || l2p_[lu] != p)
				return violation(
					"physical unit %llu claims logical unit %llu, which maps "
					"elsewhere",
					p, lu);
			live++;
		}
		if (live != valid_[ru])
			return violation("RU %llu: valid count %llu, but %llu live units", ru,
					 valid_[ru], live);
		if (state_[ru] == kFree && live)
			return violation("free RU %llu holds %llu live units", ru, live);
		if (state_[ru] == kVictim)
			return violation("RU %llu is left in the GC victim state", ru);
		sum_valid += live;
	}
	return sum_valid;
}

Result<void> Ftl::check_mapping(uint64_t sum_valid) const
{
	uint64_t mapped = 0;
	for (uint32_t lu = 0; lu < logical_units_; lu++) {
		const uint32_t p = l2p_[lu];
		if (p == kUnmapped)
			continue;
		if (p >= p2l_.size() || p2l_[p] != lu)
			return violation(
				"logical unit %llu maps to %llu, whose reverse entry differs", lu,
				p);
		mapped++;
	}
	if (mapped != sum_valid || mapped != live_units_)
		return violation("mapped logical units %llu, valid units %llu, live count %llu",
				 mapped, sum_valid, live_units_);
	return ok();
}

Result<void> Ftl::check_group(uint32_t rg) const
{
	const RuCounts c = ru_counts(rg);
	if (c.free + c.open + c.full != rus_per_rg_)
		return violation("group %llu: free + open + full = %llu, not %llu", rg,
				 c.free + c.open + c.full, rus_per_rg_);
	if (c.free != nfree_[rg] || c.open != nopen_[rg])
		return violation("group %llu: %llu free / %llu open RUs disagree with the lists",
				 rg, c.free, c.open);
	for (uint32_t i = 0; i < nfree_[rg]; i++) {
		const uint32_t ru = free_[size_t{rg} * rus_per_rg_ + i];
		if (ru / rus_per_rg_ != rg || state_[ru] != kFree)
			return violation("group %llu: free list holds RU %llu in state %llu", rg,
					 ru, state_[ru]);
	}
	uint32_t streams_open = 0;
	for (uint32_t s = 0; s < streams_per_rg(); s++) {
		const Stream &st = streams_[size_t{rg} * streams_per_rg() + s];
		if (st.ru == kNone)
			continue;
		streams_open++;
		if (state_[st.ru] != kOpen || st.wp >= upr_ || valid_[st.ru] > st.wp)
			return violation("stream %llu's RU %llu is inconsistent (wp %llu)", s,
					 st.ru, st.wp);
	}
	if (streams_open != c.open)
		return violation("group %llu: %llu streams hold %llu open RUs", rg, streams_open,
				 c.open);
	return buckets_on_ ? check_buckets(rg, c.full) : ok();
}

Result<void> Ftl::check_buckets(uint32_t rg, uint32_t full) const
{
	uint32_t listed = 0;
	for (uint32_t v = 0; v <= upr_; v++) {
		for (uint32_t ru = heads_[size_t{rg} * (upr_ + 1) + v]; ru != kNone;
		     ru = next_[ru]) {
			if (state_[ru] != kFull || valid_[ru] != v || listed > rus_per_rg_)
				return violation("greedy bucket %llu holds RU %llu (valid %llu)", v,
						 ru, valid_[ru]);
			listed++;
		}
	}
	if (listed != full)
		return violation("group %llu: %llu RUs in greedy buckets, %llu full", rg, listed,
				 full);
	return ok();
}

Result<void> Ftl::check_handle_stats() const
{
	uint64_t host = 0, relocated = 0;
	for (const HandleStats &h : handle_stats_) {
		host += h.host_bytes;
		relocated += h.relocated_bytes;
	}
	if (host != stats_.host_bytes)
		return violation("handles' host bytes add up to %llu, not %llu", host,
				 stats_.host_bytes);
	if (relocated > stats_.relocated_bytes)
		return violation("handles' relocated bytes add up to %llu, over the %llu relocated",
				 relocated, stats_.relocated_bytes);
	return ok();
}

Result<void> Ftl::check_invariants() const
{
	auto sum_valid = check_rus();
	if (!sum_valid)
		return std::move(sum_valid).error();
	KVFDP_TRY(check_mapping(*sum_valid));
	for (uint32_t rg = 0; rg < cfg_.nrg; rg++)
		KVFDP_TRY(check_group(rg));
	if (stats_.erased_bytes != stats_.gc_runs * cfg_.ru_size)
		return violation("erased bytes %llu != GC runs %llu x RU size", stats_.erased_bytes,
				 stats_.gc_runs);
	return check_handle_stats();
}

}  // namespace kvfdp::model
