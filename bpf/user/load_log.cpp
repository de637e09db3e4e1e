// libbpf's messages during open/load, captured and read back for a refused load.
#include "bpf/user/load_log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "common/log.hpp"

namespace kvfdp::bpf {

namespace {

constexpr std::string_view kBeginLog = "-- BEGIN PROG LOAD LOG --";
constexpr std::string_view kEndLog = "-- END PROG LOAD LOG --";
constexpr std::string_view kCoreFail = "failed to resolve CO-RE relocation ";
constexpr size_t kMaxLine = 300;  // a kept libbpf line is cut here

// The print callback's state: one capture at a time (capture_mu, held by LibbpfCapture for
// its life); mu guards the buffer against libbpf messages from other threads.
struct CaptureState {
	std::mutex capture_mu;
	std::mutex mu;
	bool on = false;
	std::string buf;
	size_t dropped = 0;
};

CaptureState &state()
{
	static CaptureState s;
	return s;
}

// Appends msg, keeping at most LibbpfCapture::kMaxBytes: a message too big on its own keeps
// its first line and its tail (a verifier log's error is at its end); older text goes first.
void keep(CaptureState &s, std::string msg)
{
	constexpr size_t cap = LibbpfCapture::kMaxBytes;
	if (msg.size() > cap) {
		const size_t nl = msg.find('\n');
		const std::string head =
			msg.substr(0, nl == std::string::npos ? 0 : std::min(nl + 1, kMaxLine));
		const size_t tail = cap - head.size() - 64;  // 64: room for the mark
		const size_t cut = msg.size() - head.size() - tail;
		s.dropped += cut;
		msg = head + "[... " + std::to_string(cut) + " bytes dropped ...]\n" +
		      msg.substr(msg.size() - tail);
	}
	if (s.buf.size() + msg.size() > cap) {
		const size_t cut = s.buf.size() + msg.size() - cap;
		s.buf.erase(0, cut);
		s.dropped += cut;
	}
	s.buf += msg;
}

int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static const bool verbose = std::getenv("KVFDP_BPF_VERBOSE") != nullptr;
	if (level == LIBBPF_DEBUG)
		return 0;
	const bool echo = verbose || log::debug_enabled(log::kCatBpf);
	CaptureState &s = state();
	std::unique_lock<std::mutex> l(s.mu);
	if (!s.on) {
		l.unlock();
		return echo ? std::vfprintf(stderr, fmt, ap) : 0;
	}
	va_list copy;
	va_copy(copy, ap);
	const int n = std::vsnprintf(nullptr, 0, fmt, copy);
	va_end(copy);
	if (n <= 0)
		return n;
	std::string msg(static_cast<size_t>(n), '\0');
	std::vsnprintf(msg.data(), msg.size() + 1, fmt, ap);
	if (echo)
		std::fputs(msg.c_str(), stderr);
	keep(s, std::move(msg));
	return n;
}

std::string_view trim(std::string_view s)
{
	while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r'))
		s.remove_suffix(1);
	while (!s.empty() && s.front() == ' ')
		s.remove_prefix(1);
	return s;
}

// The name in "prog 'NAME': ..." / "map 'NAME': ..." at the start of line ("" when not).
std::string quoted_after(std::string_view line, std::string_view prefix)
{
	if (line.substr(0, prefix.size()) != prefix)
		return {};
	const size_t end = line.find("':", prefix.size());
	return end == std::string_view::npos
		       ? std::string()
		       : std::string(line.substr(prefix.size(), end - prefix.size()));
}

// Whether a libbpf warning line says something about the failure (not the generic wrap-up).
bool relevant(std::string_view line)
{
	if (line.empty() || line.find("failed to load object") != std::string_view::npos ||
	    line.find("failed to load BPF skeleton") != std::string_view::npos)
		return false;
	// libbpf 1.4+ on a kernel without BPF tokens: optional, harmless (docs/bpf.md).
	if (line.find("to create BPF token") != std::string_view::npos)
		return false;
	// "prog 'x': failed to load: -22" repeats the load-failed line with a bare number.
	if (line.find("': failed to load: -") != std::string_view::npos)
		return false;
	return true;
}

void add_line(LoadFailure &f, std::string_view line)
{
	if (f.lines.size() >= LoadFailure::kMaxLines)
		return;
	std::string l(line.substr(0, kMaxLine));
	if (line.size() > kMaxLine)
		l += "...";
	for (const std::string &have : f.lines)
		if (have == l)
			return;
	f.lines.push_back(std::move(l));
}

}  // namespace

std::string core_missing(std::string_view line, std::string *kind)
{
	const size_t at = line.find(kCoreFail);
	if (at == std::string_view::npos)
		return {};
	std::string_view rest = line.substr(at + kCoreFail.size());
	// "<byte_off> [12] struct bio.bi_iter.bi_bvec_done (0:9:3 @ offset 44)"
	if (rest.empty() || rest.front() != '<')
		return {};
	const size_t close = rest.find('>');
	if (close == std::string_view::npos)
		return {};
	if (kind)
		*kind = std::string(rest.substr(1, close - 1));
	rest = trim(rest.substr(close + 1));
	if (!rest.empty() && rest.front() == '[') {
		const size_t id_end = rest.find(']');
		if (id_end == std::string_view::npos)
			return {};
		rest = trim(rest.substr(id_end + 1));
	}
	// The spec ends at " (raw spec @ offset)" for fields, " = value" for enum values.
	for (std::string_view stop : {std::string_view(" ("), std::string_view(" = ")})
		if (const size_t p = rest.find(stop); p != std::string_view::npos)
			rest = rest.substr(0, p);
	rest = trim(rest);
	if (rest.size() >= 3 && rest.substr(rest.size() - 3) == "...")
		rest.remove_suffix(3);
	const size_t sp = rest.find(' ');
	if (sp == std::string_view::npos || sp + 1 >= rest.size())
		return {};
	// "struct bio___kvfdp_missing.no_such_field": the kernel's type is the name before "___".
	const std::string_view keyword = rest.substr(0, sp);
	std::string_view name = rest.substr(sp + 1);
	const size_t name_end = std::min(name.find_first_of(".[:"), name.size());
	std::string_view type = name.substr(0, name_end);
	const std::string_view access = name.substr(name_end);
	if (const size_t flavour = type.find("___");
	    flavour != std::string_view::npos && flavour > 0)
		type = type.substr(0, flavour);
	return std::string(keyword) + " " + std::string(type) + std::string(access);
}

LoadFailure parse_libbpf_output(std::string_view text)
{
	LoadFailure f;
	bool in_log = false;
	size_t log_start = 0;
	size_t pos = 0;
	while (pos < text.size()) {
		size_t nl = text.find('\n', pos);
		if (nl == std::string_view::npos)
			nl = text.size();
		std::string_view line = text.substr(pos, nl - pos);
		const size_t next = nl + 1;
		if (in_log) {
			if (const size_t end = line.find(kEndLog); end != std::string_view::npos) {
				in_log = false;
				// The log's last line may share its line with the END marker.
				f.verifier_log =
					std::string(text.substr(log_start, pos + end - log_start));
			} else if (std::string miss = core_missing(line, &f.relocation);
				   !miss.empty()) {
				f.missing = std::move(miss);
				add_line(f, trim(line));
			}
			pos = next;
			continue;
		}
		std::string_view l = trim(line);
		if (l.substr(0, 8) == "libbpf: ")
			l.remove_prefix(8);
		if (const size_t b = l.find(kBeginLog); b != std::string_view::npos) {
			if (f.program.empty())
				f.program = quoted_after(l, "prog '");
			in_log = true;
			log_start = next;
			pos = next;
			continue;
		}
		if (std::string miss = core_missing(l, &f.relocation); !miss.empty())
			f.missing = std::move(miss);
		if (f.program.empty())
			f.program = quoted_after(l, "prog '");
		if (f.map.empty())
			f.map = quoted_after(l, "map '");
		if (relevant(l))
			add_line(f, l);
		pos = next;
	}
	if (in_log)  // cut off before its END marker
		f.verifier_log = std::string(text.substr(std::min(log_start, text.size())));
	return f;
}

std::string describe_failure(const std::string &what, const LoadFailure &f, int err)
{
	std::string s = what + ": " + std::strerror(err < 0 ? -err : err);
	if (!f.program.empty())
		s += ": program " + f.program;
	else if (!f.map.empty())
		s += ": map " + f.map;
	if (!f.missing.empty())
		s += ": this kernel's BTF has no " + f.missing + " (CO-RE relocation " +
		     f.relocation + ")";
	if (!f.lines.empty()) {
		s += "; libbpf: ";
		for (size_t i = 0; i < f.lines.size(); i++)
			s += (i ? " | " : "") + f.lines[i];
	}
	for (char &c : s)
		if (c == '\n' || c == '\t')
			c = ' ';
	return s;
}

void install_libbpf_print()
{
	libbpf_set_print(print);
}

LibbpfCapture::LibbpfCapture()
{
	CaptureState &s = state();
	s.capture_mu.lock();
	install_libbpf_print();
	std::lock_guard<std::mutex> l(s.mu);
	s.on = true;
	s.buf.clear();
	s.dropped = 0;
}

LibbpfCapture::~LibbpfCapture()
{
	CaptureState &s = state();
	{
		std::lock_guard<std::mutex> l(s.mu);
		s.on = false;
		s.buf.clear();
		s.buf.shrink_to_fit();
	}
	s.capture_mu.unlock();
}

std::string LibbpfCapture::text() const
{
	CaptureState &s = state();
	std::lock_guard<std::mutex> l(s.mu);
	return s.buf;
}

size_t LibbpfCapture::dropped() const
{
	CaptureState &s = state();
	std::lock_guard<std::mutex> l(s.mu);
	return s.dropped;
}

void log_failure(const std::string &what, const LoadFailure &f, size_t dropped)
{
	for (const std::string &l : f.lines)
		log::warn("%s: libbpf: %s", what.c_str(), l.c_str());
	if (f.verifier_log.empty())
		return;
	const char *prog = f.program.empty() ? "?" : f.program.c_str();
	log::info("%s: verifier log of %s%s:", what.c_str(), prog,
		  dropped ? (" (" + std::to_string(dropped) + " earlier bytes dropped)").c_str()
			  : "");
	std::string_view v = f.verifier_log;
	while (!v.empty()) {
		const size_t nl = std::min(v.find('\n'), v.size());
		log::info("%s: verifier: %.*s", what.c_str(), static_cast<int>(nl), v.data());
		v.remove_prefix(std::min(nl + 1, v.size()));
	}
}

Error refusal(const LibbpfCapture &cap, const std::string &what, int err)
{
	const LoadFailure f = parse_libbpf_output(cap.text());
	// The log lines are prefixed with the object ("tagger: load the BPF programs" -> "tagger").
	log_failure(what.substr(0, what.find(':')), f, cap.dropped());
	return guidance_errno(err, describe_failure(what, f, err));
}

Result<void> load_object(bpf_object *obj, const std::string &what)
{
	LibbpfCapture cap;
	const int err = bpf_object__load(obj);
	if (err == 0)
		return ok();
	return refusal(cap, what, err);
}

}  // namespace kvfdp::bpf
