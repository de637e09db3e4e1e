// The placement learner's data path (a bounded table of per-key counters: place(), died()),
// its pins, writer names and what it reports. recompute() and its grouping are
// learner_group.cpp's, the state file learner_state.cpp's. docs/placement.md "The learner"
// explains the estimates and the grouping rule.
#include "placement/learner.hpp"
#include "placement/learner_internal.hpp"

#include <algorithm>

namespace kvfdp::placement {

using namespace learner_detail;

Learner::Learner(const LearnerConfig &cfg)
    : cfg_(cfg), slots_(new Slot[kSlots]), ages_(new AgeCount[size_t{kSlots} * kAgeBuckets]),
      age_shift_(age_shift_for(cfg.capacity_bytes)), state_(kSlots)
{
	young_group_.fill(-1);
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
	was_pinned_lo_ = was_pinned_hi_ = 0;
	for (const Pin &p : recomputed_pins_)
		mask_set(was_pinned_lo_, was_pinned_hi_, p.handle);
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
	return pin_in(pins_, k);
}

std::optional<uint16_t> Learner::pin_in(const std::vector<Pin> &pins, Key k)
{
	std::optional<uint16_t> by_writer, by_class;
	for (const Pin &p : pins) {
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
	each_key([&](const Slot &s, uint64_t tag, const KeyState &st) {
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
	});
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
}  // namespace kvfdp::placement
