// The placement learner's recompute(), off the data path: it folds the counters into
// estimates, retires idle keys, groups the rest (lifetime ratio, order split, class and writer
// splits; by class while writers are replaced faster than they are measured), hands out
// handles and publishes them. docs/placement.md "Grouping" says why each step is what it is.
#include "placement/learner_internal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "placement/class_split.hpp"

namespace kvfdp::placement {

using namespace learner_detail;

RecomputeResult Learner::recompute(double now_s)
{
	std::lock_guard lock(mu_);
	RecomputeResult out;
	const uint64_t clock = clock_.load(std::memory_order_relaxed);
	const uint64_t delta = clock - last_clock_;
	if (last_now_ >= 0 && now_s > last_now_ && delta) {
		const double rate = static_cast<double>(delta) / (now_s - last_now_);
		write_rate_ = write_rate_ > 0 ? write_rate_ + 0.3 * (rate - write_rate_) : rate;
	}
	if (now_s >= 0)
		last_now_ = now_s;
	earlier_clock_ = {last_clock_, earlier_clock_[0]};
	last_clock_ = clock;
	last_delta_ = delta;

	merge_duplicates();
	std::vector<Cand> cands = fold(delta, out);
	clear_tombstones();
	std::vector<uint16_t> avail;
	for (unsigned h = 0; h < std::max<unsigned>(cfg_.nruh, 1); h++)
		if (usable(h))
			avail.push_back(static_cast<uint16_t>(h));
	if (avail.empty())
		avail.push_back(0);
	const std::vector<std::vector<uint32_t>> groups = group(cands, avail.size());
	pins_handed_over(out);
	const std::vector<uint16_t> group_handle = assign_handles(groups, cands, avail, out);
	publish(groups, cands, group_handle, out);
	close_idle(groups, cands, group_handle, out);
	out.groups = static_cast<uint32_t>(groups.size());
	if (out.moved_keys || !out.abandoned.empty() || !out.remapped.empty())
		generation_++;
	out.generation = generation_;
	return out;
}

// The capacity the time scales are measured in (1 GiB where the config gives none).
double Learner::capacity() const
{
	return static_cast<double>(cfg_.capacity_bytes ? cfg_.capacity_bytes : (uint64_t{1} << 30));
}

// Step 1: folds the counters into each key's estimates; pinned keys go to their pins, the
// rest are returned for grouping.
std::vector<Learner::Cand> Learner::fold(uint64_t delta, RecomputeResult &out)
{
	const double cap = capacity();
	const double alpha =
		delta ? 1.0 - std::exp(-static_cast<double>(delta) / (cfg_.decay_capacity * cap))
		      : 0.0;
	const uint64_t clock = last_clock_;  // this recompute's clock, one for every key
	const bool pressure = keys_.load(std::memory_order_relaxed) >
			      cfg_.retire_pressure_fill * static_cast<double>(kMaxKeys);
	std::vector<Cand> cands;
	for (uint32_t i = 0; i < kSlots; i++) {
		Slot &s = slots_[i];
		const uint64_t tag = s.tag.load(std::memory_order_acquire);
		if (tag == 0 || tag == kRetired)
			continue;
		KeyState &st = state_[i];
		const uint64_t w = s.written.load(std::memory_order_relaxed);
		const uint64_t d = s.died.load(std::memory_order_relaxed);
		const uint64_t a = s.died_age.load(std::memory_order_relaxed);
		if (w != st.seen_written)
			st.last_write = clock;
		if (delta) {
			const double dw = static_cast<double>(w - st.seen_written);
			st.share = (1 - alpha) * st.share + alpha * dw / static_cast<double>(delta);
		}
		st.age_num =
			(1 - alpha) * st.age_num + static_cast<double>(a - st.seen_age) * kAgeUnit;
		st.age_den = (1 - alpha) * st.age_den + static_cast<double>(d - st.seen_died);
		for (unsigned b = 0; b < kAgeBuckets; b++) {
			const uint32_t n =
				ages_[size_t{i} * kAgeBuckets + b].load(std::memory_order_relaxed);
			st.ages[b] = (1 - alpha) * st.ages[b] +
				     512.0 * static_cast<uint32_t>(n - st.seen_ages[b]);
			st.seen_ages[b] = n;
		}
		if (st.seen_written == 0 && w > 0)
			st.first_write = clock;
		st.seen_written = w;
		st.seen_died = d;
		st.seen_age = a;
		const double live = w > d ? static_cast<double>(w - d) : 0.0;
		// Little's law: live bytes / share of writes = mean lifetime on the write clock.
		// It counts data that has not died yet, which the mean age of deaths cannot.
		const double little = st.share > 0 ? live / st.share : 0.0;
		const double deaths = st.age_den > 0 ? st.age_num / st.age_den : 0.0;
		st.lifetime = std::max(little, deaths);
		if (retires(st, w - std::min(w, d), clock, pressure)) {
			retire(i);
			continue;
		}
		const auto pin = pin_for(key_of(tag));
		st.pinned = pin.has_value();
		if (pin) {
			if (s.handle.load(std::memory_order_relaxed) != *pin) {
				s.handle.store(*pin, std::memory_order_relaxed);
				out.moved_keys++;
			}
			continue;
		}
		cands.push_back({i, st.lifetime, st.share, s.handle.load(std::memory_order_relaxed),
				 key_of(tag).cls});
	}
	return cands;
}

// A key retires once it has written nothing for retire_idle capacities of device writes and
// holds less than kRetireLive of the capacity live, or has written nothing for
// retire_any capacities whatever it holds; under pressure (the table more than
// retire_pressure_fill full), after retire_pressure_idle capacities instead of retire_idle
// (docs/placement.md "Retirement").
bool Learner::retires(const KeyState &st, uint64_t live, uint64_t clock, bool pressure) const
{
	const double cap = capacity();
	const double idle = static_cast<double>(clock - std::min(clock, st.last_write));
	if (idle >= cfg_.retire_any * cap)
		return true;
	const double idle_min = pressure ? cfg_.retire_pressure_idle : cfg_.retire_idle;
	return idle >= idle_min * cap && static_cast<double>(live) < cap * kRetireLive;
}

// Slot i's key leaves the table: its tag becomes a tombstone (finds pass it, a new key may
// claim it) and its counters and estimates restart from zero for that next key. A place() or
// died() that found the key just before may still add to the zeroed counters: a few bytes
// counted for the slot's next key, never a wrong handle (a handle is one atomic word).
void Learner::clear_slot(uint32_t i)
{
	Slot &s = slots_[i];
	s.tag.store(kRetired, std::memory_order_release);
	s.written.store(0, std::memory_order_relaxed);
	s.died.store(0, std::memory_order_relaxed);
	s.died_age.store(0, std::memory_order_relaxed);
	for (unsigned b = 0; b < kAgeBuckets; b++)
		ages_[size_t{i} * kAgeBuckets + b].store(0, std::memory_order_relaxed);
	state_[i] = KeyState{};
	keys_.fetch_sub(1, std::memory_order_relaxed);
}

void Learner::retire(uint32_t i)
{
	clear_slot(i);
	retired_.fetch_add(1, std::memory_order_relaxed);
}

// Two claims of one key can race with a retirement (one claims the tombstone the other had
// passed) or with clear_tombstones() (one claims past a slot that turns empty, where finds
// then stop), leaving the key in two slots. The data path uses the one find() reaches; the
// other's counters and estimates are added to it and its slot is cleared. A copy find() does
// not reach while the other is not in the table waits: the key's next claim makes the pair.
void Learner::merge_duplicates()
{
	for (uint32_t i = 0; i < kSlots; i++) {
		const uint64_t tag = slots_[i].tag.load(std::memory_order_acquire);
		if (tag == 0 || tag == kRetired)
			continue;
		const Slot *f = find(key_of(tag));
		if (!f || f == &slots_[i])
			continue;
		const auto j = static_cast<uint32_t>(f - slots_.get());
		Slot &from = slots_[i], &to = slots_[j];
		to.written.fetch_add(from.written.load(std::memory_order_relaxed),
				     std::memory_order_relaxed);
		to.died.fetch_add(from.died.load(std::memory_order_relaxed),
				  std::memory_order_relaxed);
		to.died_age.fetch_add(from.died_age.load(std::memory_order_relaxed),
				      std::memory_order_relaxed);
		KeyState &a = state_[j];
		const KeyState &b = state_[i];
		for (unsigned k = 0; k < kAgeBuckets; k++) {
			ages_[size_t{j} * kAgeBuckets + k].fetch_add(
				ages_[size_t{i} * kAgeBuckets + k].load(std::memory_order_relaxed),
				std::memory_order_relaxed);
			a.seen_ages[k] += b.seen_ages[k];
			a.ages[k] += b.ages[k];
		}
		if (b.seen_written > 0)
			a.first_write = a.seen_written > 0 ? std::min(a.first_write, b.first_write)
							   : b.first_write;
		a.seen_written += b.seen_written;
		a.seen_died += b.seen_died;
		a.seen_age += b.seen_age;
		a.share += b.share;
		a.age_num += b.age_num;
		a.age_den += b.age_den;
		a.last_write = std::max(a.last_write, b.last_write);
		a.class_given_up = a.class_given_up || b.class_given_up;
		a.writer_given_up = a.writer_given_up || b.writer_given_up;
		clear_slot(i);
	}
}

// Tombstones just before an empty slot end no probe that could reach a key (a key sits
// where every slot from its hash on was taken when it was claimed): they become empty again,
// so that probes stay short. Each is swapped with a CAS, so a tombstone a key claims in the
// meantime stays claimed.
void Learner::clear_tombstones()
{
	for (uint32_t i = 0; i < kSlots; i++) {
		if (slots_[i].tag.load(std::memory_order_acquire) != 0)
			continue;
		for (uint32_t j = (i - 1) & (kSlots - 1); j != i; j = (j - 1) & (kSlots - 1)) {
			uint64_t t = kRetired;
			if (!slots_[j].tag.compare_exchange_strong(t, 0, std::memory_order_acq_rel))
				break;
		}
	}
}

// Step 2: groups by lifetime ratio, or by what mixing costs (mixing_cost.hpp,
// docs/placement.md "Grouping"). Keys with a meaningful share and a known lifetime shape the groups; the rest join the
// group whose lifetime is nearest theirs.
// A fixed policy's grouping of every key: by class or by writer, label order; labels beyond
// max_groups share the last group.
std::vector<std::vector<uint32_t>> Learner::group_fixed(const std::vector<Cand> &cands,
							size_t max_groups, Choice by) const
{
	std::vector<std::pair<uint64_t, uint32_t>> labelled;
	for (uint32_t c = 0; c < cands.size(); c++) {
		const Key k = key_of(slots_[cands[c].slot].tag.load(std::memory_order_relaxed));
		labelled.emplace_back(by == Choice::classes ? uint64_t{k.cls} : k.writer, c);
	}
	std::sort(labelled.begin(), labelled.end());
	std::vector<std::vector<uint32_t>> groups;
	for (size_t i = 0; i < labelled.size(); i++) {
		if (groups.empty() ||
		    (labelled[i].first != labelled[i - 1].first && groups.size() < max_groups))
			groups.emplace_back();
		groups.back().push_back(labelled[i].second);
	}
	return groups;
}

// The projection's curves cost a few hundred thousand operations per key: the lifetime
// grouping needs none, and the order split only where some keys' orders differ enough to
// keep or make a cut.
bool Learner::needs_curves(std::span<const CostKey> keys) const
{
	if (cfg_.grouping == Grouping::cost)
		return true;
	if (cfg_.grouping == Grouping::lifetime || keys.empty())
		return false;
	const auto [lo, hi] = std::minmax_element(
		keys.begin(), keys.end(),
		[](const CostKey &a, const CostKey &b) { return a.order < b.order; });
	return hi->order - lo->order >= cfg_.order_gap / 2;
}

// A key has its evidence once it has lived two of its lifetimes since its first write and
// seen at least half of what it wrote die: by then its deaths cover its lifetime
// distribution, and its death order has settled. Before, its deaths are those of its youngest
// data only (a key with a few small deaths shows an order of 1, a FIFO's).
bool Learner::evidenced(const KeyState &st, double life, uint64_t now)
{
	constexpr double kEvidenceLifetimes = 2.0;
	return st.seen_written > 0 && life > 0 &&
	       static_cast<double>(now - st.first_write) >= kEvidenceLifetimes * life &&
	       2 * st.seen_died >= st.seen_written;
}

// A key's decayed share starts at 0 and nears its share of the writes only after a few
// e-foldings (half a capacity each) of writing: a writer that started a tenth of a capacity ago
// shows a third of its rate. Divided by that warm-up, 1 - e^(-exposure / e-folding) (the
// exposure counts the interval of the recompute that first saw it), it is the share at which
// the key writes now, for a key that has written at a steady rate since it began. Beside a
// writer that stopped (a namespace fill, whose decayed share fades over a capacity), new
// writers otherwise stay under min_group_share, on one handle together, for a tenth of a
// capacity.
double Learner::rate_share(const KeyState &st, uint64_t now) const
{
	const double cap = capacity();
	const double exposure =
		static_cast<double>(now - std::min(now, st.first_write) + last_delta_);
	const double warm = 1.0 - std::exp(-exposure / (cfg_.decay_capacity * cap));
	return warm > 0 ? std::min(1.0, st.share / warm) : st.share;
}

// A key's death order says something once a quarter of what it wrote has died: before, its
// deaths are those of its youngest data only, and with none at all its order is 1, a FIFO's.
// New cuts on orders (the order split, and the class split of a writer of several classes
// once its orders are known) need this. Evidence for giving a part up, above, waits longer; a
// cut made that late leaves data written mixed meanwhile: a FIFO beside an LRU touched 8
// times, both unhinted, 1.398 with this and 1.517 with that.
bool Learner::order_known(const KeyState &st)
{
	return st.seen_written > 0 && 4 * st.seen_died >= st.seen_written;
}

std::vector<std::vector<uint32_t>> Learner::group(const std::vector<Cand> &cands, size_t max_groups)
{
	young_group_.fill(-1);
	churn_grouping_ = false;
	if (choice_ != Choice::learned)
		return group_fixed(cands, std::max<size_t>(max_groups, 1), choice_);
	// Per key, whether its writer is young: for the churn test and the young-writer split.
	const std::vector<uint8_t> young = young_keys(cands);
	churn_grouping_ = churning(cands, young);
	if (churn_grouping_)
		return group_fixed(cands, std::max<size_t>(max_groups, 1), Choice::classes);
	std::vector<uint32_t> major, minor;
	std::vector<CostKey> keys;
	std::vector<LifeMass> masses;
	double major_live = 0;
	for (uint32_t c = 0; c < cands.size(); c++) {
		const KeyState &st = state_[cands[c].slot];
		LifeMass m;
		if (cands[c].share < cfg_.min_key_share || !(cands[c].life > 0) ||
		    !life_mass(st.ages, st.age_den > 0 ? st.age_num / st.age_den : 0.0,
			       cands[c].life, age_shift_, m)) {
			minor.push_back(c);
			continue;
		}
		major.push_back(c);
		masses.push_back(m);
		const Key k = key_of(slots_[cands[c].slot].tag.load(std::memory_order_relaxed));
		CostCurve curve;
		curve.share = cands[c].share;
		keys.push_back({curve, cands[c].life, cands[c].handle, k.writer, k.cls,
				death_order(st.ages), order_known(st)});
		major_live += cands[c].share * cands[c].life;
	}
	if (needs_curves(keys))
		for (size_t i = 0; i < keys.size(); i++)
			keys[i].curve = cost_curve(masses[i], keys[i].curve.share, age_shift_);
	// The room the groups' logs have: the physical capacity less what GC keeps free (two
	// RUs) and the valid data no grouped key holds (pinned and small keys, and data from
	// before the learner or never discarded: all of the logical capacity not accounted for
	// while the device's own count is unknown).
	const double cap = capacity();
	const double ru = static_cast<double>(cfg_.ru_bytes);
	const double valid = device_valid_known_ ? static_cast<double>(device_valid_) : cap;
	CostGrouping p;
	p.max_groups = static_cast<unsigned>(max_groups);
	p.room = cap * (1 + cfg_.op) - 2 * ru - std::max(0.0, valid - major_live);
	p.ru_bytes = ru;
	p.age_shift = age_shift_;
	p.switch_margin = cfg_.switch_margin;
	p.keep_margin = cfg_.keep_margin;
	p.split_ratio = cfg_.split_ratio;
	p.merge_ratio = cfg_.merge_ratio;
	p.min_group_share = cfg_.min_group_share;
	p.order_gap = cfg_.order_gap;
	std::vector<std::vector<uint32_t>> groups;
	if (cfg_.grouping == Grouping::cost)
		groups = group_by_cost(keys, p, &projected_waf_);
	else if (cfg_.grouping == Grouping::order)
		groups = split_by_order(keys, group_by_lifetime(keys, p), p, &projected_waf_);
	else
		groups = group_by_lifetime(keys, p);
	for (auto &g : groups)
		for (uint32_t &k : g)
			k = major[k];
	if (groups.empty() && !cands.empty())
		groups.emplace_back();
	join_minor(groups, minor, cands);
	if (cfg_.grouping == Grouping::order) {
		split_classes(groups, cands, max_groups);
		split_young(groups, cands, young, max_groups);
	}
	return groups;
}

namespace {

// Per class, the index of the group whose keys of that class take most of the writes; -1
// where no key of the class writes.
template <class Cand>
std::array<int, kNumClasses> main_group_of_class(const std::vector<std::vector<uint32_t>> &groups,
						 const std::vector<Cand> &cands)
{
	std::array<int, kNumClasses> best;
	best.fill(-1);
	std::array<double, kNumClasses> best_share{};
	for (size_t g = 0; g < groups.size(); g++) {
		std::array<double, kNumClasses> share{};
		for (uint32_t c : groups[g])
			share[cands[c].cls] += cands[c].share;
		for (unsigned k = 0; k < kNumClasses; k++)
			if (share[k] > best_share[k]) {
				best_share[k] = share[k];
				best[k] = static_cast<int>(g);
			}
	}
	return best;
}

}  // namespace

// Keys too small to shape the groups join the group whose lifetime is nearest theirs (one
// with no lifetime yet joins the group with most writes, where `none` is).
void Learner::join_minor(std::vector<std::vector<uint32_t>> &groups,
			 const std::vector<uint32_t> &minor, const std::vector<Cand> &cands) const
{
	auto share_of = [&](const std::vector<uint32_t> &g) {
		double s = 0;
		for (uint32_t c : g)
			s += cands[c].share;
		return s;
	};
	auto life_of = [&](const std::vector<uint32_t> &g) {
		// write-share-weighted geometric mean
		double s = 0, lw = 0;
		for (uint32_t c : g) {
			s += cands[c].share;
			lw += cands[c].share * std::log(std::max(cands[c].life, 1.0));
		}
		return s > 0 ? std::exp(lw / s) : 1.0;
	};
	const std::array<int, kNumClasses> by_class = main_group_of_class(groups, cands);
	for (uint32_t c : minor) {
		size_t best = 0;
		double best_d = std::numeric_limits<double>::infinity();
		if (!(cands[c].life > 0) && by_class[cands[c].cls] >= 0)
			// Nothing known yet: the group of its class's writes (where a new key of its
			// class is placed).
			best = static_cast<size_t>(by_class[cands[c].cls]);
		else if (cands[c].life > 0)
			for (size_t g = 0; g < groups.size(); g++) {
				if (groups[g].empty())
					continue;
				const double d = std::fabs(std::log(std::max(cands[c].life, 1.0) /
								    life_of(groups[g])));
				if (d < best_d) {
					best_d = d;
					best = g;
				}
			}
		else
			// Nothing known of it or its class: the group that takes most writes (where
			// `none` is).
			for (size_t g = 0; g < groups.size(); g++)
				if (share_of(groups[g]) > share_of(groups[best]))
					best = g;
		groups[best].push_back(c);
	}
}

// Each group's claims on the handles its keys are on, strongest first: the votes of keys that
// wrote since the last recompute, at the share they write at now, then the others' decayed
// shares, then the lower handle.
std::vector<Learner::Claim> Learner::handle_claims(const std::vector<std::vector<uint32_t>> &groups,
						   const std::vector<Cand> &cands) const
{
	std::vector<Claim> claims;
	for (uint32_t g = 0; g < groups.size(); g++) {
		struct Vote {
			uint16_t handle;
			double writing = 0, idle = 0;
		};
		std::vector<Vote> per;
		for (uint32_t c : groups[g]) {
			auto it = std::find_if(per.begin(), per.end(), [&](const Vote &v) {
				return v.handle == cands[c].handle;
			});
			if (it == per.end())
				it = per.insert(per.end(), Vote{cands[c].handle});
			const KeyState &st = state_[cands[c].slot];
			const bool grouped =
				!mask_has(was_pinned_lo_, was_pinned_hi_, cands[c].handle);
			if (grouped && st.last_write == last_clock_)
				it->writing += rate_share(st, last_clock_);
			else  // a key with no writes yet still votes a little for where it is
				it->idle += cands[c].share + 1e-12;
		}
		for (const Vote &v : per)
			if (usable(v.handle))
				claims.push_back({v.writing, v.idle, g, v.handle});
	}
	std::sort(claims.begin(), claims.end(), [](const Claim &a, const Claim &b) {
		if (a.writing != b.writing)
			return a.writing > b.writing;
		return a.idle != b.idle ? a.idle > b.idle : a.handle < b.handle;
	});
	return claims;
}

// Step 3: handles. Each group keeps the handle its keys vote for most (below), if no group
// with more votes there took it first; the other groups take free handles; handles that held
// groups and hold none are abandoned.
// What a handle is worth keeping for is its open RU: the group whose keys fill it now keeps it.
// So a key that wrote since the last recompute votes for its handle with the share it writes
// at now (rate_share), and the claims are ranked by those votes first: a new writer's decayed
// share is a fraction of its rate while it warms up, so by decayed shares a group of keys that
// write nothing now could outvote the writers filling the handle's open unit (writers that
// restart without a stable id; docs/placement.md step 4 has the figures). A key that did not
// write votes with its decayed share, which ranks only claims with equal votes of writing keys
// (groups that write nothing now): a namespace fill that has ended no longer takes the handle
// from the writers that came after it, which would leave its open RU half written and closed
// (TensorRT-LLM's ranks and KVBM's slot file after their fill: learned then differs from none
// by chance alone, by -0.06 to +0.04 between seeds).
// Writes a pin of the last recompute placed were not a group's: they vote as a key that did
// not write, so a writer whose pin a reload dropped does not take its new group to the pin's
// handle.
// A free handle no group held at the last recompute has no open RU of anyone's data
// (never written, or closed by the RUH Update that abandoned it), so it is taken before
// one another group leaves now; taking such a handle is a remap, reported for RUH Update.
std::vector<uint16_t> Learner::assign_handles(const std::vector<std::vector<uint32_t>> &groups,
					      const std::vector<Cand> &cands,
					      const std::vector<uint16_t> &avail,
					      RecomputeResult &out)
{
	std::vector<uint16_t> group_handle(groups.size(), kNoHandle);
	uint64_t taken_lo = 0, taken_hi = 0;
	for (const Claim &c : handle_claims(groups, cands)) {
		if (group_handle[c.group] != kNoHandle || mask_has(taken_lo, taken_hi, c.handle))
			continue;
		group_handle[c.group] = c.handle;
		mask_set(taken_lo, taken_hi, c.handle);
	}
	// The lowest free handle; with clean, only one no group held at the last recompute.
	auto free_handle = [&](bool clean) {
		for (uint16_t h : avail)
			if (!mask_has(taken_lo, taken_hi, h) &&
			    !(clean && mask_has(used_lo_, used_hi_, h)))
				return h;
		return kNoHandle;
	};
	for (uint32_t g = 0; g < groups.size(); g++) {
		if (group_handle[g] != kNoHandle)
			continue;
		uint16_t h = free_handle(true);
		if (h == kNoHandle) {
			h = free_handle(false);
			// A group that claimed none of its handles has no key on h (its claim on
			// h would have won): h held another group's data.
			if (h != kNoHandle)
				out.remapped.push_back(h);
		}
		if (h == kNoHandle) {  // cannot happen: groups <= avail
			group_handle[g] = avail.front();
			continue;
		}
		group_handle[g] = h;
		mask_set(taken_lo, taken_hi, h);
	}
	// Abandoned: used by the learner before, not now.
	for (uint16_t h : avail)
		if (mask_has(used_lo_, used_hi_, h) && !mask_has(taken_lo, taken_hi, h))
			out.abandoned.push_back(h);
	used_lo_ = taken_lo;
	used_hi_ = taken_hi;
	return group_handle;
}

// Step 4: publish, one relaxed store per key whose handle changed.
void Learner::publish(const std::vector<std::vector<uint32_t>> &groups,
		      const std::vector<Cand> &cands, const std::vector<uint16_t> &group_handle,
		      RecomputeResult &out)
{
	uint16_t biggest = base_handle();
	double biggest_share = -1;
	for (uint32_t g = 0; g < groups.size(); g++) {
		double s = 0;
		for (uint32_t c : groups[g]) {
			s += cands[c].share;
			state_[cands[c].slot].group = g;
			if (cands[c].handle != group_handle[g]) {
				slots_[cands[c].slot].handle.store(group_handle[g],
								   std::memory_order_relaxed);
				out.moved_keys++;
			}
		}
		if (s > biggest_share) {
			biggest_share = s;
			biggest = group_handle[g];
		}
	}
	if (groups.empty())
		mask_set(used_lo_, used_hi_, biggest);
	// A new key goes where its class's young writers go, else where its class's writes go,
	// else where most writes go.
	const std::array<int, kNumClasses> by_class = main_group_of_class(groups, cands);
	std::array<uint16_t, kNumClasses> cls_handle{};
	for (unsigned k = 0; k < kNumClasses; k++)
		cls_handle[k] = young_group_[k] >= 0 ? group_handle[young_group_[k]]
				: by_class[k] >= 0   ? group_handle[by_class[k]]
						     : biggest;
	publish_class_defaults(cls_handle);
}

// A handle whose group stopped writing (a namespace fill that ended, a writer that paused)
// keeps the reclaim unit it was writing open, part written: out of GC's reach, its unwritten
// part is spare room lost to every other handle while the pause lasts. On LMCache's nine
// workers rebuilt with a fill of their own (docs/RESULTS.md "Slot engines"), the fill's handle
// held a unit with 248 KiB written for two capacities, 1/18 of the spare room at 7%. Closed,
// it is GC's to reclaim. But closing early has a cost: the unit's data that is still valid is
// copied when GC takes it, where the group would have filled the unit had it resumed. So a
// pause counts only once the group would have written idle_close_rus units in it at the rate
// it wrote before (its write share then). Counted in device writes alone (4 units), the slow
// engine of the two-engine host was closed between its bursts, and that row went from 1.117
// to 1.220; at its own rate, 4 units cost the slot store, whose workers pause during their
// first capacity, 0.005 of WAF (the mean of seeds 1-4), and 16 units 0.003. Once per pause: a
// handle closed as idle is closed again only after its group wrote again.
void Learner::close_idle(const std::vector<std::vector<uint32_t>> &groups,
			 const std::vector<Cand> &cands, const std::vector<uint16_t> &group_handle,
			 RecomputeResult &out)
{
	uint64_t lo = 0, hi = 0;
	for (uint32_t g = 0; g < groups.size(); g++) {
		uint64_t last = 0;
		double share = 0;
		for (uint32_t c : groups[g]) {
			last = std::max(last, state_[cands[c].slot].last_write);
			share += cands[c].share;
		}
		const uint16_t h = group_handle[g];
		if (h >= kMaxHandles)
			continue;
		if (last == last_clock_) {  // writing: what it writes per device byte, for later
			writing_share_[h] = share;
			continue;
		}
		const double pause = static_cast<double>(last_clock_ - last);
		if (cfg_.idle_close_rus == 0 ||
		    pause * writing_share_[h] <
			    static_cast<double>(cfg_.idle_close_rus * cfg_.ru_bytes))
			continue;
		if (!mask_has(idle_lo_, idle_hi_, h) && !contains(out.abandoned, h) &&
		    !contains(out.remapped, h))
			out.idle.push_back(h);
		mask_set(lo, hi, h);
	}
	idle_lo_ = lo;
	idle_hi_ = hi;
}
}  // namespace kvfdp::placement
