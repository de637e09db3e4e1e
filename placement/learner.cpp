// The placement learner: per-key counters on the data path, estimates and grouping off it
// (the grouping's projection is mixing_cost.cpp's). docs/placement.md "The learner" explains
// the estimates and the grouping rule.
#include "placement/learner.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include "common/fnv.hpp"
#include "placement/class_split.hpp"

namespace kvfdp::placement {

namespace {

constexpr uint32_t kSlots = 2 * Learner::kMaxKeys;  // power of two, at most half full
constexpr uint32_t kMaxProbe = 64;                  // bounded data-path probe
constexpr uint16_t kNoHandle = 0xFFFF;
// The tag of a retired key's slot (a tombstone): probes pass it, a new key may claim it.
// key_word() never gives it (its largest value is 2^63).
constexpr uint64_t kRetired = ~uint64_t{0};
// Claims that lose their CAS to another key retry the probe this many times, then overflow.
constexpr uint32_t kMaxClaimTries = 4;

uint32_t slot_hash(uint64_t word)
{
	uint64_t z = word * 0x9E3779B97F4A7C15ull;
	z ^= z >> 29;
	return static_cast<uint32_t>(z) & (kSlots - 1);
}

bool contains(const std::vector<uint16_t> &v, uint16_t h)
{
	return std::find(v.begin(), v.end(), h) != v.end();
}

bool mask_has(uint64_t lo, uint64_t hi, unsigned h)
{
	return h < 64 ? (lo >> h) & 1 : (hi >> (h - 64)) & 1;
}

void mask_set(uint64_t &lo, uint64_t &hi, unsigned h)
{
	if (h < 64)
		lo |= uint64_t{1} << h;
	else if (h < 128)
		hi |= uint64_t{1} << (h - 64);
}

constexpr const char *kMagic = "kvfdp-learner";
// 1: no death-age histograms, 2: no class split, 3: no device identity and no last write,
// 4: no writer names, 5: no writer split (all still read)
constexpr int kVersion = 6;
// save()'s temporary files are named path + kTempInfix + a unique suffix.
constexpr const char *kTempInfix = ".tmp.";

// died_age counts (bytes / 512) x (age / 512).
constexpr double kAgeUnit = 512.0 * 512.0;

}  // namespace

// What recompute() keeps per slot.
struct Learner::KeyState {
	uint64_t seen_written = 0;  // slot counters at the last recompute
	uint64_t seen_died = 0;
	uint64_t seen_age = 0;
	std::array<uint32_t, kAgeBuckets> seen_ages{};
	std::array<double, kAgeBuckets> ages{};  // decayed bytes died per age bucket
	double share = 0;                        // decayed share of device writes
	double age_num = 0;                      // decayed sum of bytes x age of deaths
	double age_den = 0;                      // decayed bytes of deaths
	double lifetime = 0;                     // estimate, device bytes (0: unknown)
	uint32_t group = 0;
	bool pinned = false;
	// The class split (class_split.hpp): the clock at the first recompute that saw the key
	// written (meaningful once seen_written > 0), and whether its class part and its writer
	// part were given up.
	uint64_t first_write = 0;
	bool class_given_up = false;
	bool writer_given_up = false;
	bool writer_cut = false;  // its writer part was cut at the last recompute
	bool class_cut = false;   // its class part was cut on measurement at the last recompute
	// The clock at the last recompute that saw the key write (retirement).
	uint64_t last_write = 0;
	// The key's writer as name_keys() named it ("" none yet): kept in the state file, so a
	// restarted kvfdpd shows an identity before its writer creates a file again.
	std::string name;
};

Learner::Learner(const LearnerConfig &cfg)
    : cfg_(cfg), slots_(new Slot[kSlots]), ages_(new AgeCount[size_t{kSlots} * kAgeBuckets]),
      age_shift_(age_shift_for(cfg.capacity_bytes)), state_(kSlots)
{
	if (cfg_.nruh > kMaxHandles)
		cfg_.nruh = static_cast<uint16_t>(kMaxHandles);
	if (!(cfg_.op >= 0))
		cfg_.op = 0.07;
	if (!(cfg_.split_ratio > 1))
		cfg_.split_ratio = 2.0;
	if (!(cfg_.merge_ratio > 1) || cfg_.merge_ratio > cfg_.split_ratio)
		cfg_.merge_ratio = cfg_.split_ratio;
	if (!(cfg_.keep_margin >= 0))
		cfg_.keep_margin = 0.01;
	if (!(cfg_.switch_margin >= cfg_.keep_margin))
		cfg_.switch_margin = std::max(0.05, cfg_.keep_margin);
	if (!(cfg_.decay_capacity > 0))
		cfg_.decay_capacity = 0.5;
	if (!(cfg_.min_group_share >= 0))
		cfg_.min_group_share = 0.02;
	if (!(cfg_.retire_idle > 0))
		cfg_.retire_idle = 2.0;
	if (!(cfg_.retire_any >= cfg_.retire_idle))
		cfg_.retire_any = std::max(16.0, cfg_.retire_idle);
	if (!(cfg_.retire_pressure_fill > 0 && cfg_.retire_pressure_fill < 1))
		cfg_.retire_pressure_fill = 0.75;
	if (!(cfg_.retire_pressure_idle > 0 && cfg_.retire_pressure_idle <= cfg_.retire_idle))
		cfg_.retire_pressure_idle = std::min(1.0 / 16, cfg_.retire_idle);
	const uint16_t base = base_handle();
	for (auto &h : class_handle_)
		h.store(base, std::memory_order_relaxed);
	mask_set(used_lo_, used_hi_, base);
}

Learner::~Learner() = default;

bool Learner::usable(unsigned h) const
{
	if (h >= std::max<unsigned>(cfg_.nruh, 1))
		return false;
	if ((cfg_.handle_mask_lo | cfg_.handle_mask_hi) &&
	    !mask_has(cfg_.handle_mask_lo, cfg_.handle_mask_hi, h))
		return false;
	return !mask_has(pinned_lo_, pinned_hi_, h);
}

uint16_t Learner::base_handle() const
{
	for (unsigned h = 0; h < std::max<unsigned>(cfg_.nruh, 1); h++)
		if (usable(h))
			return static_cast<uint16_t>(h);
	return 0;
}

// ---- data path ----

inline const Learner::Slot *Learner::find_word(uint64_t word) const noexcept
{
	uint32_t i = slot_hash(word);
	for (uint32_t n = 0; n < kMaxProbe; n++, i = (i + 1) & (kSlots - 1)) {
		const uint64_t t = slots_[i].tag.load(std::memory_order_acquire);
		if (t == word)
			return &slots_[i];
		if (t == 0)
			return nullptr;
	}
	return nullptr;
}

const Learner::Slot *Learner::find(Key k) const noexcept
{
	return find_word(key_word(k));
}

Learner::Slot *Learner::find_or_claim(Key k) noexcept
{
	const uint64_t word = key_word(k);
	if (const Slot *s = find_word(word))
		return const_cast<Slot *>(s);
	return claim(k, word);
}

// A key not in the table claims the first retired or empty slot of its probe sequence, after
// probing to the first empty slot (so it is not in the table further on). Out of line: the
// data path's common case is a key already there.
Learner::Slot *Learner::claim(Key k, uint64_t word) noexcept
{
	for (uint32_t tries = 0; tries < kMaxClaimTries; tries++) {
		uint32_t i = slot_hash(word);
		Slot *free = nullptr;
		uint64_t expect = 0;
		for (uint32_t n = 0; n < kMaxProbe; n++, i = (i + 1) & (kSlots - 1)) {
			const uint64_t t = slots_[i].tag.load(std::memory_order_acquire);
			if (t == word)
				return &slots_[i];
			if (t == kRetired && !free) {
				free = &slots_[i];
				expect = kRetired;
			}
			if (t != 0)
				continue;
			if (!free)
				free = &slots_[i];
			break;
		}
		if (!free || keys_.load(std::memory_order_relaxed) >= kMaxKeys)
			return nullptr;
		// The handle is set before the tag is published, so a reader that finds the key
		// also finds its handle.
		free->handle.store(initial_handle(k), std::memory_order_relaxed);
		uint64_t t = expect;
		if (free->tag.compare_exchange_strong(t, word, std::memory_order_release,
						      std::memory_order_acquire)) {
			// Another thread racing for this slot with another key may have stored its
			// handle in between: store ours again (recompute() corrects any reader that
			// saw the other one meanwhile).
			free->handle.store(initial_handle(k), std::memory_order_relaxed);
			keys_.fetch_add(1, std::memory_order_relaxed);
			return free;
		}
		if (t == word)  // another thread claimed it for the same key
			return free;
	}
	return nullptr;
}

uint16_t Learner::initial_handle(Key k) const noexcept
{
	const uint8_t cls = k.cls < kNumClasses ? k.cls : uint8_t{KVFDP_CLASS_NOT_SET};
	uint16_t general = kNoHandle;
	const uint64_t w = k.writer + 1;
	for (uint32_t i = 0; i < kMaxWriterPins; i++) {
		const uint64_t pw = pin_writer_[i].load(std::memory_order_relaxed);
		if (pw == 0)
			break;
		if (pw != w)
			continue;
		const uint32_t v = pin_value_[i].load(std::memory_order_relaxed);
		const uint32_t clsmask = v >> 16;
		if (!((clsmask >> cls) & 1))
			continue;
		if (clsmask != (1u << kNumClasses) - 1)
			return static_cast<uint16_t>(v & 0xFFFF);  // writer + class: most specific
		general = static_cast<uint16_t>(v & 0xFFFF);
	}
	if (general != kNoHandle)
		return general;
	return class_handle_[cls].load(std::memory_order_relaxed);
}

uint16_t Learner::place(Key k, uint64_t bytes) noexcept
{
	clock_.fetch_add(bytes, std::memory_order_relaxed);
	Slot *s = find_or_claim(k);
	if (!s) {
		overflow_.fetch_add(bytes, std::memory_order_relaxed);
		return initial_handle(k);
	}
	s->written.fetch_add(bytes, std::memory_order_relaxed);
	return s->handle.load(std::memory_order_relaxed);
}

uint16_t Learner::handle_of(Key k) const noexcept
{
	const Slot *s = find(k);
	return s ? s->handle.load(std::memory_order_relaxed) : initial_handle(k);
}

void Learner::died(Key k, uint64_t bytes, uint64_t age) noexcept
{
	Slot *s = const_cast<Slot *>(find(k));
	if (!s)
		return;
	s->died.fetch_add(bytes, std::memory_order_relaxed);
	s->died_age.fetch_add((bytes >> 9) * (age >> 9), std::memory_order_relaxed);
	const size_t slot = static_cast<size_t>(s - slots_.get());
	ages_[slot * kAgeBuckets + age_bucket(age, age_shift_)].fetch_add(
		static_cast<uint32_t>(bytes >> 9), std::memory_order_relaxed);
}

// ---- off the data path ----

void Learner::set_pins(std::span<const Pin> pins)
{
	std::lock_guard lock(mu_);
	pins_.assign(pins.begin(), pins.end());
	pinned_lo_ = pinned_hi_ = 0;
	for (const Pin &p : pins_)
		if (p.handle < std::max<unsigned>(cfg_.nruh, 1))
			mask_set(pinned_lo_, pinned_hi_, p.handle);
	uint32_t n = 0;
	for (const Pin &p : pins_) {
		if (!p.writer || n >= kMaxWriterPins)
			continue;
		const uint32_t clsmask = p.cls ? (1u << std::min<unsigned>(*p.cls, kNumClasses - 1))
					       : (1u << kNumClasses) - 1;
		pin_value_[n].store(clsmask << 16 | p.handle, std::memory_order_relaxed);
		pin_writer_[n].store(*p.writer + 1, std::memory_order_relaxed);
		n++;
	}
	for (uint32_t i = n; i < kMaxWriterPins; i++)
		pin_writer_[i].store(0, std::memory_order_relaxed);
	const uint16_t base = base_handle();
	std::array<uint16_t, kNumClasses> bases{};
	bases.fill(base);
	publish_class_defaults(bases);
	if (clock_.load(std::memory_order_relaxed) == 0) {
		// Nothing written yet (the pins kvfdpd sets at start): no handle holds anyone's
		// data, so these pins hand nothing over.
		recomputed_pins_ = pins_;
		used_lo_ = used_hi_ = 0;
		mask_set(used_lo_, used_hi_, base);
	}
}

// A handle changes owner through set_pins() when the pins that name it now share none with
// those that named it at the last recompute. One a learned group held that a pin takes now
// holds the group's open RU, which the pinned writer would fill: remapped. One that pins
// named before and not now holds their open RU: it counts as a handle a group held, so it is
// abandoned unless a group keeps it, or remapped if another group must take it (step 3).
// Pins that keep a handle while adding or dropping others on it hand nothing over, as a group
// that gains or loses keys keeps its handle.
void Learner::pins_handed_over(RecomputeResult &out)
{
	auto same = [](const Pin &a, const Pin &b) {
		return a.handle == b.handle && a.writer == b.writer && a.cls == b.cls;
	};
	for (unsigned h = 0; h < std::max<unsigned>(cfg_.nruh, 1); h++) {
		bool was = false, now = false, kept = false;
		for (const Pin &p : recomputed_pins_)
			was = was || p.handle == h;
		for (const Pin &p : pins_) {
			if (p.handle != h)
				continue;
			now = true;
			for (const Pin &q : recomputed_pins_)
				kept = kept || same(p, q);
		}
		if (now && !kept && (was || mask_has(used_lo_, used_hi_, h)))
			out.remapped.push_back(static_cast<uint16_t>(h));
		else if (was && !now) {
			if (usable(h))
				mask_set(used_lo_, used_hi_, h);
			else  // outside the learner's handles: nothing will write there again
				out.abandoned.push_back(static_cast<uint16_t>(h));
		}
	}
	recomputed_pins_ = pins_;
}

std::vector<uint16_t> RecomputeResult::to_close() const
{
	std::vector<uint16_t> out = abandoned;
	out.insert(out.end(), remapped.begin(), remapped.end());
	out.insert(out.end(), idle.begin(), idle.end());
	return out;
}

void Learner::publish_class_defaults(const std::array<uint16_t, kNumClasses> &base)
{
	for (unsigned c = 0; c < kNumClasses; c++) {
		uint16_t h = base[c];
		for (const Pin &p : pins_)
			if (!p.writer && p.cls && *p.cls == c)
				h = p.handle;
		class_handle_[c].store(h, std::memory_order_relaxed);
	}
}

std::optional<uint16_t> Learner::pin_for(Key k) const
{
	std::optional<uint16_t> by_writer, by_class;
	for (const Pin &p : pins_) {
		if (p.writer && *p.writer == k.writer) {
			if (p.cls && *p.cls == k.cls)
				return p.handle;
			if (!p.cls)
				by_writer = p.handle;
		} else if (!p.writer && p.cls && *p.cls == k.cls) {
			by_class = p.handle;
		}
	}
	return by_writer ? by_writer : by_class;
}

void Learner::name_keys(const std::function<std::string(uint64_t writer)> &name_of)
{
	std::lock_guard lock(mu_);
	for (uint32_t i = 0; i < kSlots; i++) {
		const uint64_t tag = slots_[i].tag.load(std::memory_order_acquire);
		if (tag == 0 || tag == kRetired || !state_[i].name.empty())
			continue;
		state_[i].name = name_of(key_of(tag).writer);
		if (state_[i].name.size() > kMaxNameBytes)
			state_[i].name.resize(kMaxNameBytes);
	}
}

void Learner::set_writer_name(uint64_t writer, std::string name)
{
	std::lock_guard lock(mu_);
	for (auto &[w, n] : names_)
		if (w == writer) {
			n = std::move(name);
			return;
		}
	names_.emplace_back(writer, std::move(name));
}

// One unpinned key as recompute() groups it.
struct Learner::Cand {
	uint32_t slot;
	double life;
	double share;
	uint16_t handle;
	uint8_t cls = 0;
};

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
							size_t max_groups) const
{
	std::vector<std::pair<uint64_t, uint32_t>> labelled;
	for (uint32_t c = 0; c < cands.size(); c++) {
		const Key k = key_of(slots_[cands[c].slot].tag.load(std::memory_order_relaxed));
		labelled.emplace_back(choice_ == Choice::classes ? uint64_t{k.cls} : k.writer, c);
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
// (Evidence for giving a part up, above, waits longer; a cut on orders made that late leaves
// data written mixed meanwhile: a FIFO beside an LRU touched 8 times, both unhinted, 1.398
// with this and 1.517 with that.)
bool Learner::order_known(const KeyState &st)
{
	return st.seen_written > 0 && 4 * st.seen_died >= st.seen_written;
}

std::vector<std::vector<uint32_t>> Learner::group(const std::vector<Cand> &cands, size_t max_groups)
{
	if (choice_ != Choice::learned)
		return group_fixed(cands, std::max<size_t>(max_groups, 1));
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
	if (cfg_.grouping == Grouping::order)
		split_classes(groups, cands, max_groups);
	return groups;
}

// Step 2b: the class split (class_split.hpp) within the groups, all keys included.
void Learner::split_classes(std::vector<std::vector<uint32_t>> &groups,
			    const std::vector<Cand> &cands, size_t max_groups)
{
	// Nothing is split before the device has written a reclaim unit: the learner starts as
	// `none`, and before that no write share says anything.
	const uint64_t now = last_clock_;  // the clock fold() stamped first and last writes with
	if (!(cfg_.class_split_room > 0) || cfg_.ru_bytes == 0 || groups.empty() ||
	    now < cfg_.ru_bytes)
		return;
	// A writer part is cut only within its keys' first half capacity of device writes, from
	// the second recompute that sees them on (or kept once cut): by then its write share has
	// shown and what it wrote mixed is little, and an id that lives less than a regroup (a
	// restarted writer with no stable identity) is never cut.
	constexpr double kWriterYoung = 0.5;
	std::vector<ClassKey> keys(cands.size());
	for (uint32_t c = 0; c < cands.size(); c++) {
		const KeyState &st = state_[cands[c].slot];
		const Key k = key_of(slots_[cands[c].slot].tag.load(std::memory_order_relaxed));
		// Seen written at an earlier recompute than this one.
		const bool seen_before = st.seen_written > 0 && now > st.first_write;
		const bool writing = st.last_write == last_clock_ && seen_before;
		keys[c] = {k.writer,
			   k.cls,
			   writing ? rate_share(st, now) : cands[c].share,
			   cands[c].life,
			   death_order(st.ages),
			   evidenced(st, cands[c].life, now),
			   st.class_given_up,
			   st.writer_given_up || !cfg_.writer_split,
			   st.writer_cut || (seen_before &&
					     static_cast<double>(now - st.first_write) <
						     kWriterYoung * static_cast<double>(
									    cfg_.capacity_bytes)),
			   cands[c].handle,
			   writing,
			   st.class_cut,
			   st.seen_written > 0 && st.first_write == now};
	}
	ClassSplitParams p;
	p.max_groups = max_groups;
	p.budget = static_cast<size_t>(cfg_.class_split_room * cfg_.op *
				       static_cast<double>(cfg_.capacity_bytes) /
				       static_cast<double>(cfg_.ru_bytes));
	p.min_group_share = cfg_.min_group_share;
	p.alike_order = cfg_.alike_order;
	p.alike_ratio = cfg_.alike_ratio;
	p.differ_order = cfg_.order_gap / 4;
	p.differ_ratio = cfg_.merge_ratio;
	ClassSplitResult r = split_by_class(keys, std::move(groups), p);
	for (uint32_t c : r.given_up)
		state_[cands[c].slot].class_given_up = true;
	for (uint32_t c = 0; c < cands.size(); c++)
		state_[cands[c].slot].writer_cut = state_[cands[c].slot].class_cut = false;
	for (uint32_t c : r.class_cut)
		state_[cands[c].slot].class_cut = true;
	for (uint32_t c : r.writer_cut)
		state_[cands[c].slot].writer_cut = true;
	for (uint32_t c : r.writer_given_up)
		state_[cands[c].slot].writer_given_up = true;
	groups = std::move(r.groups);
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

// Step 3: handles. Each group keeps the handle most of its writes went to, if free; the
// other groups take free handles; handles that held groups and hold none are abandoned.
// A free handle no group held at the last recompute has no open RU of anyone's data
// (never written, or closed by the RUH Update that abandoned it), so it is taken before
// one another group leaves now; taking such a handle is a remap, reported for RUH Update.
std::vector<uint16_t> Learner::assign_handles(const std::vector<std::vector<uint32_t>> &groups,
					      const std::vector<Cand> &cands,
					      const std::vector<uint16_t> &avail,
					      RecomputeResult &out)
{
	std::vector<uint16_t> group_handle(groups.size(), kNoHandle);
	struct Claim {
		double share;
		uint32_t group;
		uint16_t handle;
	};
	std::vector<Claim> claims;
	for (uint32_t g = 0; g < groups.size(); g++) {
		std::vector<std::pair<uint16_t, double>> per;
		for (uint32_t c : groups[g]) {
			auto it = std::find_if(per.begin(), per.end(),
					       [&](auto &p) { return p.first == cands[c].handle; });
			// A key with no writes yet still votes a little for where it is.
			const double vote = cands[c].share + 1e-12;
			if (it == per.end())
				per.emplace_back(cands[c].handle, vote);
			else
				it->second += vote;
		}
		for (auto &[h, s] : per)
			if (usable(h))
				claims.push_back({s, g, h});
	}
	std::sort(claims.begin(), claims.end(), [](const Claim &a, const Claim &b) {
		return a.share != b.share ? a.share > b.share : a.handle < b.handle;
	});
	uint64_t taken_lo = 0, taken_hi = 0;
	for (const Claim &c : claims) {
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
	// A new key goes where its class's writes go, else where most writes go.
	const std::array<int, kNumClasses> by_class = main_group_of_class(groups, cands);
	std::array<uint16_t, kNumClasses> cls_handle{};
	for (unsigned k = 0; k < kNumClasses; k++)
		cls_handle[k] = by_class[k] >= 0 ? group_handle[by_class[k]] : biggest;
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

void Learner::set_device_valid(uint64_t bytes)
{
	std::lock_guard lock(mu_);
	device_valid_ = bytes;
	device_valid_known_ = true;
}

void Learner::set_choice(Choice c)
{
	std::lock_guard lock(mu_);
	choice_ = c;
}

Choice Learner::choice() const
{
	std::lock_guard lock(mu_);
	return choice_;
}

const char *choice_name(Choice c)
{
	switch (c) {
	case Choice::classes: return "classes";
	case Choice::writers: return "writers";
	default: return "learned";
	}
}

double Learner::projected_waf() const
{
	std::lock_guard lock(mu_);
	return projected_waf_;
}

std::vector<KeyInfo> Learner::groups() const
{
	std::lock_guard lock(mu_);
	std::vector<KeyInfo> out;
	for (uint32_t i = 0; i < kSlots; i++) {
		const Slot &s = slots_[i];
		const uint64_t tag = s.tag.load(std::memory_order_acquire);
		if (tag == 0 || tag == kRetired)
			continue;
		const KeyState &st = state_[i];
		KeyInfo k;
		k.key = key_of(tag);
		k.writer_name = st.name;
		for (const auto &[w, n] : names_)
			if (w == k.key.writer)
				k.writer_name = n;
		k.handle = s.handle.load(std::memory_order_relaxed);
		k.group = st.group;
		k.pinned = st.pinned;
		k.lifetime_bytes = st.lifetime;
		k.lifetime_s = write_rate_ > 0 ? st.lifetime / write_rate_ : 0.0;
		k.write_share = st.share;
		k.written_bytes = s.written.load(std::memory_order_relaxed);
		k.died_bytes = s.died.load(std::memory_order_relaxed);
		k.live_bytes = k.written_bytes > k.died_bytes ? k.written_bytes - k.died_bytes : 0;
		out.push_back(std::move(k));
	}
	std::sort(out.begin(), out.end(), [](const KeyInfo &a, const KeyInfo &b) {
		if (a.handle != b.handle)
			return a.handle < b.handle;
		if (a.lifetime_bytes != b.lifetime_bytes)
			return a.lifetime_bytes < b.lifetime_bytes;
		return a.key.writer != b.key.writer ? a.key.writer < b.key.writer
						    : a.key.cls < b.key.cls;
	});
	return out;
}

// ---- soft state ----

namespace {

// The directory path is in ("." for a bare name), and path's name in it.
std::pair<std::string, std::string> split_path(const std::string &path)
{
	const size_t slash = path.rfind('/');
	if (slash == std::string::npos)
		return {".", path};
	return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// A temporary file beside path with a name no other save uses (pid, a counter and random
// bits), created exclusively, never through a link, mode 0600. Retries a name taken.
Result<std::pair<int, std::string>> create_temp(const std::string &path)
{
	static std::atomic<uint64_t> counter{0};
	for (int tries = 0; tries < 16; tries++) {
		uint64_t rnd = 0;
		if (::getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
			rnd = static_cast<uint64_t>(::time(nullptr)) * 0x9E3779B97F4A7C15ull;
		char suffix[64];
		std::snprintf(suffix, sizeof(suffix), "%s%d.%llu.%08llx", kTempInfix,
			      static_cast<int>(::getpid()),
			      static_cast<unsigned long long>(counter.fetch_add(1)),
			      static_cast<unsigned long long>(rnd & 0xFFFFFFFF));
		const std::string tmp = path + suffix;
		const int fd = ::open(tmp.c_str(),
				      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return std::pair{fd, tmp};
		if (errno != EEXIST)
			return errno_error(errno, "write learned state " + tmp);
	}
	return errno_error(EEXIST, "write learned state " + path + kTempInfix + "*");
}

// Writes text to path so that a crash leaves the old file or the new one whole: a new
// temporary file, fsync'ed, renamed over path, then the directory fsync'ed so the rename
// itself is on disk.
Result<void> write_atomically(const std::string &path, const std::string &text)
{
	auto t = create_temp(path);
	if (!t)
		return std::move(t).error();
	const auto [fd, tmp] = *t;
	auto fail = [fd = fd, tmp = tmp](int e, const std::string &what) -> Result<void> {
		::close(fd);
		::unlink(tmp.c_str());
		return errno_error(e, what);
	};
	size_t off = 0;
	while (off < text.size()) {
		const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(errno, "write learned state " + tmp);
		}
		off += static_cast<size_t>(n);
	}
	if (::fsync(fd) != 0)
		return fail(errno, "write learned state " + tmp);
	if (::close(fd) != 0) {
		const int e = errno;
		::unlink(tmp.c_str());
		return errno_error(e, "write learned state " + tmp);
	}
	if (::rename(tmp.c_str(), path.c_str()) != 0) {
		const int e = errno;
		::unlink(tmp.c_str());
		return errno_error(e, "rename learned state to " + path);
	}
	const std::string dir = split_path(path).first;
	const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno_error(errno, "open " + dir + " to sync the learned state's rename");
	const int r = ::fsync(dfd);
	const int e = errno;
	::close(dfd);
	if (r != 0)
		return errno_error(e, "sync " + dir + " after renaming the learned state");
	return ok();
}

}  // namespace

void Learner::set_device_identity(std::string id)
{
	for (char &c : id)
		if (std::isspace(static_cast<unsigned char>(c)) ||
		    !std::isprint(static_cast<unsigned char>(c)))
			c = '_';
	std::lock_guard lock(mu_);
	device_ = std::move(id);
}

Result<void> Learner::save(const std::string &path) const
{
	std::ostringstream body;
	body.precision(17);
	{
		std::lock_guard lock(mu_);
		body << kMagic << ' ' << kVersion << '\n';
		body << "device " << (device_.empty() ? std::string("-") : device_) << '\n';
		body << "nruh " << cfg_.nruh << '\n';
		body << "clock " << clock_.load(std::memory_order_relaxed) << ' ' << last_clock_
		     << ' ' << write_rate_ << ' ' << used_lo_ << ' ' << used_hi_ << '\n';
		for (uint32_t i = 0; i < kSlots; i++) {
			const Slot &s = slots_[i];
			const uint64_t tag = s.tag.load(std::memory_order_acquire);
			if (tag == 0 || tag == kRetired)
				continue;
			const KeyState &st = state_[i];
			body << "key " << tag << ' ' << s.handle.load(std::memory_order_relaxed)
			     << ' ' << s.written.load(std::memory_order_relaxed) << ' '
			     << s.died.load(std::memory_order_relaxed) << ' '
			     << s.died_age.load(std::memory_order_relaxed) << ' ' << st.seen_written
			     << ' ' << st.seen_died << ' ' << st.seen_age << ' ' << st.share << ' '
			     << st.age_num << ' ' << st.age_den << ' ' << st.lifetime << ' '
			     << st.group << '\n';
			body << "ages";
			for (unsigned b = 0; b < kAgeBuckets; b++)
				body << ' ' << st.seen_ages[b] << ' ' << st.ages[b];
			body << '\n';
			body << "split " << st.first_write << ' '
			     << (st.class_given_up ? 1 : 0) + (st.writer_given_up ? 2 : 0) << '\n';
			body << "written " << st.last_write << '\n';
			// Length-prefixed: a cgroup path may hold spaces.
			body << "name " << st.name.size() << ' ' << st.name << '\n';
		}
	}
	std::string text = body.str();
	text += "end " + std::to_string(kvfdp::fnv1a(text)) + "\n";
	return write_atomically(path, text);
}

namespace {

// Removes the temporary files earlier saves to path left (a crash between create and
// rename): path + kTempInfix + anything, in path's directory.
void remove_stale_temps(const std::string &path)
{
	const auto [dir, name] = split_path(path);
	const std::string prefix = name + kTempInfix;
	DIR *d = ::opendir(dir.c_str());
	if (!d)
		return;
	while (const dirent *e = ::readdir(d))
		if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
			::unlinkat(::dirfd(d), e->d_name, 0);
	::closedir(d);
}

// One key line of a state file.
struct SavedKey {
	uint64_t tag, written, died, seen_w, seen_d;
	unsigned handle, group;
	long double age, seen_a;  // integers since version 2 (a long double holds them exactly)
	double share, num, den, life;
	std::array<uint32_t, kAgeBuckets> seen_ages{};
	std::array<double, kAgeBuckets> ages{};
	uint64_t first_write = 0;  // version 3; older files: written since clock 0
	unsigned given_up = 0;     // version 3: 1 the class part; version 6: 2 the writer part
	std::optional<uint64_t> last_write;  // version 4; older files: the saved clock
	std::string name;                    // version 5; older files: none
};

struct SavedState {
	int version = 0;
	std::string device;  // version 4; "" older files
	uint64_t clock = 0, last_clock = 0, used_lo = 0, used_hi = 0;
	double rate = 0;
	std::vector<SavedKey> keys;
};

// The body of the state file at path (up to its end line), checked: "" and missing = true
// when there is none, else why it is not usable (or "" with body set).
std::string read_checked(const std::string &path, std::string &body, bool &missing)
{
	missing = false;
	const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		missing = errno == ENOENT;
		return missing ? "" : std::string("cannot open (") + std::strerror(errno) + ")";
	}
	struct stat st {};
	if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
		::close(fd);
		return "not a regular file under 64 MiB";
	}
	std::string text(static_cast<size_t>(st.st_size), '\0');
	size_t off = 0;
	while (off < text.size()) {
		const ssize_t n = ::read(fd, text.data() + off, text.size() - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += static_cast<size_t>(n);
	}
	::close(fd);
	text.resize(off);
	const size_t end = text.rfind("end ");
	if (end == std::string::npos || text.back() != '\n')
		return "truncated (no end line)";
	body = text.substr(0, end);
	if (std::to_string(kvfdp::fnv1a(body)) != text.substr(end + 4, text.size() - end - 5))
		return "checksum mismatch (corrupt or edited)";
	return "";
}

// Parses a checked body saved for nruh handles into out: "" or why it is not usable.
std::string parse_state(const std::string &body, unsigned nruh, SavedState &out)
{
	std::istringstream in(body);
	std::string magic;
	int &version = out.version;
	if (!(in >> magic >> version) || magic != kMagic)
		return "not a kvfdp learner state file";
	if (version < 1 || version > kVersion)
		return "version " + std::to_string(version) + ", this kvfdpd reads 1 to " +
		       std::to_string(kVersion);
	std::string word;
	if (version >= 4 && (!(in >> word >> out.device) || word != "device"))
		return "no device line";
	if (out.device == "-")
		out.device.clear();
	unsigned saved_nruh = 0;
	if (!(in >> word >> saved_nruh) || word != "nruh")
		return "no nruh line";
	if (saved_nruh != nruh)
		return "saved for " + std::to_string(saved_nruh) + " handles, the device has " +
		       std::to_string(nruh);
	if (!(in >> word >> out.clock >> out.last_clock >> out.rate >> out.used_lo >>
	      out.used_hi) ||
	    word != "clock")
		return "no clock line";
	while (in >> word) {
		SavedKey r{};
		if (word != "key" ||
		    !(in >> r.tag >> r.handle >> r.written >> r.died >> r.age >> r.seen_w >>
		      r.seen_d >> r.seen_a >> r.share >> r.num >> r.den >> r.life >> r.group))
			return "malformed key line";
		if (version >= 2) {
			if (!(in >> word) || word != "ages")
				return "malformed ages line";
			for (unsigned b = 0; b < kAgeBuckets; b++)
				if (!(in >> r.seen_ages[b] >> r.ages[b]) || !(r.ages[b] >= 0))
					return "malformed ages line";
		}
		if (version >= 3 && (!(in >> word >> r.first_write >> r.given_up) ||
				     word != "split" || r.given_up > (version >= 6 ? 3u : 1u)))
			return "malformed split line";
		if (version >= 4) {
			uint64_t w = 0;
			if (!(in >> word >> w) || word != "written")
				return "malformed written line";
			r.last_write = w;
		}
		if (version >= 5) {
			size_t n = 0;
			if (!(in >> word >> n) || word != "name" || n > Learner::kMaxNameBytes ||
			    (n && in.get() != ' '))
				return "malformed name line";
			r.name.resize(n);
			if (n && !in.read(r.name.data(), static_cast<std::streamsize>(n)))
				return "malformed name line";
		}
		if (r.tag == 0 || r.handle >= std::max(nruh, 1u) ||
		    out.keys.size() >= Learner::kMaxKeys)
			return "key out of range";
		out.keys.push_back(r);
	}
	return "";
}

}  // namespace

Result<void> Learner::load(const std::string &path)
{
	auto discard = [&](const std::string &why) -> Result<void> {
		return guidance_error(std::errc::invalid_argument,
				      "learned state " + path + ": " + why);
	};
	remove_stale_temps(path);
	std::string body;
	bool missing = false;
	if (std::string why = read_checked(path, body, missing); missing || !why.empty())
		return missing ? ok() : discard(why);
	SavedState saved;
	if (std::string why = parse_state(body, cfg_.nruh, saved); !why.empty())
		return discard(why);
	const int version = saved.version;
	const std::vector<SavedKey> &recs = saved.keys;
	std::lock_guard lock(mu_);
	// A file of another device is not this one's state. One without an identity (versions
	// 1 to 3) is taken by the device that loads it, and its next save binds it.
	if (!device_.empty() && !saved.device.empty() && saved.device != device_)
		return discard("saved for device " + saved.device + ", this is " + device_);
	for (uint32_t i = 0; i < kSlots; i++) {
		slots_[i].tag.store(0, std::memory_order_relaxed);
		state_[i] = KeyState{};
	}
	for (size_t i = 0; i < size_t{kSlots} * kAgeBuckets; i++)
		ages_[i].store(0, std::memory_order_relaxed);
	keys_.store(0, std::memory_order_relaxed);
	for (const SavedKey &r : recs) {
		uint32_t i = slot_hash(r.tag);
		uint32_t n = 0;
		while (slots_[i].tag.load(std::memory_order_relaxed) != 0 && n++ < kMaxProbe)
			i = (i + 1) & (kSlots - 1);
		if (n >= kMaxProbe)
			continue;
		Slot &s = slots_[i];
		s.handle.store(static_cast<uint16_t>(r.handle), std::memory_order_relaxed);
		s.written.store(r.written, std::memory_order_relaxed);
		s.died.store(r.died, std::memory_order_relaxed);
		// Version 1 kept bytes x age as a double; the counter is now in 512 x 512 units.
		const long double unit = version >= 2 ? 1.0L : kAgeUnit;
		s.died_age.store(static_cast<uint64_t>(r.age / unit), std::memory_order_relaxed);
		for (unsigned b = 0; b < kAgeBuckets; b++)
			ages_[size_t{i} * kAgeBuckets + b].store(r.seen_ages[b],
								 std::memory_order_relaxed);
		s.tag.store(r.tag, std::memory_order_release);
		KeyState &ks = state_[i];
		ks.seen_written = r.seen_w;
		ks.seen_died = r.seen_d;
		ks.seen_age = static_cast<uint64_t>(r.seen_a / unit);
		ks.seen_ages = r.seen_ages;
		ks.ages = r.ages;
		ks.share = r.share;
		ks.age_num = r.num;
		ks.age_den = r.den;
		ks.lifetime = r.life;
		ks.group = r.group;
		ks.first_write = r.first_write;
		ks.class_given_up = (r.given_up & 1) != 0;
		ks.writer_given_up = (r.given_up & 2) != 0;
		ks.last_write = r.last_write ? *r.last_write : saved.clock;
		ks.name = r.name;
		keys_.fetch_add(1, std::memory_order_relaxed);
	}
	clock_.store(saved.clock, std::memory_order_relaxed);
	last_clock_ = saved.last_clock;
	write_rate_ = saved.rate;
	used_lo_ = saved.used_lo;
	used_hi_ = saved.used_hi;
	return ok();
}

}  // namespace kvfdp::placement
