// The placement learner: measures how long each key's data lives on the device write clock,
// and how its deaths spread over ages, and groups keys whose lifetimes differ enough, or that
// die in clearly different orders, onto different handles (Grouping::order). Starts as `none`
// (one group on one handle) and splits a group only where lifetimes differ by a ratio, or
// where an in-order key shares it with an out-of-order one and the greedy-GC projection
// (placement/mixing_cost.hpp) says the split pays; within a group, writers that give all
// their data one hint class are split by class until measurement shows the parts die alike
// (placement/class_split.hpp). Two experimental groupings sit beside it:
// the projection choosing among whole fixed policies (Grouping::cost), and a fixed policy's
// grouping chosen by measurement (Choice, placement/selector.hpp).
// docs/placement.md "The learner" describes the estimates, the grouping and the state file.
//
// A key is (writer, hint class): who created the file (a cgroup, a [[writer]] of the config,
// or the simulator's writer column) and the F_SET_RW_HINT class it set.
//
// Threads:
// - The data path (any number of queue threads) calls place() for every write and died()
//   for data it sees die (a discard, an overwrite). Both are lock-free and allocate nothing:
//   they probe a fixed-size open-addressing table of kMaxKeys slots with relaxed atomics and
//   bump per-key counters. A key seen for the first time claims a free slot with one CAS;
//   when the table is full its writes go to the overflow counters and the base handle.
// - Everything else (recompute, pins, names, groups, save, load) runs off the data path,
//   serialised by an internal mutex; call it from the control / learner thread, never from
//   a queue thread. recompute() writes each slot's handle with one relaxed store, so a
//   reader sees either the old or the new handle of a key, never a torn value.
// - died() may also be called from the tagger's event thread (unlink of a file).
//
// The caller owns the device-side consequences: recompute() returns the handles nothing is
// placed on any more (abandoned) and those handed from one group to another (remapped); the
// caller issues NVMe RUH Update on both (so open reclaim units neither hold spare space nor
// mix two groups' data) and counts a refusal (the handle then stays open, harmlessly).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "placement/classes.hpp"
#include "placement/handle_map.hpp"
#include "placement/mixing_cost.hpp"

namespace kvfdp::placement {

struct ClassKey;  // class_split.hpp

// Who writes, and with which hint. writer is opaque to the learner (0 is a valid writer:
// "unknown"); cls is a class 0..5 (a larger value is treated as NOT_SET).
struct Key {
	uint64_t writer = 0;
	uint8_t cls = KVFDP_CLASS_NOT_SET;
	friend bool operator==(const Key &, const Key &) = default;
};

// The one encoding of a key in a word, never 0 (0 = no key): (writer << 3 | cls) + 1, a
// writer above 2^60 folded into 60 bits, a class above 5 as NOT_SET. The learner's table
// and kvfdpd's chunk table (kvfdpd/daemon/learned.cpp) both hold it.
[[nodiscard]] inline uint64_t key_word(Key k) noexcept
{
	constexpr uint64_t kWriterMask = (uint64_t{1} << 60) - 1;
	const uint64_t w =
		k.writer <= kWriterMask ? k.writer : (k.writer ^ (k.writer >> 60)) & kWriterMask;
	const uint64_t c = k.cls < kNumClasses ? k.cls : uint8_t{KVFDP_CLASS_NOT_SET};
	return ((w << 3) | c) + 1;
}
[[nodiscard]] inline Key key_of(uint64_t word) noexcept
{
	return Key{(word - 1) >> 3, static_cast<uint8_t>((word - 1) & 7)};
}

// How recompute() groups keys (docs/placement.md "Grouping"): by the ratio of their mean
// lifetimes alone; by that ratio, then cutting groups whose keys die in clearly different
// orders (the default: two keys of equal mean lifetime, one dying in write order and one not,
// are expensive to mix); or by the greedy-GC projection choosing among whole fixed policies
// (experimental: it loses elsewhere, docs/placement.md).
enum class Grouping : uint8_t { lifetime, order, cost };

// Which grouping recompute() applies (set_choice()): the learner's own (Grouping), or a fixed
// policy's over the keys it holds: one group per hint class, or per writer (writers beyond
// the handles share the last group, by writer id). A selector that measures the candidates
// (model/sim/placer.hpp: shadow copies of the model, one per choice) sets it.
enum class Choice : uint8_t { learned, classes, writers };
[[nodiscard]] const char *choice_name(Choice c);

struct LearnerConfig {
	// The device's handles (indexes 0..nruh-1, at most kMaxHandles); nruh <= 1 places
	// everything on handle 0.
	uint16_t nruh = 8;
	// Logical capacity and reclaim unit size of the device, in bytes. The capacity sets the
	// time scale of the decay below and of the death-age buckets; both shape the projection
	// of what mixing costs (each group holds a reclaim unit open).
	uint64_t capacity_bytes = 0;
	uint64_t ru_bytes = 0;
	// The device's over-provisioning (physical = (1 + op) x logical). Drives do not report
	// it; 0.07 is what data-centre drives ship with.
	double op = 0.07;
	Grouping grouping = Grouping::order;
	// The lifetime grouping: two groups' lifetime estimates must differ by at least
	// split_ratio to be split onto different handles; keys already apart stay apart down to
	// merge_ratio (hysteresis).
	double split_ratio = 2.0;
	double merge_ratio = 1.5;
	// Grouping::cost: a fixed policy's grouping (by writer, by class) replaces the lifetime
	// grouping where the projection says it saves more than switch_margin of WAF; within
	// keep_margin fewer groups, and then the grouping on the handles now, win.
	double switch_margin = 0.05;
	double keep_margin = 0.01;
	// Grouping::order: a group is cut only between keys whose death orders (the share of a
	// key's deaths in its two heaviest adjacent age buckets) differ by this much; keys
	// already apart stay apart down to half of it (mixing_cost.hpp, split_by_order).
	double order_gap = 0.5;
	// Grouping::order: within each group, the keys of writers that give all their data one
	// hint class start split by class, as a per-hint policy splits them, while the groups'
	// open reclaim units take at most this share of the over-provisioned space
	// (op x capacity_bytes / ru_bytes units); a class part is given up for good once it and
	// its group's main class have their evidence and die alike (death orders within
	// alike_order, lifetimes within alike_ratio). 0 turns it off. Data written mixed is
	// expensive to part later; a split given up costs only its open unit (class_split.hpp,
	// docs/placement.md "The class split").
	double class_split_room = 0.5;
	// Die alike, for giving a class or writer part up: death orders within alike_order and
	// lifetimes within a factor alike_ratio. Nearly the same, not the lifetime rule's
	// merge_ratio: a part kept apart costs one open unit, one given up wrongly mixes.
	double alike_order = 0.0625;
	double alike_ratio = 1.1;
	// Grouping::order, with the class split: then the same by writer, within each group,
	// for writers that give all their data one class (class_split.hpp). Off: only by class.
	bool writer_split = true;
	// While more than this share of the writes, averaged over about the last five recomputes,
	// comes from young writers (nothing measured of them: learner_young.cpp), the keys are
	// grouped by class, as `hint` places them: writers replaced faster than they are measured
	// (restarted without a stable identity) leave the learner only the class. 0 turns it off
	// (docs/placement.md "Writers replaced faster than they are measured").
	double churn_by_class = 0.7;
	// A group gets its own handle only if it takes at least this share of the device's
	// writes: every open handle keeps a reclaim unit open, spare space taken from garbage
	// collection, which a group that writes little does not pay back.
	double min_group_share = 0.02;
	// Keys below this share of the writes do not shape the groups: each joins the group
	// whose lifetime is nearest its own.
	double min_key_share = 0.002;
	// Write shares are exponentially decayed with an e-folding of this many device
	// capacities of writes (0.5: the last half capacity written counts most).
	double decay_capacity = 0.5;
	// Retirement (docs/placement.md "Retirement"): a key that has written nothing for
	// retire_idle capacities of device writes leaves the table if it holds less than
	// Learner::kRetireLive of the capacity live, and after retire_any capacities whatever
	// it holds; its slot is free for a new key.
	double retire_idle = 2.0;
	double retire_any = 16.0;
	// Under pressure (more than retire_pressure_fill of kMaxKeys in the table), a key idle
	// for retire_pressure_idle capacities that holds less than kRetireLive live retires
	// too: where thousands of short jobs come and go within a capacity of writes, dead
	// writers leave before the table fills.
	double retire_pressure_fill = 0.75;
	double retire_pressure_idle = 1.0 / 16;
	// A group that wrote nothing while it would have written this many reclaim units at its
	// earlier rate has its handle's open unit closed (RecomputeResult::idle); 0 never.
	uint64_t idle_close_rus = 16;
	// Handles the learner may use (bit i = handle i), 0 = all of 0..nruh-1. Handles fixed
	// by pins are taken out of it automatically.
	uint64_t handle_mask_lo = 0;
	uint64_t handle_mask_hi = 0;
};

// A fixed placement from the config; it always wins over what the learner measures.
// A pin with writer set matches that writer's keys (every class unless cls is set too); a
// pin with only cls set matches that class for every writer. The most specific pin wins
// (writer+class, then writer, then class).
struct Pin {
	std::optional<uint64_t> writer;
	std::optional<uint8_t> cls;
	uint16_t handle = 0;
};

// One key as `kvfdp policy` shows it (groups(), in handle then lifetime order).
struct KeyInfo {
	Key key;
	std::string writer_name;  // set_writer_name(), else "" (the caller shows the id)
	uint16_t handle = 0;      // the handle the data path uses now
	uint32_t group = 0;       // group index of the last recompute (keys on one handle share it)
	bool pinned = false;      // placed by a Pin, not by the learner
	double lifetime_bytes = 0;  // estimated lifetime on the device write clock (bytes written)
	double lifetime_s = 0;    // the same in seconds at the recent device write rate (0 unknown)
	double write_share = 0;   // decayed share of the device's writes, 0..1
	uint64_t live_bytes = 0;  // written and not yet died
	uint64_t written_bytes = 0;  // total written
	uint64_t died_bytes = 0;     // total died (unlink, discard, overwrite)
};

// What one recompute() did.
struct RecomputeResult {
	// Handles that held groups before and hold none now: issue RUH Update on each. A handle
	// a pin held and no pin names since set_pins() counts as having held a group: it is here
	// unless a group keeps it (the group of the keys that were pinned there).
	std::vector<uint16_t> abandoned;
	// Handles that held a group before and were handed to another group now, because no
	// handle free of data was left: issue RUH Update on these too, or the new group fills
	// the reclaim unit the old group left open. Also a handle that set_pins() handed over:
	// pinned now but a learned group's at the last recompute, or pinned now only by pins
	// none of which named it at the last recompute. Not in abandoned.
	std::vector<uint16_t> remapped;
	// Handles whose group paused (LearnerConfig::idle_close_rus), reported once per pause:
	// issue RUH Update, so the unit it left open, part written, is GC's to reclaim instead of
	// held out of use. Not in abandoned or remapped.
	std::vector<uint16_t> idle;
	// Keys whose handle changed.
	uint32_t moved_keys = 0;
	// Groups after this recompute (pinned keys not counted).
	uint32_t groups = 0;
	// Incremented on every recompute that changed any key's handle.
	uint64_t generation = 0;

	// The handles to close with RUH Update: abandoned, remapped, then idle.
	[[nodiscard]] std::vector<uint16_t> to_close() const;
};

class Learner {
public:
	// Most distinct keys the table holds at once; later keys share the overflow (base
	// handle) until keys retire.
	static constexpr uint32_t kMaxKeys = 4096;
	// Live bytes, as a share of the capacity, below which an idle key retires: live bytes
	// add up to the capacity, so at most 1024 idle keys (a quarter of the table) hold more.
	static constexpr double kRetireLive = 1.0 / 1024;

	explicit Learner(const LearnerConfig &cfg);
	~Learner();
	Learner(const Learner &) = delete;
	Learner &operator=(const Learner &) = delete;

	// ---- data path: lock-free, no allocation ----

	// Counts bytes written under key k (advancing the device write clock) and returns the
	// handle to write them through.
	[[nodiscard]] uint16_t place(Key k, uint64_t bytes) noexcept;
	// The handle of key k without counting anything.
	[[nodiscard]] uint16_t handle_of(Key k) const noexcept;
	// bytes of key k died (unlinked, discarded, overwritten) age bytes of device writes
	// after they were written (age = clock() at death - clock() at write).
	void died(Key k, uint64_t bytes, uint64_t age) noexcept;
	// The device write clock: bytes passed to place() since construction (or since the
	// state a load() restored).
	[[nodiscard]] uint64_t clock() const noexcept
	{
		return clock_.load(std::memory_order_relaxed);
	}

	// ---- off the data path (serialised internally) ----

	// The bytes the device holds valid (its namespace utilisation), for the projection of
	// what mixing costs. Until it is set, every logical byte the learner has not seen
	// written counts as valid (data from before the learner started, never discarded).
	void set_device_valid(uint64_t bytes);
	// The grouping the next recompute() applies (Choice::learned until set).
	void set_choice(Choice c);
	[[nodiscard]] Choice choice() const;
	// The last recompute grouped by class because writers are replaced faster than they are
	// measured (LearnerConfig::churn_by_class).
	[[nodiscard]] bool churn_grouping() const;
	// The WAF the last recompute projected for the grouping it chose (Grouping::cost; 1
	// before any).
	[[nodiscard]] double projected_waf() const;

	// Replaces the pins (config reload). Takes effect on the data path at once for keys
	// not yet seen and at the next recompute() for the others; that recompute reports the
	// handles whose owner the new pins changed (RecomputeResult). Before anything is written
	// (clock() == 0) nothing is handed over and nothing is reported.
	void set_pins(std::span<const Pin> pins);
	// A display name for writer (e.g. its [[writer]] name or cgroup path).
	void set_writer_name(uint64_t writer, std::string name);
	// Names each key that has no name yet with name_of(its writer) ("" = not known yet; at
	// most kMaxNameBytes kept). A key keeps its name, in the state file too, until it
	// retires; set_writer_name() names win.
	void name_keys(const std::function<std::string(uint64_t writer)> &name_of);
	static constexpr size_t kMaxNameBytes = 4096;
	// Folds the counters since the last call into each key's estimates, regroups, assigns
	// handles (a key keeps its handle while its group keeps it; a new group takes a free
	// handle) and publishes the map. now_s is any monotonic time in seconds (for
	// lifetime_s); call it every few seconds, or every few RUs of writes in a simulation.
	RecomputeResult recompute(double now_s);
	// Every key the table holds, with its estimates and handle.
	[[nodiscard]] std::vector<KeyInfo> groups() const;
	// Writes that found the table full (placed on the base handle).
	[[nodiscard]] uint64_t overflow_bytes() const noexcept
	{
		return overflow_.load(std::memory_order_relaxed);
	}
	// Keys the table holds now.
	[[nodiscard]] uint32_t key_count() const noexcept
	{
		return keys_.load(std::memory_order_relaxed);
	}
	// Keys retired since construction (idle, see LearnerConfig::retire_idle).
	[[nodiscard]] uint64_t retired_keys() const noexcept
	{
		return retired_.load(std::memory_order_relaxed);
	}

	// Soft state: the per-key estimates and handles, so a restarted kvfdpd resumes where it
	// was. save() writes path atomically: a new temporary file beside it (a unique name,
	// O_EXCL | O_NOFOLLOW, mode 0600), fsync'ed, renamed over path, and the directory
	// fsync'ed. load() restores a file save() wrote for the same nruh and device; a missing
	// file is ok (nothing restored), a corrupt, truncated or foreign file (wrong magic,
	// version, nruh or device) is not loaded: the error says why in one line, learning
	// restarts from `none`, and the learner is usable either way (the caller sets the file
	// aside). load() also removes temporary files a crashed save() left. Call load() before
	// the data path starts.
	[[nodiscard]] Result<void> save(const std::string &path) const;
	[[nodiscard]] Result<void> load(const std::string &path);
	// The device the state belongs to (kvfdpd: the namespace's identity, a stripe's members'
	// joined). save() records it; load() refuses a file saved for another identity, and
	// takes one saved without (versions 1 to 3, or no identity set). Whitespace becomes '_'.
	void set_device_identity(std::string id);

	[[nodiscard]] const LearnerConfig &config() const { return cfg_; }

private:
	struct Slot {
		std::atomic<uint64_t> tag{0};  // 0 empty; else key word (see key_word())
		std::atomic<uint16_t> handle{0};
		std::atomic<uint64_t> written{0};
		std::atomic<uint64_t> died{0};
		// Sum of (bytes / 512) x (age / 512) of what died; wraps, read as differences.
		std::atomic<uint64_t> died_age{0};
	};
	// Bytes / 512 died per death-age bucket (mixing_cost.hpp), kAgeBuckets per slot, apart
	// from the slots so a probe's stride stays small; wraps, read as differences.
	using AgeCount = std::atomic<uint32_t>;
	struct KeyState;  // off-path estimates per slot (learner_internal.hpp)
	struct Cand;      // an unpinned key as recompute() groups it
	struct Claim;     // a group's claim on a handle (assign_handles())

	[[nodiscard]] const Slot *find(Key k) const noexcept;
	[[nodiscard, gnu::always_inline]] inline const Slot *
	find_word(uint64_t word) const noexcept;
	Slot *find_or_claim(Key k) noexcept;
	[[gnu::noinline]] Slot *claim(Key k, uint64_t word) noexcept;
	[[nodiscard]] uint16_t initial_handle(Key k) const noexcept;
	// Off path, under mu_:
	[[nodiscard]] bool usable(unsigned h) const;  // the learner may place on h
	[[nodiscard]] uint16_t base_handle() const;   // lowest usable handle
	[[nodiscard]] std::optional<uint16_t> pin_for(Key k) const;
	// The same against a given list of pins (recomputed_pins_: those of the last recompute).
	[[nodiscard]] static std::optional<uint16_t> pin_in(const std::vector<Pin> &pins, Key k);
	void publish_class_defaults(const std::array<uint16_t, kNumClasses> &base);
	// A key's death order has settled (learner_group.cpp), for the class and writer splits; enough
	// of it is known to cut on, for the order split.
	[[nodiscard]] static bool evidenced(const KeyState &st, double life, uint64_t now);
	[[nodiscard]] static bool order_known(const KeyState &st);
	// The device's capacity in bytes, the time scale of the decay (1 GiB where none is set).
	[[nodiscard]] double capacity() const;
	// A writing key's share of the device's writes now, its decayed share's warm-up divided out.
	[[nodiscard]] double rate_share(const KeyState &st, uint64_t now) const;
	// The steps of recompute(), in order (learner_group.cpp says what each does).
	void merge_duplicates();
	std::vector<Cand> fold(uint64_t delta, RecomputeResult &out);
	[[nodiscard]] bool retires(const KeyState &st, uint64_t live, uint64_t clock,
				   bool pressure) const;
	void clear_slot(uint32_t i);
	void retire(uint32_t i);
	void clear_tombstones();
	[[nodiscard]] bool needs_curves(std::span<const CostKey> keys) const;
	// Calls f(slot, tag, state) for every slot that holds a key (learner_internal.hpp).
	template <class F> void each_key(F &&f) const;
	std::vector<std::vector<uint32_t>> group(const std::vector<Cand> &cands, size_t max_groups);
	void split_classes(std::vector<std::vector<uint32_t>> &groups,
			   const std::vector<Cand> &cands, size_t max_groups);
	void mark_relabels(std::vector<ClassKey> &keys, const std::vector<Cand> &cands);
	void join_minor(std::vector<std::vector<uint32_t>> &groups,
			const std::vector<uint32_t> &minor, const std::vector<Cand> &cands) const;
	void split_young(std::vector<std::vector<uint32_t>> &groups, const std::vector<Cand> &cands,
			 const std::vector<uint8_t> &is_young, size_t max_groups);
	[[nodiscard]] std::vector<uint8_t> young_keys(const std::vector<Cand> &cands) const;
	void merge_gone(std::vector<std::vector<uint32_t>> &groups,
			const std::vector<Cand> &cands) const;
	[[nodiscard]] size_t split_budget() const;
	std::vector<std::vector<uint32_t>> group_fixed(const std::vector<Cand> &cands,
						       size_t max_groups, Choice by) const;
	[[nodiscard]] bool churning(const std::vector<Cand> &cands,
				    const std::vector<uint8_t> &young);
	// The handles whose owner set_pins() changed since the last recompute.
	void pins_handed_over(RecomputeResult &out);
	[[nodiscard]] std::vector<Claim>
	handle_claims(const std::vector<std::vector<uint32_t>> &groups,
		      const std::vector<Cand> &cands) const;
	std::vector<uint16_t> assign_handles(const std::vector<std::vector<uint32_t>> &groups,
					     const std::vector<Cand> &cands,
					     const std::vector<uint16_t> &avail,
					     RecomputeResult &out);
	void publish(const std::vector<std::vector<uint32_t>> &groups,
		     const std::vector<Cand> &cands, const std::vector<uint16_t> &group_handle,
		     RecomputeResult &out);
	void close_idle(const std::vector<std::vector<uint32_t>> &groups,
			const std::vector<Cand> &cands, const std::vector<uint16_t> &group_handle,
			RecomputeResult &out);

	LearnerConfig cfg_;
	std::unique_ptr<Slot[]> slots_;     // 2 * kMaxKeys
	std::unique_ptr<AgeCount[]> ages_;  // 2 * kMaxKeys * kAgeBuckets
	unsigned age_shift_ = 0;
	std::atomic<uint64_t> clock_{0};
	std::atomic<uint64_t> overflow_{0};
	std::atomic<uint32_t> keys_{0};
	std::atomic<uint64_t> retired_{0};
	// Initial handles for keys not yet seen, read by the data path: per class (class pins,
	// else the handle of the group that takes most writes) and a small fixed table of
	// writer pins.
	std::array<std::atomic<uint16_t>, kNumClasses> class_handle_{};
	static constexpr uint32_t kMaxWriterPins = 64;
	std::array<std::atomic<uint64_t>, kMaxWriterPins> pin_writer_{};  // writer id + 1, 0 = end
	std::array<std::atomic<uint32_t>, kMaxWriterPins>
		pin_value_{};  // class mask << 16 | handle

	mutable std::mutex mu_;        // everything below
	std::vector<KeyState> state_;  // per slot, off path
	std::vector<Pin> pins_;
	std::vector<Pin> recomputed_pins_;  // pins_ at the last recompute
	std::vector<std::pair<uint64_t, std::string>> names_;
	uint64_t last_clock_ = 0;
	uint64_t last_delta_ = 0;  // device bytes written between the last two recomputes
	// The clocks of the two recomputes before the last: [0] the one before it, [1] the one
	// before that (the young-writer split, learner_young.cpp).
	std::array<uint64_t, 2> earlier_clock_{};
	double last_now_ = -1;
	double write_rate_ = 0;  // device bytes per second, smoothed
	uint64_t generation_ = 0;
	uint64_t pinned_lo_ = 0, pinned_hi_ = 0;          // handles named by pins
	uint64_t was_pinned_lo_ = 0, was_pinned_hi_ = 0;  // those the last recompute's pins named
	uint64_t used_lo_ = 0, used_hi_ = 0;              // handles the learner's groups hold
	uint64_t idle_lo_ = 0, idle_hi_ = 0;  // handles closed as idle, not written since
	std::array<double, kMaxHandles>
		writing_share_{};  // per handle: its group's last writing share

	uint64_t device_valid_ = 0;  // set_device_valid(), 0 unknown
	bool device_valid_known_ = false;
	Choice choice_ = Choice::learned;
	double projected_waf_ = 1.0;
	// Per class, the index of the young-writer group of the last recompute (-1 none): where a
	// new key of the class starts (learner_young.cpp).
	std::array<int, kNumClasses> young_group_{};
	// The young writers' share of the writes, averaged over recomputes (churning()), and
	// whether the last recompute grouped by class for it.
	double young_write_share_ = 0;
	bool churn_grouping_ = false;
	std::string device_;  // set_device_identity()
};

}  // namespace kvfdp::placement
