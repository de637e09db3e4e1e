// kvfdpd's policy config (TOML): [placement] class = handle, [watch] dir, [[rule]] directory
// rules, [[writer]] named writers, [device] paths and stripe_size, the top-level metrics_listen,
// require_tagger and twin_memory.
// The one parser kvfdpd and `kvfdp policy` use.
// docs/placement.md describes writers and how rules apply.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "placement/classes.hpp"

namespace kvfdp::placement {

inline constexpr const char *kDefaultConfigPath = "/etc/kvfdp/kvfdp.toml";

// A directory rule: files created anywhere in the subtree under path (the directory itself
// and every directory below it) get class cls when the application sets no hint. Where two
// rules cover a file, the deeper directory wins.
struct DirRule {
	std::string path;  // absolute, normalised (no "//", no trailing '/', no "." or "..")
	uint8_t cls = KVFDP_CLASS_NOT_SET;
	int line = 0;  // config line, 0 if unknown
};

// A named writer: the files created by tasks of a cgroup, created in a directory subtree, or
// created by tasks of any cgroup a pattern matches (in a directory subtree, when dir is set
// too). Set: cgroup, or dir, or cgroup_pattern with or without dir. A writer with a fixed
// class or handle is placed there whatever the learner measures; otherwise the learner places
// its keys. docs/bpf.md, "Writer identity".
struct WriterRule {
	std::string name;  // display name; defaults to writer_rule_label()
	std::string
		cgroup;   // cgroup v2 path as /proc/PID/cgroup shows it ("/kv.slice/vllm.service")
	std::string dir;  // absolute directory: the subtree's files belong to this writer
	// A cgroup path pattern ('*' within a component, '**' across): common/writer_identity.hpp
	// cgroup_pattern_matches. With dir: only files under dir.
	std::string cgroup_pattern;
	std::optional<uint8_t> cls;      // fixed class: the class map's handle for it
	std::optional<uint16_t> handle;  // fixed handle index
	int line = 0;
};

// What the config file says, before it is checked against a device.
struct PolicyConfig {
	std::string source;  // file path, or "" for the built-in default
	std::array<std::optional<uint16_t>, kNumClasses> handle{};  // unset: the default map
	std::array<int, kNumClasses> line{};  // config line of each placement key, or 0
	std::vector<DirRule> rules;
	std::vector<WriterRule> writers;
	std::string watch_dir;  // where rules and file records apply ("" = all)
	// [device] paths: the namespaces kvfdpd serves, in order (two or more: one striped disk),
	// when the command line gives no --device; stripe_size: its --stripe-size (0: default).
	// kvfdpd reads them at start only.
	std::vector<std::string> devices;
	uint64_t stripe_bytes = 0;
	// metrics_listen (a top-level key, above the first table): kvfdpd's --metrics-listen where
	// the command line gives none ("" = off); read at start only. kvfdpd checks the address.
	std::string metrics_listen;
	int metrics_listen_line = 0;
	// require_tagger = true (top level): kvfdpd's --require-tagger, a start whose BPF tagger is
	// not active fails (exit 1) instead of serving DEGRADED; read at start only.
	bool require_tagger = false;
	int require_tagger_line = 0;
	// twin_memory (top level): kvfdpd's --twin-memory where the command line gives none (the
	// live WAF twin's memory bound in bytes, 0: no twin); read at start only.
	std::optional<uint64_t> twin_memory;
	int twin_memory_line = 0;
};

// What a writer rule matches, for names and messages: the cgroup, the dir, or
// "<cgroup_pattern>" / "<cgroup_pattern>@<dir>".
[[nodiscard]] std::string writer_rule_label(const WriterRule &w);

// An error that is its message alone (no errno text appended): configuration mistakes.
[[nodiscard]] inline Error plain_error(std::string message)
{
	return Error{std::error_code(), std::move(message)};
}

// Parses TOML text; source names the file in errors ("kvfdp.toml:7: placement.long: ...").
// Unknown tables and keys are errors, so a typo never silently falls back to defaults. Rule
// and writer paths are checked: absolute, no glob characters (* ? [ ]), at most PATH_MAX
// (4096) bytes, no "." or ".." components; the same path twice with a different class (or
// handle) is an error naming both lines. Each error is one line.
[[nodiscard]] Result<PolicyConfig> parse_config(std::string_view text, const std::string &source);

// Reads and parses path. A missing file is an error unless missing_ok, in which case the
// built-in default policy results (source "").
[[nodiscard]] Result<PolicyConfig> load_config(const std::string &path, bool missing_ok);

}  // namespace kvfdp::placement
