// LearnedPlacement: kvfdpd's side of the placement learner (placement/learner.hpp) under
// --placement learned. The queues ask it for each write's handle by (writer, class) and tell
// it what died; a thread of its own regroups every period, issues RUH Update on the handles
// the learner stops using or hands to another group, and saves the learner's soft state so
// a restart resumes.
//
// Deaths come from what the device sees: a discard (or write zeroes) of data, and an
// overwrite of it. A fixed table of chunks (at most 4 Mi entries; 4 KiB each up to 16 GiB)
// remembers the key and device write clock of the last write to each chunk, so a death has
// its key and its age on the device write clock. Unlink events are not counted as deaths
// (the discard that follows would count them twice); mount with -o discard, or the
// deaths show only when the blocks are written again.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <condition_variable>

#include <nlohmann/json.hpp>

#include "nvme/device.hpp"
#include "placement/learner.hpp"
#include "placement/policy.hpp"
#include "proto/policy_reply.hpp"

namespace kvfdp::daemon {

class WriterNames;

struct LearnedOptions {
	// Soft state: a directory (ends in '/' or is one) holds a file per device,
	// learned-<identity>.state (state_file_for); any other path is the file itself. "" = not
	// persisted. create() sets it to the file.
	std::string state_path;
	double period_s = 2.0;  // recompute period
	// Names for the learner's keys, asked once per key after each regroup ("" = not known
	// yet): kept with the keys in the state file (e.g. WriterNames::identity_of).
	std::function<std::string(uint32_t writer)> name_of;
};

// The device's identity for its learner state: DeviceInfo::identity, each stripe member's,
// and where a backend reports none, a block device's WWID, a file's device and inode (file
// and model backends), else its path. Members are joined by ','.
[[nodiscard]] std::string device_identity(const nvme::DeviceInfo &info);
// The state file for state_path (LearnedOptions) and a device identity: in a directory,
// learned-<identity>.state (',' as '+', any character but [A-Za-z0-9._-] as '_', an
// identity over 128 characters as its FNV-1a hash); a file path as it is.
[[nodiscard]] std::string state_file_for(const std::string &state_path,
					 const std::string &identity);

class LearnedPlacement {
public:
	// For dev (its handles, capacity and RU size); the state file for dev is loaded now (a
	// missing file is a fresh start; a corrupt one, or one of another device, is renamed to
	// <file>.rejected, replacing any earlier one, with one warning line, and learning starts
	// fresh).
	static std::unique_ptr<LearnedPlacement> create(nvme::Device &dev, uint16_t nruh,
							const LearnedOptions &o);
	~LearnedPlacement();
	LearnedPlacement(const LearnedPlacement &) = delete;
	LearnedPlacement &operator=(const LearnedPlacement &) = delete;

	// ---- data path (any queue thread): lock-free, no allocation ----
	// The handle for a write of nlb LBAs at slba by writer with class cls; counts the bytes
	// and the death of what the write overwrites.
	[[nodiscard]] uint16_t place(uint32_t writer, uint8_t cls, uint64_t slba,
				     uint32_t nlb) noexcept;
	// A discard or write zeroes of nlb LBAs at slba: the data there died.
	void discard(uint64_t slba, uint32_t nlb) noexcept;

	// ---- off the data path ----
	// Pins from the policy: explicit [placement] class handles and [[writer]] entries with a
	// fixed class or handle (writer ids KVFDP_WRITER_NAMED | i + 1, as the tagger's). A
	// reload that hands a handle to another owner (a pin added on a learned group's handle,
	// moved or dropped) has it closed with RUH Update by the next regroup, which the
	// running thread does at once rather than at the end of its period.
	void set_policy(const placement::Policy &p);
	// One regroup now: RUH Update of abandoned, remapped and idle handles (one command; a refusal
	// is counted and the handles stay open), then the state is saved. Returns what the
	// learner did.
	placement::RecomputeResult recompute_now();
	// The periodic thread (recompute_now every period_s) and its stop (a last save).
	void start();
	void stop();

	// `kvfdp policy`'s learned part: the groups and every key, named by names; also what
	// the kvfdp_learned_* metric families are rendered from (proto::learned_families).
	[[nodiscard]] proto::LearnedPolicy policy(WriterNames &names) const;
	// The same as JSON.
	[[nodiscard]] nlohmann::json policy_json(WriterNames &names) const;

	[[nodiscard]] uint64_t ruh_updates() const
	{
		return ruh_updates_.load(std::memory_order_relaxed);
	}
	[[nodiscard]] uint64_t ruh_update_refused() const
	{
		return ruh_refused_.load(std::memory_order_relaxed);
	}

private:
	LearnedPlacement(nvme::Device &dev, uint16_t nruh, const LearnedOptions &o);
	struct Chunk {
		std::atomic<uint64_t> key{0};    // 0 empty; else placement::key_word of the writer
		std::atomic<uint64_t> clock{0};  // learner clock after the write
	};
	void chunks_died(uint64_t slba, uint32_t nlb, uint64_t new_key) noexcept;
	void save_locked();

	nvme::Device &dev_;
	uint16_t nruh_;
	LearnedOptions opts_;
	placement::Learner learner_;
	uint32_t lba_size_;
	uint32_t chunk_shift_;  // log2 of LBAs per chunk
	uint64_t nchunks_;
	std::unique_ptr<Chunk[]> chunks_;
	std::atomic<uint64_t> ruh_updates_{0}, ruh_refused_{0}, recomputes_{0};
	std::mutex mu_;  // recompute, save, the thread
	std::condition_variable cv_;
	bool stop_ = false;
	bool regroup_ = false;  // set_policy: regroup now
	std::thread thread_;
	std::string last_error_;  // the last RUH Update refusal or save error, logged once
	uint64_t generation_ = 0;
	uint32_t groups_ = 0;
};

}  // namespace kvfdp::daemon
