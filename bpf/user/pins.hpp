// The tagger's pinned set in bpffs: one directory per served disk (e.g.
// /sys/fs/bpf/kvfdp/ublkb0) holding its links ("link_<program>"), its maps ("map_<map>") and
// a one-entry "meta" array map written last: which build and options the set comes from and
// which hooks attached. A set without meta is incomplete and is replaced. docs/bpf.md.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.hpp"

namespace kvfdp::bpf {

// The meta map's value. Fixed layout: a set whose meta differs in size is from another build.
struct PinMeta {
	char magic[8];   // "kvfdp-1"
	uint64_t build;  // FNV-1a 64 of the BPF object
	uint32_t queues;
	uint32_t depth;
	uint32_t record_ring_bytes;
	uint8_t default_class;
	uint8_t all_filesystems;
	uint8_t allow_lsm;
	uint8_t allow_kprobe;
	uint8_t bio_hint;
	uint8_t dio_inode;
	uint8_t hint_events;
	uint8_t create_events;
	uint8_t allow_fentry;
	char bio_hint_field[32];
	char unlink_hook[64];
	char rename_hook[32];
	char hint_hook[32];
	char create_hook[32];
	char notes[411];
};
static_assert(sizeof(PinMeta) == 640, "PinMeta is pinned: its layout is part of the set's format");

// FNV-1a 64 of bytes (the BPF object's ELF): a different object is a different build.
[[nodiscard]] uint64_t object_hash(const void *bytes, size_t size);

// Creates dir and its parents (mode 0700).
[[nodiscard]] Result<void> make_pin_dir(const std::string &dir);
// Pins fd (a map or link) at path.
[[nodiscard]] Result<void> pin_fd(int fd, const std::string &path);
// Opens the object pinned at path; -errno when there is none.
[[nodiscard]] int open_pinned(const std::string &path);
// Writes meta into a new one-entry array map and pins it as dir/meta.
[[nodiscard]] Result<void> pin_meta(const std::string &dir, const PinMeta &meta);
// Reads dir/meta; fails when absent or of another size.
[[nodiscard]] Result<PinMeta> read_meta(const std::string &dir);
// Unpins everything in dir and removes it (its links detach once no process holds them).
// Absent dir: ok.
[[nodiscard]] Result<void> remove_pin_dir(const std::string &dir);

}  // namespace kvfdp::bpf
