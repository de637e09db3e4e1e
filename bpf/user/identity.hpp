// Writer identity, userspace side (docs/bpf.md, "Writer identity"): the tagger's event thread
// hands each CREATE event to an IdentityResolver. For a raw (cgroup-derived) writer id it
// resolves the cgroup's path, applies the [[writer]] cgroup patterns, else normalises the path
// and adds the writer directory's name, fills the tagger's writer_idents entry (so that later
// files of that cgroup and directory get the id in BPF) and its dir_idents entry (so that a new
// cgroup's first file there gets the id provisionally), and rewrites the new file's
// inode_writer entry (so its blocks carry the id). A provisional id (KVFDP_EVF_PROVISIONAL) is
// checked the same way: kept when the cgroup's identity is that id, else rewritten.
// Everything it keeps is bounded.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bpf/tagger.h"
#include "common/cgroups.hpp"
#include "common/lru_map.hpp"

namespace kvfdp::bpf {

class Tagger;

// One [[writer]] entry as the tagger applies it (placement::WriterRule without the placement).
struct WriterSpec {
	std::string label;           // for warnings: the name, else what it matches
	int line = 0;                // config line, 0 unknown
	std::string cgroup;          // exact cgroup path  } one of these, or
	std::string dir;             // directory subtree  } cgroup_pattern with or without dir
	std::string cgroup_pattern;  // common/writer_identity.hpp cgroup_pattern_matches
	uint32_t writer = 0;         // KVFDP_WRITER_NAMED | n
};

// What the resolver did, for /metrics and tests.
struct IdentityStats {
	uint64_t resolved = 0;            // (cgroup, directory) pairs given an id in writer_idents
	uint64_t by_pattern = 0;          // of those, by a [[writer]] cgroup_pattern (a named id)
	uint64_t unresolved = 0;          // raw or provisional ids kept: no cgroup or dir name
	uint64_t rewritten = 0;           // new files whose inode_writer entry got the id
	uint64_t early_bytes = 0;         // bytes those files had written with the raw or a wrong
					  // provisional id (at least)
	uint64_t provisional_right = 0;   // provisional ids the resolved identity confirmed
	uint64_t provisional_wrong = 0;   // provisional ids replaced (counted in rewritten too)
	uint64_t dir_idents_added = 0;    // dir_idents entries created
	uint64_t dir_idents_removed = 0;  // dir_idents entries removed by configure()
	size_t names = 0;                 // identity strings kept (id -> string)
	size_t names_capacity = 0;
	uint64_t name_evictions = 0;
	size_t dirs = 0;  // directory names kept ((dev, ino) -> name)
	size_t dirs_capacity = 0;
	uint64_t dir_evictions = 0;
	CgroupPaths::Stats cgroups;
};

class IdentityResolver {
public:
	// Up to `names` identity strings and directory names are kept (LRU), and as many cgroup
	// paths.
	explicit IdentityResolver(Tagger &tagger, size_t names = 4096);

	// Puts specs into the tagger (writer directories, cgroups, the directories of pattern
	// rules) and keeps the pattern rules; watch_dir ("" none) bounds writer directories like
	// a filesystem root. Clears the tagger's writer maps, identities and the provisional
	// named ids first (provisional identities stay: they are checked anyway). Returns one
	// warning line per spec that matches nothing now (a missing directory or cgroup, a
	// pattern no current cgroup matches): such a spec still applies to what appears later
	// (patterns) or is skipped (a missing directory or cgroup).
	[[nodiscard]] std::vector<std::string> configure(const std::vector<WriterSpec> &specs,
							 const std::string &watch_dir);

	// The writer id a CREATE event's file ends up with: the event's, or the identity (or
	// pattern writer) resolved for a raw or provisional id, which the tagger's maps then hold
	// too. Other events: their writer.
	uint32_t on_create(const kvfdp_event &e);

	// The identity string of a KVFDP_WRITER_IDENT id resolved since start ("" unknown).
	[[nodiscard]] std::string name_of(uint32_t writer);
	// The cgroup paths this resolver uses (shared with writer names).
	[[nodiscard]] CgroupPaths &cgroups() { return cgroups_; }
	[[nodiscard]] IdentityStats stats();

private:
	struct Rule {
		std::string pattern;
		std::string dir;
		bool has_dir = false;
		uint32_t dev = 0;
		uint64_t dir_ino = 0;
		uint32_t writer = 0;
	};
	struct DirKey {
		uint32_t dev;
		uint64_t ino;
		bool operator==(const DirKey &) const = default;
	};
	struct DirKeyHash {
		size_t operator()(const DirKey &k) const
		{
			return std::hash<uint64_t>()(k.ino * 0x9e3779b97f4a7c15ull ^ k.dev);
		}
	};
	// The name of directory (dev, ino) in the directory that bounds writer directories
	// there (watch_dir, or the filesystem's mount root); "" when not found.
	std::string dir_name(uint32_t dev, uint64_t ino);

	Tagger &tagger_;
	CgroupPaths cgroups_;
	std::mutex mu_;
	std::vector<Rule> rules_;
	std::string watch_dir_;
	LruMap<uint32_t, std::string> names_;
	LruMap<DirKey, std::string, DirKeyHash> dirs_;
	IdentityStats counts_;
};

// The mount point of the filesystem with this s_dev (kernel dev_t encoding) whose root is the
// filesystem's root, from mountinfo; "" when none is mounted.
[[nodiscard]] std::string mount_root_of(uint32_t s_dev,
					const std::string &mountinfo = "/proc/self/mountinfo");

}  // namespace kvfdp::bpf
