// kvfdpd's learned placement: chunk table of write keys and clocks, the regroup thread,
// RUH Update of abandoned, remapped and idle handles, the soft state file, and the policy /
// metrics views.
#include "kvfdpd/daemon/learned.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "common/fnv.hpp"

#include "bpf/tagger.h"
#include "common/log.hpp"
#include "kvfdpd/daemon/writers.hpp"

namespace kvfdp::daemon {

namespace {

using nlohmann::json;

constexpr uint64_t kMaxChunks = uint64_t{1} << 22;
constexpr uint32_t kMinChunkBytes = 4096;

using placement::key_of;
using placement::key_word;

double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

// mkdir -p of path's directory (0755); errors show at save.
void make_parent(const std::string &path)
{
	for (size_t i = 1; i < path.size(); i++)
		if (path[i] == '/')
			::mkdir(path.substr(0, i).c_str(), 0755);
}

// s with every character but [A-Za-z0-9._+-] as '_'.
std::string file_safe(std::string s)
{
	for (char &c : s)
		if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
		    c != '-' && c != '+')
			c = '_';
	return s;
}

// A member's identity where its backend reports none: a block device's WWID from sysfs, a
// file's (a file or model backend's data) device and inode, else its path.
std::string fallback_identity(std::string path)
{
	if (path.rfind("model:", 0) == 0)
		path = path.substr(6);
	struct stat st {};
	if (::stat(path.c_str(), &st) == 0) {
		if (S_ISBLK(st.st_mode)) {
			std::ifstream f("/sys/dev/block/" + std::to_string(major(st.st_rdev)) +
					":" + std::to_string(minor(st.st_rdev)) + "/wwid");
			std::string wwid;
			if (std::getline(f, wwid) && !wwid.empty())
				return "wwid-" + file_safe(wwid);
		}
		if (S_ISREG(st.st_mode)) {
			char b[64];
			std::snprintf(b, sizeof(b), "file-%llx-%llu",
				      static_cast<unsigned long long>(st.st_dev),
				      static_cast<unsigned long long>(st.st_ino));
			return b;
		}
	}
	return "path-" + file_safe(path);
}

// Splits s at ','; "" gives one empty part.
std::vector<std::string> split_commas(const std::string &s)
{
	std::vector<std::string> out(1);
	for (char c : s)
		if (c == ',')
			out.emplace_back();
		else
			out.back() += c;
	return out;
}

}  // namespace

std::string device_identity(const nvme::DeviceInfo &info)
{
	const std::vector<std::string> paths = split_commas(info.path);
	const std::vector<std::string> ids = split_commas(info.identity);
	std::string out;
	for (size_t m = 0; m < paths.size(); m++) {
		const std::string id =
			m < ids.size() && !ids[m].empty() ? ids[m] : fallback_identity(paths[m]);
		out += (m ? "," : "") + id;
	}
	return out;
}

std::string state_file_for(const std::string &state_path, const std::string &identity)
{
	if (state_path.empty())
		return "";
	struct stat st {};
	const bool dir = state_path.back() == '/' ||
			 (::stat(state_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
	if (!dir)
		return state_path;
	std::string name = identity;
	for (char &c : name)
		if (c == ',')
			c = '+';
	name = file_safe(name);
	if (name.empty() || name.size() > 128) {
		char b[32];
		std::snprintf(b, sizeof(b), "%016llx",
			      static_cast<unsigned long long>(kvfdp::fnv1a(identity)));
		name = b;
	}
	return state_path + (state_path.back() == '/' ? "" : "/") + "learned-" + name + ".state";
}

namespace {

// LearnedPlacement::chunks_died's walk of a request over several chunks [slba, end): stamps
// each chunk with new_key and stamp and calls died(key word, LBAs, clock) once per run of
// chunks that hold one earlier write's data (same key word and clock). Every chunk joins a
// run (empty ones make runs of their own, which nothing dies in), so the first run holds the
// first chunk and the last run the last. Locals only: the atomic exchanges would otherwise
// make the compiler reload members for every chunk.
template <class Chunk, class Died>
[[gnu::noinline]] void die_in_runs(Chunk *chunks, uint64_t slba, uint64_t end, uint32_t shift,
				   uint64_t new_key, uint64_t stamp, Died died) noexcept
{
	const uint64_t first = slba >> shift, last = (end - 1) >> shift;
	// The loop walks a pointer, and a run's length is the distance from its first chunk:
	// one add and one compare per chunk besides the two exchanges and the run test.
	Chunk *const begin = chunks + first, *const stop = chunks + last + 1;
	Chunk *run = begin;  // the current run's first chunk
	uint64_t run_key = 0, run_then = 0;
	auto flush = [&](Chunk *run_end) {
		if (run_key == 0)
			return;
		// Whole chunks, less the parts of the first and last chunk outside [slba, end).
		uint64_t lbas = static_cast<uint64_t>(run_end - run) << shift;
		if (run == begin)
			lbas -= slba - (first << shift);
		if (run_end == stop)
			lbas -= ((last + 1) << shift) - end;
		died(run_key, lbas, run_then);
	};
	for (Chunk *c = begin; c != stop; c++) {
		const uint64_t old = c->key.exchange(new_key, std::memory_order_relaxed);
		const uint64_t then = c->clock.exchange(stamp, std::memory_order_relaxed);
		if (old == run_key && then == run_then)
			continue;
		if (c != begin)
			flush(c);
		run = c;
		run_key = old;
		run_then = then;
	}
	flush(stop);
}

}  // namespace

LearnedPlacement::LearnedPlacement(nvme::Device &dev, uint16_t nruh, const LearnedOptions &o)
    : dev_(dev), nruh_(nruh), opts_(o), learner_([&] {
	      placement::LearnerConfig c;
	      c.nruh = nruh;
	      c.capacity_bytes = dev.info().nlb * dev.info().lba_size;
	      c.ru_bytes = dev.info().ru_size;
	      return c;
      }()),
      lba_size_(dev.info().lba_size)
{
	const uint64_t bytes = dev.info().nlb * lba_size_;
	uint64_t chunk = std::max<uint64_t>(kMinChunkBytes, lba_size_);
	while (bytes / chunk > kMaxChunks)
		chunk <<= 1;
	chunk_shift_ = static_cast<uint32_t>(std::countr_zero(chunk / lba_size_));
	nchunks_ = (dev.info().nlb + (uint64_t{1} << chunk_shift_) - 1) >> chunk_shift_;
	chunks_.reset(new Chunk[nchunks_]);
}

std::unique_ptr<LearnedPlacement> LearnedPlacement::create(nvme::Device &dev, uint16_t nruh,
							   const LearnedOptions &o)
{
	const std::string identity = device_identity(dev.info());
	LearnedOptions resolved = o;
	resolved.state_path = state_file_for(o.state_path, identity);
	std::unique_ptr<LearnedPlacement> lp(new LearnedPlacement(dev, nruh, resolved));
	lp->learner_.set_device_identity(identity);
	if (const std::string &path = resolved.state_path; !path.empty()) {
		if (auto r = lp->learner_.load(path); !r) {
			// Kept for a look, not loaded again: the last one rejected replaces the one
			// before, so at most one lies beside the state file.
			const std::string aside = path + ".rejected";
			if (::rename(path.c_str(), aside.c_str()) == 0)
				log::warn("%s; set aside as %s, learning restarts from one group",
					  r.error().message().c_str(), aside.c_str());
			else
				log::warn(
					"%s; learning restarts from one group (setting it aside as "
					"%s failed: %s)",
					r.error().message().c_str(), aside.c_str(),
					std::strerror(errno));
		} else {
			// Until the first regroup, the groups are the handles the restored keys use.
			std::vector<uint16_t> hs;
			const auto keys = lp->learner_.groups();
			for (const placement::KeyInfo &k : keys)
				if (!k.pinned &&
				    std::find(hs.begin(), hs.end(), k.handle) == hs.end())
					hs.push_back(k.handle);
			lp->groups_ = static_cast<uint32_t>(hs.size());
			log::info("learned placement: state from %s, %zu key(s) in %zu group(s)",
				  path.c_str(), keys.size(), hs.size());
		}
	}
	return lp;
}

LearnedPlacement::~LearnedPlacement()
{
	stop();
}

// Each chunk's old data dies with its own key and age, but one learner_.died() goes for a run
// of chunks that one earlier write left (same key, same clock): a 128 KiB overwrite of a
// 128 KiB write is one call instead of 32 (each a key lookup and a floating-point CAS), with
// the same bytes and age. A request within one chunk (4 KiB requests; on namespaces over
// 16 GiB, most requests) takes the short path here; the run walk is out of line so that this
// path does not pay for its registers.
void LearnedPlacement::chunks_died(uint64_t slba, uint32_t nlb, uint64_t new_key) noexcept
{
	const uint32_t shift = chunk_shift_;
	const uint64_t end = std::min<uint64_t>(slba + nlb, nchunks_ << shift);
	if (slba >= end)
		return;
	const uint64_t now = learner_.clock();
	const uint64_t stamp = new_key ? now : 0;
	const uint64_t first = slba >> shift;
	auto died = [this, now](uint64_t old, uint64_t lbas, uint64_t then) {
		learner_.died(key_of(old), lbas * lba_size_, now > then ? now - then : 0);
	};
	if (first != (end - 1) >> shift) {
		die_in_runs(chunks_.get(), slba, end, shift, new_key, stamp, died);
		return;
	}
	Chunk &ch = chunks_[first];
	const uint64_t old = ch.key.exchange(new_key, std::memory_order_relaxed);
	const uint64_t then = ch.clock.exchange(stamp, std::memory_order_relaxed);
	if (old != 0)
		died(old, end - slba, then);
}

uint16_t LearnedPlacement::place(uint32_t writer, uint8_t cls, uint64_t slba, uint32_t nlb) noexcept
{
	const uint16_t h = learner_.place(placement::Key{writer, cls}, uint64_t{nlb} * lba_size_);
	chunks_died(slba, nlb, key_word({writer, cls}));
	return h < nruh_ ? h : 0;
}

void LearnedPlacement::discard(uint64_t slba, uint32_t nlb) noexcept
{
	chunks_died(slba, nlb, 0);
}

void LearnedPlacement::set_policy(const placement::Policy &p)
{
	std::vector<placement::Pin> pins;
	for (unsigned c = 0; c < placement::kNumClasses; c++)
		if (p.config.handle[c])
			pins.push_back(placement::Pin{std::nullopt, static_cast<uint8_t>(c),
						      *p.config.handle[c]});
	for (size_t i = 0; i < p.config.writers.size(); i++)
		if (auto h = placement::fixed_handle(p.config.writers[i], p))
			pins.push_back(
				placement::Pin{uint64_t{named_writer_id(i)}, std::nullopt, *h});
	learner_.set_pins(pins);
	for (size_t i = 0; i < p.config.writers.size(); i++) {
		const placement::WriterRule &w = p.config.writers[i];
		learner_.set_writer_name(named_writer_id(i), !w.name.empty()     ? w.name
							     : !w.cgroup.empty() ? w.cgroup
										 : w.dir);
	}
	// Until the regroup, a handle the pins handed over takes both owners' writes in one RU.
	{
		std::lock_guard g(mu_);
		if (!thread_.joinable())
			return;
		regroup_ = true;
	}
	cv_.notify_all();
}

placement::RecomputeResult LearnedPlacement::recompute_now()
{
	std::lock_guard g(mu_);
	placement::RecomputeResult r = learner_.recompute(now_s());
	recomputes_.fetch_add(1, std::memory_order_relaxed);
	generation_ = r.generation;
	groups_ = r.groups;
	if (opts_.name_of)
		learner_.name_keys([this](uint64_t w) {
			return w <= UINT32_MAX ? opts_.name_of(static_cast<uint32_t>(w))
					       : std::string();
		});
	// Abandoned handles hold an open RU nothing writes to; remapped ones hold an open RU of
	// the old group's data that the new group would fill; idle ones an open RU their paused
	// group left part written. The map is already published, so
	// a queue may put a few of the new group's writes in that RU before the update lands.
	const std::vector<uint16_t> close = r.to_close();
	if (!close.empty()) {
		auto u = dev_.ruh_update(close);
		if (u) {
			ruh_updates_.fetch_add(close.size(), std::memory_order_relaxed);
		} else {
			// The handles stay open: harmless but for their RU's spare space (and, when
			// remapped, two groups' data in one RU).
			ruh_refused_.fetch_add(close.size(), std::memory_order_relaxed);
			const std::string e = u.error().message();
			if (e != last_error_)
				log::warn("learned placement: %s", e.c_str());
			last_error_ = e;
		}
	}
	save_locked();
	return r;
}

void LearnedPlacement::save_locked()
{
	if (opts_.state_path.empty())
		return;
	make_parent(opts_.state_path);
	if (auto r = learner_.save(opts_.state_path); !r) {
		const std::string e = r.error().message();
		if (e != last_error_)
			log::warn("learned placement: saving %s: %s", opts_.state_path.c_str(),
				  e.c_str());
		last_error_ = e;
	}
}

void LearnedPlacement::start()
{
	if (thread_.joinable())
		return;
	thread_ = std::thread([this] {
		std::unique_lock lk(mu_);
		while (!stop_) {
			cv_.wait_for(lk, std::chrono::duration<double>(opts_.period_s),
				     [this] { return stop_ || regroup_; });
			if (stop_)
				break;
			regroup_ = false;
			lk.unlock();
			(void)recompute_now();
			lk.lock();
		}
	});
}

void LearnedPlacement::stop()
{
	{
		std::lock_guard g(mu_);
		if (!thread_.joinable())
			return;
		stop_ = true;
	}
	cv_.notify_all();
	thread_.join();
	(void)recompute_now();  // the last counts into the saved state
}

proto::LearnedPolicy LearnedPlacement::policy(WriterNames &names) const
{
	proto::LearnedPolicy l;
	for (const placement::KeyInfo &k : learner_.groups()) {
		const uint32_t w = static_cast<uint32_t>(k.key.writer);
		proto::LearnedKey key;
		key.writer_id = w;
		if (std::string name = k.writer_name.empty() ? names.name_of(w) : k.writer_name;
		    !name.empty())
			key.writer = std::move(name);
		key.cls = placement::class_name(k.key.cls < placement::kNumClasses ? k.key.cls : 0);
		key.group = k.group;
		key.handle = k.handle;
		key.pinned = k.pinned;
		key.lifetime_bytes = k.lifetime_bytes;
		key.lifetime_s = k.lifetime_s;
		key.write_share = k.write_share;
		key.live_bytes = k.live_bytes;
		key.written_bytes = k.written_bytes;
		key.died_bytes = k.died_bytes;
		l.keys.push_back(std::move(key));
		if (std::find(l.handles_used.begin(), l.handles_used.end(), k.handle) ==
		    l.handles_used.end())
			l.handles_used.push_back(k.handle);
	}
	std::sort(l.handles_used.begin(), l.handles_used.end());
	l.groups = groups_;
	l.grouping = learner_.churn_grouping() ? proto::kGroupingByClass : proto::kGroupingMeasured;
	l.generation = generation_;
	l.clock_bytes = learner_.clock();
	l.recomputes = recomputes_.load(std::memory_order_relaxed);
	l.ruh_updates = ruh_updates();
	l.ruh_update_refused = ruh_update_refused();
	l.overflow_bytes = learner_.overflow_bytes();
	l.key_count = learner_.key_count();
	l.max_keys = placement::Learner::kMaxKeys;
	l.retired_keys = learner_.retired_keys();
	l.state_path = opts_.state_path;
	return l;
}

json LearnedPlacement::policy_json(WriterNames &names) const
{
	return policy(names);
}

}  // namespace kvfdp::daemon
