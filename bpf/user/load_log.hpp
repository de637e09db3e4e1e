// kvfdp::bpf load diagnostics: what libbpf says while a BPF object opens and loads, captured
// through its print callback, and a refused load turned into one line that names the program
// or map and, for a CO-RE relocation the kernel's BTF cannot satisfy, the type or field.
// Load time only: never on the I/O path.
#pragma once

#include <bpf/libbpf.h>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace kvfdp::bpf {

// What a refused open or load was, read from libbpf's messages.
struct LoadFailure {
	std::string program;  // the refused program ("" when none was named)
	std::string map;      // the map that could not be created ("" when none)
	// What the kernel's BTF lacks, from "failed to resolve CO-RE relocation <kind> [id] struct
	// bio.bi_iter.bi_bvec_done (...)": "struct bio.bi_iter.bi_bvec_done" (a local ___flavour
	// suffix dropped: libbpf matches by the name before it); "" when no relocation failed.
	std::string missing;
	std::string relocation;  // that relocation's kind ("byte_off", "type_exists", ...)
	// libbpf's own lines about the failure (program, map, relocation, object; without the
	// "libbpf: " prefix and the verifier log), in order, at most kMaxLines.
	std::vector<std::string> lines;
	std::string verifier_log;  // the last "-- BEGIN PROG LOAD LOG --" block ("" when none)

	static constexpr size_t kMaxLines = 8;
};

// Reads libbpf's output of one open + load (every message as printed, in order).
[[nodiscard]] LoadFailure parse_libbpf_output(std::string_view text);

// The type or field one "failed to resolve CO-RE relocation ..." line names ("" when the line
// is not one); kind gets the relocation kind when given.
[[nodiscard]] std::string core_missing(std::string_view line, std::string *kind = nullptr);

// One line for a refused load: "what: program P: this kernel's BTF has no struct X.f (CO-RE
// relocation byte_off); libbpf: <lines>: <strerror(-err)>". err is the load's -errno.
[[nodiscard]] std::string describe_failure(const std::string &what, const LoadFailure &f, int err);

// Captures libbpf's messages (every level but debug) from construction to destruction, in
// a buffer of at most kMaxBytes (the oldest text is dropped first, and counted). libbpf has
// one print callback per process: this installs kvfdp's (which also prints to stderr under
// kvfdpd --debug 4 or KVFDP_BPF_VERBOSE=1), and one capture runs at a time (a second waits).
class LibbpfCapture {
public:
	static constexpr size_t kMaxBytes = 1u << 20;

	LibbpfCapture();
	~LibbpfCapture();
	LibbpfCapture(const LibbpfCapture &) = delete;
	LibbpfCapture &operator=(const LibbpfCapture &) = delete;

	// What libbpf printed so far.
	[[nodiscard]] std::string text() const;
	// Bytes dropped from the front because the buffer was full.
	[[nodiscard]] size_t dropped() const;
};

// Installs kvfdp's print callback without capturing (messages go to stderr only under the
// bpf debug category or KVFDP_BPF_VERBOSE=1). LibbpfCapture installs it too.
void install_libbpf_print();

// Writes a refused load's verifier log (and libbpf's other lines) to the daemon log, one
// log line each, prefixed with what.
void log_failure(const std::string &what, const LoadFailure &f, size_t dropped);

// The error of a refused open, load or attach (err: its -errno) from what cap holds:
// describe_failure()'s line; the detail (log_failure) goes to the log.
[[nodiscard]] Error refusal(const LibbpfCapture &cap, const std::string &what, int err);

// Loads obj (opened, not loaded) with libbpf's messages captured. A refusal returns
// describe_failure()'s line and logs the verifier log (log_failure).
[[nodiscard]] Result<void> load_object(bpf_object *obj, const std::string &what);

}  // namespace kvfdp::bpf
