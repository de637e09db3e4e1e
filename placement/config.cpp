// Policy config parsing with toml++ (no exceptions: parse_result).
// The packaged libtomlplusplus is built with exceptions; kvfdp parses without them, so this
// file compiles toml++ header-only in its no-exceptions ABI namespace (toml::noex).
#undef TOML_HEADER_ONLY
#undef TOML_SHARED_LIB
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include "placement/config.hpp"

#include <limits.h>

#include <cerrno>
#include <toml++/toml.h>

#include "common/read_file.hpp"
#include "placement/size.hpp"

namespace kvfdp::placement {

namespace {

int line_of(const toml::node &n)
{
	return static_cast<int>(n.source().begin.line);
}

std::string at(const std::string &source, int line)
{
	std::string s = source.empty() ? "config" : source;
	if (line > 0)
		s += ":" + std::to_string(line);
	return s;
}

Error key_error(const std::string &source, int line, const std::string &key,
		const std::string &what)
{
	return plain_error(at(source, line) + ": " + key + ": " + what);
}

const std::string kClassHelp = "unknown class (use not_set, none, short, medium, long, extreme)";

// Checks and normalises an absolute path of a rule or writer: "" when fine, else what is
// wrong. Collapses "//" and drops a trailing '/'. A pattern (cgroup_pattern) may hold '*'.
std::string check_path(std::string &path, bool pattern = false)
{
	if (path.empty() || path[0] != '/')
		return "must be an absolute path";
	if (path.size() >= PATH_MAX)
		return "is " + std::to_string(path.size()) +
		       " bytes long; a path must be shorter than " + std::to_string(PATH_MAX) +
		       " (PATH_MAX)";
	if (pattern && path.find_first_of("?[]") != std::string::npos)
		return "contains ? [ or ]: a cgroup pattern has only * (within a component) and ** "
		       "(across components)";
	if (!pattern && path.find_first_of("*?[]") != std::string::npos)
		return "contains a glob character (* ? [ ]): rules name one directory, which covers "
		       "its whole subtree; write that directory's path (a [[writer]] may match cgroups "
		       "with cgroup_pattern)";
	std::string norm;
	size_t i = 0;
	while (i < path.size()) {
		while (i < path.size() && path[i] == '/')
			i++;
		const size_t end = path.find('/', i);
		const std::string comp =
			path.substr(i, end == std::string::npos ? std::string::npos : end - i);
		if (comp == "." || comp == "..")
			return "has a \"" + comp + "\" component; write the path without it";
		if (!comp.empty())
			norm += "/" + comp;
		i = end == std::string::npos ? path.size() : end;
	}
	path = norm.empty() ? "/" : norm;
	return {};
}

// A path member, checked and normalised by check_path.
Result<std::string> path_value(const std::string &source, const toml::node &v,
			       const std::string &key, bool pattern = false)
{
	auto s = v.value<std::string>();
	if (!v.is_string() || !s)
		return key_error(source, line_of(v), key, "must be a string (an absolute path)");
	std::string p = *s;
	std::string why = check_path(p, pattern);
	if (!why.empty())
		return key_error(source, line_of(v), key, why);
	return p;
}

Result<uint8_t> class_value(const std::string &source, const toml::node &v, const std::string &key)
{
	auto s = v.value<std::string>();
	auto cls = s ? parse_class(*s) : std::nullopt;
	if (!v.is_string() || !cls)
		return key_error(source, line_of(v), key, kClassHelp);
	return *cls;
}

Result<uint16_t> handle_value(const std::string &source, const toml::node &v,
			      const std::string &key)
{
	auto h = v.value<int64_t>();
	if (!v.is_integer() || !h || *h < 0 || *h > 65535)
		return key_error(source, line_of(v), key,
				 "must be a handle index (an integer 0..nruh-1)");
	return static_cast<uint16_t>(*h);
}

Result<void> parse_placement(const std::string &source, const toml::node &v, PolicyConfig &cfg)
{
	const toml::table *t = v.as_table();
	if (!t)
		return key_error(source, line_of(v), "placement", "must be a table: [placement]");
	for (auto &&[ck, cv] : *t) {
		const std::string cname(ck.str());
		auto cls = parse_class(cname);
		if (!cls)
			return key_error(source, line_of(cv), "placement." + cname, kClassHelp);
		auto h = handle_value(source, cv, "placement." + cname);
		if (!h)
			return std::move(h).error();
		cfg.handle[*cls] = *h;
		cfg.line[*cls] = line_of(cv);
	}
	return ok();
}

Result<void> parse_watch(const std::string &source, const toml::node &v, PolicyConfig &cfg)
{
	const toml::table *t = v.as_table();
	if (!t)
		return key_error(source, line_of(v), "watch", "must be a table: [watch]");
	for (auto &&[wk, wv] : *t) {
		const std::string wname(wk.str());
		if (wname != "dir")
			return key_error(source, line_of(wv), "watch." + wname,
					 "unknown key (known: dir)");
		auto s = wv.value<std::string>();
		if (!wv.is_string() || !s || s->empty() || (*s)[0] != '/')
			return key_error(source, line_of(wv), "watch.dir",
					 "must be an absolute directory path");
		cfg.watch_dir = *s;
	}
	return ok();
}

// A size value: an integer of bytes (0 or more), or a string parse_size reads ("512K", "64MiB").
Result<uint64_t> size_of(const toml::node &v)
{
	if (auto i = v.value<int64_t>(); v.is_integer() && i && *i >= 0)
		return static_cast<uint64_t>(*i);
	if (auto str = v.value<std::string>(); v.is_string() && str)
		return parse_size(*str);
	return make_error(std::errc::invalid_argument, "not a size");
}

// metrics_listen = "127.0.0.1:9477" (top level): the address kvfdpd serves /metrics on.
Result<void> parse_metrics_listen(const std::string &source, const toml::node &v, PolicyConfig &cfg)
{
	auto s = v.value<std::string>();
	if (!v.is_string() || !s || s->empty())
		return key_error(
			source, line_of(v), "metrics_listen",
			"must be a listen address string above the first [table]: \"PORT\" (loopback), "
			"\"HOST:PORT\" or \"[IPV6]:PORT\", e.g. \"127.0.0.1:9477\"");
	cfg.metrics_listen = *s;
	cfg.metrics_listen_line = line_of(v);
	return ok();
}

// twin_memory = "64M" (top level): the live WAF twin's memory bound; 0 runs without it.
Result<void> parse_twin_memory(const std::string &source, const toml::node &v, PolicyConfig &cfg)
{
	Result<uint64_t> n = size_of(v);
	if (!n)
		return key_error(
			source, line_of(v), "twin_memory",
			"must be a size above the first [table], such as \"64M\" or \"256M\" (0: "
			"no twin)");
	cfg.twin_memory = *n;
	cfg.twin_memory_line = line_of(v);
	return ok();
}

// require_tagger = true (top level): refuse to start unplaced.
Result<void> parse_require_tagger(const std::string &source, const toml::node &v, PolicyConfig &cfg)
{
	auto b = v.value<bool>();
	if (!v.is_boolean() || !b)
		return key_error(source, line_of(v), "require_tagger",
				 "must be true or false, above the first [table]");
	cfg.require_tagger = *b;
	cfg.require_tagger_line = line_of(v);
	return ok();
}

// [device] paths = ["/dev/ng0n1", ...], stripe_size = "512K" (or bytes).
Result<void> parse_device(const std::string &source, const toml::node &v, PolicyConfig &cfg)
{
	const toml::table *t = v.as_table();
	if (!t)
		return key_error(source, line_of(v), "device", "must be a table: [device]");
	for (auto &&[dk, dv] : *t) {
		const std::string dname(dk.str());
		if (dname == "paths") {
			const toml::array *a = dv.as_array();
			if (!a || a->empty())
				return key_error(
					source, line_of(dv), "device.paths",
					"must be a list of namespace paths, e.g. [\"/dev/ng0n1\", \"/dev/ng1n1\"]");
			for (size_t i = 0; i < a->size(); i++) {
				auto p = a->get(i)->value<std::string>();
				if (!a->get(i)->is_string() || !p || p->empty() || (*p)[0] != '/')
					return key_error(
						source, line_of(*a->get(i)),
						"device.paths[" + std::to_string(i) + "]",
						"must be an absolute path such as /dev/ng0n1");
				cfg.devices.push_back(*p);
			}
		} else if (dname == "stripe_size") {
			Result<uint64_t> n = size_of(dv);
			if (!n || *n == 0 || *n % 4096)
				return key_error(
					source, line_of(dv), "device.stripe_size",
					"must be a size that is a multiple of 4096 bytes, such as \"512K\" or \"1M\"");
			cfg.stripe_bytes = *n;
		} else {
			return key_error(source, line_of(dv), "device." + dname,
					 "unknown key (known: paths, stripe_size)");
		}
	}
	return ok();
}

Result<void> parse_rules(const std::string &source, const toml::node &v, PolicyConfig &cfg)
{
	const toml::array *a = v.as_array();
	if (!a)
		return key_error(source, line_of(v), "rule",
				 "must be an array of tables: [[rule]]");
	for (size_t i = 0; i < a->size(); i++) {
		const toml::node &rn = *a->get(i);
		const std::string rkey = "rule[" + std::to_string(i) + "]";
		const toml::table *rt = rn.as_table();
		if (!rt)
			return key_error(source, line_of(rn), rkey,
					 "must be a table with path and class");
		DirRule r;
		r.line = line_of(rn);
		bool have_path = false, have_class = false;
		for (auto &&[rk, rv] : *rt) {
			const std::string rname(rk.str());
			if (rname == "path") {
				auto p = path_value(source, rv, rkey + ".path");
				if (!p)
					return std::move(p).error();
				r.path = std::move(*p);
				have_path = true;
			} else if (rname == "class") {
				auto c = class_value(source, rv, rkey + ".class");
				if (!c)
					return std::move(c).error();
				r.cls = *c;
				have_class = true;
			} else {
				return key_error(source, line_of(rv), rkey + "." + rname,
						 "unknown key (known: path, class)");
			}
		}
		if (!have_path)
			return key_error(source, r.line, rkey + ".path", "missing");
		if (!have_class)
			return key_error(source, r.line, rkey + ".class", "missing");
		for (size_t j = 0; j < cfg.rules.size(); j++) {
			const DirRule &o = cfg.rules[j];
			if (o.path == r.path && o.cls != r.cls)
				return key_error(source, r.line, rkey + ".path",
						 r.path + " already has class " +
							 class_name(o.cls) + " (rule[" +
							 std::to_string(j) + "], line " +
							 std::to_string(o.line) +
							 "): give each directory one class");
		}
		cfg.rules.push_back(std::move(r));
	}
	return ok();
}

// Reads one key (k) of the [[writer]] table wkey into w.
Result<void> parse_writer_key(const std::string &source, const std::string &wkey,
			      const std::string &k, const toml::node &wv, WriterRule &w)
{
	if (k == "cgroup" || k == "dir" || k == "cgroup_pattern") {
		auto p = path_value(source, wv, wkey + "." + k, k == "cgroup_pattern");
		if (!p)
			return std::move(p).error();
		(k == "cgroup" ? w.cgroup : k == "dir" ? w.dir : w.cgroup_pattern) = std::move(*p);
	} else if (k == "name") {
		auto s = wv.value<std::string>();
		if (!wv.is_string() || !s || s->empty() || s->size() > 64 ||
		    s->find_first_of("\n\r\t\"") != std::string::npos)
			return key_error(
				source, line_of(wv), wkey + ".name",
				"must be a string of 1-64 characters without quotes or control characters");
		w.name = *s;
	} else if (k == "class") {
		auto c = class_value(source, wv, wkey + ".class");
		if (!c)
			return std::move(c).error();
		w.cls = *c;
	} else if (k == "handle") {
		auto h = handle_value(source, wv, wkey + ".handle");
		if (!h)
			return std::move(h).error();
		w.handle = *h;
	} else {
		return key_error(
			source, line_of(wv), wkey + "." + k,
			"unknown key (known: name, cgroup, cgroup_pattern, dir, class, handle)");
	}
	return ok();
}

// Checks that writer w names what it matches (cgroup, dir, cgroup_pattern) and what it gets
// (class or handle) in one of the allowed combinations.
Result<void> check_writer_keys(const std::string &source, const std::string &wkey,
			       const WriterRule &w)
{
	if (!w.cgroup_pattern.empty() && !w.cgroup.empty())
		return key_error(source, w.line, wkey,
				 "give cgroup (one cgroup) or cgroup_pattern, not both");
	if (w.cgroup_pattern.empty() && w.cgroup.empty() == w.dir.empty())
		return key_error(
			source, w.line, wkey,
			"give exactly one of cgroup (a cgroup path like /kv.slice/vllm.service) "
			"or dir (a directory), or cgroup_pattern (with or without dir)");
	if (w.cls && w.handle)
		return key_error(source, w.line, wkey, "give class or handle, not both");
	return ok();
}

// Checks that no earlier writer matches the same cgroup, dir and pattern as w but gives it
// a different class or handle.
Result<void> check_writer_unique(const std::string &source, const std::string &wkey,
				 const WriterRule &w, const std::vector<WriterRule> &earlier)
{
	for (size_t j = 0; j < earlier.size(); j++) {
		const WriterRule &o = earlier[j];
		if (o.cgroup != w.cgroup || o.dir != w.dir || o.cgroup_pattern != w.cgroup_pattern)
			continue;
		if (o.cls != w.cls || o.handle != w.handle)
			return key_error(
				source, w.line, wkey,
				(!w.cgroup_pattern.empty()
					 ? "cgroup_pattern " + writer_rule_label(w)
				 : w.cgroup.empty() ? "dir " + w.dir
						    : "cgroup " + w.cgroup) +
					" is already writer[" + std::to_string(j) + "] (line " +
					std::to_string(o.line) +
					") with a different class or handle: give each writer one");
	}
	return ok();
}

Result<void> parse_writers(const std::string &source, const toml::node &v, PolicyConfig &cfg)
{
	const toml::array *a = v.as_array();
	if (!a)
		return key_error(source, line_of(v), "writer",
				 "must be an array of tables: [[writer]]");
	for (size_t i = 0; i < a->size(); i++) {
		const toml::node &wn = *a->get(i);
		const std::string wkey = "writer[" + std::to_string(i) + "]";
		const toml::table *wt = wn.as_table();
		if (!wt)
			return key_error(source, line_of(wn), wkey,
					 "must be a table with cgroup or dir");
		WriterRule w;
		w.line = line_of(wn);
		for (auto &&[wk, wv] : *wt)
			KVFDP_TRY(parse_writer_key(source, wkey, std::string(wk.str()), wv, w));
		KVFDP_TRY(check_writer_keys(source, wkey, w));
		if (w.name.empty())
			w.name = writer_rule_label(w);
		KVFDP_TRY(check_writer_unique(source, wkey, w, cfg.writers));
		cfg.writers.push_back(std::move(w));
	}
	return ok();
}

}  // namespace

std::string writer_rule_label(const WriterRule &w)
{
	if (!w.cgroup_pattern.empty())
		return w.dir.empty() ? w.cgroup_pattern : w.cgroup_pattern + "@" + w.dir;
	return w.cgroup.empty() ? w.dir : w.cgroup;
}

Result<PolicyConfig> parse_config(std::string_view text, const std::string &source)
{
	toml::parse_result parsed = toml::parse(text, source);
	if (!parsed) {
		const toml::parse_error &e = parsed.error();
		return plain_error(
			at(source, static_cast<int>(e.source().begin.line)) + ": " +
			std::string(e.description()) +
			" (not valid TOML: fix that line; the example kvfdp.toml shows each key)");
	}
	const toml::table &root = parsed.table();
	PolicyConfig cfg;
	cfg.source = source;
	for (auto &&[k, v] : root) {
		const std::string key(k.str());
		Result<void> r = ok();
		if (key == "placement")
			r = parse_placement(source, v, cfg);
		else if (key == "watch")
			r = parse_watch(source, v, cfg);
		else if (key == "rule")
			r = parse_rules(source, v, cfg);
		else if (key == "writer")
			r = parse_writers(source, v, cfg);
		else if (key == "device")
			r = parse_device(source, v, cfg);
		else if (key == "metrics_listen")
			r = parse_metrics_listen(source, v, cfg);
		else if (key == "require_tagger")
			r = parse_require_tagger(source, v, cfg);
		else if (key == "twin_memory")
			r = parse_twin_memory(source, v, cfg);
		else
			return key_error(
				source, line_of(v), key,
				"unknown table (known: placement, watch, rule, writer, device) or top-level key "
				"(known: metrics_listen, require_tagger, twin_memory)");
		if (!r)
			return std::move(r).error();
	}
	return cfg;
}

Result<PolicyConfig> load_config(const std::string &path, bool missing_ok)
{
	// A regular file of at most 1 MiB: a directory, FIFO or device is refused unread.
	auto text = read_config_file(path);
	if (!text) {
		const bool missing =
			text.error().code == std::error_code(ENOENT, std::system_category());
		if (missing && missing_ok)
			return PolicyConfig{};
		if (missing)
			return errno_error(
				ENOENT,
				"reading config " + path +
					" (pass --config PATH, or copy the example kvfdp.toml there: docs/deploy.md)");
		return std::move(text).error();
	}
	return parse_config(*text, path);
}

}  // namespace kvfdp::placement
