// TaggerOwner: kvfdpd's side of the BPF tagger. It loads the tagger (unless --no-tagger),
// hands the queues its tag-slot array, watches the ublk disk, mirrors the policy's directory
// rules into it, folds its lifetime events into the per-file table and answers `files`.
// Built without BPF it is a null tagger that says why tagging is off; this is the only place
// in kvfdpd that knows whether BPF was built in.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bpf/tag.h"
#include "proto/metrics.hpp"
#include "proto/files_request.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/daemon/writers.hpp"

namespace kvfdp::daemon {

class TaggerOwner {
public:
	TaggerOwner();
	~TaggerOwner();
	TaggerOwner(const TaggerOwner &) = delete;
	TaggerOwner &operator=(const TaggerOwner &) = delete;

	// Loads the tagger for a device of queues x depth tags; disabled (--no-tagger) or a load
	// failure leaves it inactive with the reason (one warning line). Never fails the daemon.
	// pin_dir (bpffs, "" for none): where its links and maps are pinned so that they outlive
	// a crash; a set a killed kvfdpd left there is re-opened unless fresh (a new device) or
	// disabled, when it is removed.
	void load(bool disabled, uint32_t queues, uint32_t depth, const std::string &pin_dir,
		  bool fresh);
	// The tag-slot array the queues read (nullptr when inactive).
	[[nodiscard]] const volatile kvfdp_tag_slot *slot_base() const;
	// Starts classifying requests of the disk at path; a failure turns tagging off.
	void watch_disk(const std::string &path);
	// Replaces old's directory rules (nullptr: every rule there is) and named writers
	// ([[writer]] directories, cgroups and cgroup patterns; every identity resolved so far is
	// dropped, to be resolved again under p's rules) with p's. A writer that matches nothing
	// now is one warning line each.
	void apply_rules(const placement::Policy *old_p, const placement::Policy &p);
	// The events thread: folds lifetime events into the per-file table until stop_events().
	void start_events();
	void stop_events();
	// The data of the `files` reply: the query's rows, filtered and ranked over every record,
	// with each file's writer named; or why there are none.
	[[nodiscard]] nlohmann::json files(const proto::FilesQuery &q);
	// Names of writer ids: the policy's [[writer]] entries (apply_rules), identities, cgroup
	// paths.
	[[nodiscard]] WriterNames &writer_names();
	// The bounded tables' fill, bounds and evictions, and what identities did (/metrics).
	[[nodiscard]] proto::TaggerBounds bounds();

	// Removes the pinned set (the device is gone): the programs detach at exit.
	void unpin();

	[[nodiscard]] bool active() const;
	// Where the set is pinned ("" when not) and whether load() re-opened it.
	[[nodiscard]] std::string pinned_at() const;
	[[nodiscard]] bool reopened() const;
	[[nodiscard]] const std::string &reason() const;
	[[nodiscard]] const std::vector<std::string> &sources() const;

	struct Impl;

private:
	std::unique_ptr<Impl> impl_;
};

}  // namespace kvfdp::daemon
