// kvfdp::bpf::Tagger: loads tagger.bpf.c into the running kernel with the hooks it allows,
// fills its maps (watched disks, directory rules, inode policies), exposes the tag slots,
// per-class counters and the lifetime-event / request-record ring buffers.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "bpf/tag.h"
#include "bpf/tagger.h"
#include "bpf/user/kernel_support.hpp"
#include "bpf/user/slot_reader.hpp"
#include "common/result.hpp"

namespace kvfdp::bpf {

struct TaggerOptions {
	uint32_t queues = 1;  // slot array = queues * depth (<= KVFDP_MAX_SLOTS)
	uint32_t depth = 1;
	uint8_t default_class = KVFDP_CLASS_NOT_SET;  // class when no source knows better
	bool all_filesystems = false;    // events for every filesystem, not only watched ones
	uint32_t record_ring_bytes = 0;  // requests ring size (power of two); 0 = no records
	bool allow_lsm = true;           // try lsm/inode_unlink where BPF LSM is active
	bool allow_kprobe = true;        // else kprobe/vfs_unlink
	bool allow_fentry =
		true;  // hint and create events by fexit/fentry, else syscall tracepoints
	// A bpffs directory to pin the links and maps in ("": nothing pinned). Pinned, they
	// outlive this process: its crash detaches nothing, and the next load with this directory
	// re-opens them (nothing loaded or attached) when they come from this build and these
	// options; a set from another build or other options is removed and loaded afresh.
	std::string pin_dir;
};

// The hooks that loaded and attached.
struct ActiveSources {
	bool bio_hint = false;       // the running kernel's bio or request has a write hint field
	std::string bio_hint_field;  // which: "bio.bi_write_hint" or "request.write_hint"
	bool page_inode = true;      // page cache -> inode (always loaded with the tagger)
	bool dio_inode = false;      // iomap direct I/O -> inode
	bool hint_events = false;    // fcntl's hook attached (hint_hook)
	bool create_events = false;  // an open hook attached (create_hook)
	std::string hint_hook;       // "fexit/__x64_sys_fcntl" or "tracepoint/syscalls"
	std::string create_hook;     // "fentry/security_file_open" or "tracepoint/syscalls"
	std::string unlink_hook;     // "lsm/inode_unlink", "kprobe/vfs_unlink" or "" (none)
	std::string rename_hook;     // "kprobe/vfs_rename" or "" (a rename over a file unseen)
	std::string notes;           // why something is off

	// One line: "bio-hint(bio.bi_write_hint) page-inode dio-inode
	// hint-events(fexit/__x64_sys_fcntl) create-events(fentry/security_file_open)
	// unlink=lsm/... rename=kprobe/vfs_rename".
	[[nodiscard]] std::string describe() const;
};

// Requests and bytes per class for one disk.
struct DiskCounters {
	std::array<kvfdp_counter, KVFDP_NR_CLASSES> write{};    // REQ_OP_WRITE
	std::array<kvfdp_counter, KVFDP_NR_CLASSES> discard{};  // DISCARD and WRITE_ZEROES
	std::array<uint64_t, KVFDP_NR_SOURCES> sources{};  // requests per enum kvfdp_tag_source
};

// Global tagger statistics (enum kvfdp_stat), summed over CPUs.
using TaggerStats = std::array<uint64_t, KVFDP_NR_STATS>;

using EventCallback = std::function<void(const kvfdp_event &)>;
using RecordCallback = std::function<void(const kvfdp_rq_record &)>;

class Tagger {
public:
	// Probes the kernel, opens and loads the programs that can run, attaches them. Needs
	// root. Fails only when the block tagger itself cannot load or attach.
	[[nodiscard]] static Result<Tagger> load(const TaggerOptions &options);

	Tagger(Tagger &&) noexcept;
	Tagger &operator=(Tagger &&) noexcept;
	Tagger(const Tagger &) = delete;
	Tagger &operator=(const Tagger &) = delete;
	~Tagger();

	// Starts classifying requests of the whole disk at path (flags: KVFDP_DISK_*; the
	// default writes tag slots, as kvfdpd's ublk disk needs); its filesystems (the disk
	// and its partitions) are watched for lifetime events too. Watching a watched disk
	// again replaces its flags.
	[[nodiscard]] Result<void> watch_disk(const std::string &path,
					      uint32_t flags = KVFDP_DISK_SLOTS);
	// Same, by kernel dev_t (major << 20 | minor).
	[[nodiscard]] Result<void> watch_disk_dev(uint32_t devt, uint32_t flags = KVFDP_DISK_SLOTS);
	[[nodiscard]] Result<void> unwatch_disk(const std::string &path);
	// Reports lifetime events for the filesystem with this s_dev.
	[[nodiscard]] Result<void> watch_filesystem(uint32_t s_dev);

	// Files created from now on anywhere in dir's subtree (KVFDP_MAX_DIR_DEPTH levels) belong
	// to writer (KVFDP_WRITER_NAMED | n); the nearest writer directory wins.
	[[nodiscard]] Result<void> add_writer_dir(const std::string &dir, uint32_t writer);
	[[nodiscard]] Result<void> remove_writer_dir(const std::string &dir);
	// Files tasks of this cgroup v2 (id = the cgroup directory's inode) create belong to
	// writer, unless a writer directory covers them.
	[[nodiscard]] Result<void> add_writer_cgroup(uint64_t cgroup_id, uint32_t writer);
	[[nodiscard]] Result<void> remove_writer_cgroup(uint64_t cgroup_id);
	// The writer id the tagger recorded for the inode at creation, or 0.
	[[nodiscard]] uint32_t inode_writer(uint32_t dev, uint64_t ino) const;
	// Replaces the writer id of an inode that has one (a file created since the tagger
	// watched); false when it has none (gone, or evicted).
	bool set_inode_writer(uint32_t dev, uint64_t ino, uint32_t writer);

	// Identities (docs/bpf.md "Writer identity"): files the cgroup creates in the writer
	// directory (dev, dir_ino; 0: the filesystem's root itself) get writer from now on,
	// instead of the cgroup's raw id. An LRU map of KVFDP_IDENT_MAP_ENTRIES.
	[[nodiscard]] Result<void> set_identity(uint64_t cgroup_id, uint32_t dev, uint64_t dir_ino,
						uint32_t writer);
	// The writer the map holds for (cgroup, dev, dir_ino), or 0.
	[[nodiscard]] uint32_t identity(uint64_t cgroup_id, uint32_t dev, uint64_t dir_ino) const;
	void clear_identities();
	// Provisional identities by writer directory (dev, dir_ino; 0: the filesystem's root or
	// a watch_dir itself): a cgroup with no identity there gets writer at create, flagged
	// KVFDP_EVF_PROVISIONAL. An LRU map of KVFDP_DIR_IDENT_MAP_ENTRIES. Returns whether the
	// entry is new (false: an entry replaced); an error when the map refused it.
	[[nodiscard]] Result<bool> set_dir_ident(uint32_t dev, uint64_t dir_ino, uint32_t writer);
	// The writer the map holds for the directory, or 0.
	[[nodiscard]] uint32_t dir_ident(uint32_t dev, uint64_t dir_ino) const;
	// Removes the entries holding a named writer (KVFDP_WRITER_NAMED: their numbers follow
	// the config's order); returns how many went.
	size_t clear_named_dir_idents();
	// What bounds a writer directory (KVFDP_IDENT_DIR: dir is one; KVFDP_IDENT_ROOT: its
	// children are), besides each filesystem's root.
	[[nodiscard]] Result<void> add_ident_dir(const std::string &dir, uint32_t kind);
	void clear_ident_dirs();

	// Files created (open/creat with O_CREAT) anywhere in dir's subtree (KVFDP_MAX_DIR_DEPTH
	// levels; the nearest rule wins) get cls from now on.
	[[nodiscard]] Result<void> add_dir_rule(const std::string &dir, uint8_t cls);
	[[nodiscard]] Result<void> remove_dir_rule(const std::string &dir);
	// Removes every directory rule (a re-opened pinned set keeps the last process's).
	void clear_dir_rules();
	// Removes every writer directory and writer cgroup (a re-opened set keeps the last process's).
	void clear_writers();
	// Requests carrying this inode's pages get cls (when the bio has no hint).
	[[nodiscard]] Result<void> add_inode_policy(uint32_t dev, uint64_t ino, uint8_t cls);
	[[nodiscard]] Result<void> add_file_policy(const std::string &path, uint8_t cls);
	[[nodiscard]] Result<void> remove_inode_policy(uint32_t dev, uint64_t ino);
	// The class an inode has in the policy map, or -1.
	[[nodiscard]] int inode_policy(uint32_t dev, uint64_t ino) const;

	// The slot reader over the mmapped array (queues x depth of the options).
	[[nodiscard]] SlotReader &slots() { return *reader_; }
	// Counters of a watched disk (path or kernel dev_t).
	[[nodiscard]] Result<DiskCounters> counters(const std::string &disk) const;
	[[nodiscard]] Result<DiskCounters> counters_dev(uint32_t devt) const;
	[[nodiscard]] TaggerStats stats() const;
	// Block requests (of any disk) the kernel issued without running the tagger: BPF's
	// recursion protection skips a run that would nest in one already running on the same
	// CPU (bpf_prog_info.recursion_misses). A write among them finds its tag slot stale and
	// is placed as not_set. 0 when the kernel does not say.
	[[nodiscard]] uint64_t missed_runs() const;
	// Bytes tagged requests attributed to the inode so far (0 when unknown).
	[[nodiscard]] uint64_t inode_bytes(uint32_t dev, uint64_t ino) const;

	// Waits up to timeout_ms for ring-buffer data and delivers it; returns the number of
	// records delivered (0 on timeout) or -errno (-EINTR when a signal arrived).
	int poll(int timeout_ms, const EventCallback &on_event,
		 const RecordCallback &on_record = {});
	// Delivers whatever is queued without waiting.
	int drain(const EventCallback &on_event, const RecordCallback &on_record = {});
	// An epoll fd that becomes readable when either ring has data.
	[[nodiscard]] int event_fd() const;

	[[nodiscard]] const ActiveSources &sources() const { return sources_; }
	[[nodiscard]] const Features &features() const { return features_; }

	// Where the links and maps are pinned; "" when they are not (no pin_dir, or pinning
	// failed: sources().notes says why).
	[[nodiscard]] const std::string &pinned_at() const;
	// Whether load() re-opened a pinned set instead of loading and attaching.
	[[nodiscard]] bool reopened() const;
	// Removes the pins: the programs detach when this Tagger is destroyed.
	[[nodiscard]] Result<void> unpin();

	struct Impl;

private:
	Tagger();
	// load()'s steps: re-open the pinned set (maps only), pin a fresh one, map the slots and
	// open the rings (both paths).
	[[nodiscard]] Result<void> reopen(const TaggerOptions &o, uint64_t build);
	[[nodiscard]] Result<void> pin(const TaggerOptions &o, uint64_t build);
	[[nodiscard]] Result<void> map_and_rings(const TaggerOptions &o);
	std::unique_ptr<Impl> impl_;
	std::unique_ptr<SlotReader> reader_;
	ActiveSources sources_;
	Features features_;
};

}  // namespace kvfdp::bpf
