// Policy config parsing with toml++ (no exceptions: parse_result).
// The packaged libtomlplusplus is built with exceptions; kvfdp parses without them, so this
// file compiles toml++ header-only in its no-exceptions ABI namespace (toml::noex).
#undef TOML_HEADER_ONLY
#undef TOML_SHARED_LIB
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include "userspace/daemon/config.hpp"

#include <fstream>
#include <sstream>
#include <toml++/toml.h>

namespace kvfdp::daemon {

namespace {

int line_of(const toml::node &n) { return static_cast<int>(n.source().begin.line); }

Error key_error(const std::string &source, int line, const std::string &key, const std::string &what)
{
	std::string s = source.empty() ? "config" : source;
	if (line > 0)
		s += ":" + std::to_string(line);
	return plain_error(s + ": " + key + ": " + what);
}

} // namespace

Result<PolicyConfig> parse_config(std::string_view text, const std::string &source)
{
	toml::parse_result parsed = toml::parse(text, source);
	if (!parsed) {
		const toml::parse_error &e = parsed.error();
		return plain_error(
				  (source.empty() ? std::string("config") : source) + ":" +
					  std::to_string(e.source().begin.line) + ": " + std::string(e.description()) +
				  " (not valid TOML: fix that line; the example kvfdp.toml shows each key)");
	}
	const toml::table &root = parsed.table();
	PolicyConfig cfg;
	cfg.source = source;
	for (auto &&[k, v] : root) {
		const std::string key(k.str());
		if (key == "placement") {
			const toml::table *t = v.as_table();
			if (!t)
				return key_error(source, line_of(v), key, "must be a table: [placement]");
			for (auto &&[ck, cv] : *t) {
				const std::string cname(ck.str());
				auto cls = parse_class(cname);
				if (!cls)
					return key_error(source, line_of(cv), "placement." + cname,
							 "unknown class (use not_set, none, short, medium, long, extreme)");
				auto h = cv.value<int64_t>();
				if (!cv.is_integer() || !h || *h < 0 || *h > 65535)
					return key_error(source, line_of(cv), "placement." + cname,
							 "must be a handle index (an integer 0..nruh-1)");
				cfg.handle[*cls] = static_cast<uint16_t>(*h);
				cfg.line[*cls] = line_of(cv);
			}
		} else if (key == "watch") {
			const toml::table *t = v.as_table();
			if (!t)
				return key_error(source, line_of(v), key, "must be a table: [watch]");
			for (auto &&[wk, wv] : *t) {
				const std::string wname(wk.str());
				if (wname != "dir")
					return key_error(source, line_of(wv), "watch." + wname, "unknown key (known: dir)");
				auto s = wv.value<std::string>();
				if (!wv.is_string() || !s || s->empty() || (*s)[0] != '/')
					return key_error(source, line_of(wv), "watch.dir", "must be an absolute directory path");
				cfg.watch_dir = *s;
			}
		} else if (key == "rule") {
			const toml::array *a = v.as_array();
			if (!a)
				return key_error(source, line_of(v), key, "must be an array of tables: [[rule]]");
			for (size_t i = 0; i < a->size(); i++) {
				const toml::node &rn = *a->get(i);
				const std::string rkey = "rule[" + std::to_string(i) + "]";
				const toml::table *rt = rn.as_table();
				if (!rt)
					return key_error(source, line_of(rn), rkey, "must be a table with path and class");
				DirRule r;
				r.line = line_of(rn);
				bool have_path = false, have_class = false;
				for (auto &&[rk, rv] : *rt) {
					const std::string rname(rk.str());
					if (rname == "path") {
						auto s = rv.value<std::string>();
						if (!rv.is_string() || !s || s->empty() || (*s)[0] != '/')
							return key_error(source, line_of(rv), rkey + ".path",
									 "must be an absolute directory path");
						r.path = *s;
						have_path = true;
					} else if (rname == "class") {
						auto s = rv.value<std::string>();
						auto cls = s ? parse_class(*s) : std::nullopt;
						if (!rv.is_string() || !cls)
							return key_error(source, line_of(rv), rkey + ".class",
									 "unknown class (use not_set, none, short, medium, long, extreme)");
						r.cls = *cls;
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
				cfg.rules.push_back(std::move(r));
			}
		} else {
			return key_error(source, line_of(v), key, "unknown table (known: placement, watch, rule)");
		}
	}
	return cfg;
}

Result<PolicyConfig> load_config(const std::string &path, bool missing_ok)
{
	std::ifstream in(path);
	if (!in) {
		if (missing_ok && errno == ENOENT)
			return PolicyConfig{};
		return errno_error(errno ? errno : ENOENT,
				   "reading config " + path + " (pass --config PATH, or copy the example kvfdp.toml there: docs/deploy.md)");
	}
	std::stringstream ss;
	ss << in.rdbuf();
	return parse_config(ss.str(), path);
}

} // namespace kvfdp::daemon
