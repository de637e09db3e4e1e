// Normalised cgroup paths, identity strings and cgroup patterns.
#include "common/writer_identity.hpp"

#include <cctype>
#include <vector>

#include "common/fnv.hpp"

namespace kvfdp {
namespace {

bool is_hex(char c)
{
	return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

// Hex digits from i on (at most max).
size_t hex_run(std::string_view s, size_t i, size_t max = std::string_view::npos)
{
	size_t n = 0;
	while (i + n < s.size() && n < max && is_hex(s[i + n]))
		n++;
	return n;
}

size_t digit_run(std::string_view s, size_t i)
{
	size_t n = 0;
	while (i + n < s.size() && is_digit(s[i + n]))
		n++;
	return n;
}

// The length of a pod UID at s[i]: 8-4-4-4-12 hex with '-' or '_' between, or 32 hex; 0 none.
size_t pod_uid_at(std::string_view s, size_t i)
{
	static constexpr size_t kGroups[] = {8, 4, 4, 4, 12};
	size_t at = i;
	for (size_t g = 0; g < 5; g++) {
		if (g > 0) {
			if (at >= s.size() || (s[at] != '-' && s[at] != '_'))
				break;
			at++;
		}
		if (hex_run(s, at, kGroups[g]) != kGroups[g])
			break;
		at += kGroups[g];
		if (g == 4 && hex_run(s, at) == 0)
			return at - i;
	}
	const size_t n = hex_run(s, i);
	return n == 32 ? 32 : 0;
}

// Container ids (maximal runs of exactly 64 hex digits) and pod UIDs become '*'.
std::string star_instances(std::string_view c)
{
	std::string out;
	for (size_t i = 0; i < c.size();) {
		const bool starts_word = i == 0 || !is_hex(c[i - 1]);
		if (starts_word) {
			const size_t n = hex_run(c, i);
			if (n == 64) {
				out += '*';
				i += n;
				continue;
			}
		}
		if (c.compare(i, 3, "pod") == 0) {
			if (const size_t n = pod_uid_at(c, i + 3)) {
				out += "pod*";
				i += 3 + n;
				continue;
			}
		}
		out += c[i++];
	}
	return out;
}

// A systemd transient unit's name with its number starred, or the component as it is.
std::string star_transient(const std::string &c)
{
	const size_t dot = c.rfind('.');
	if (dot == std::string::npos)
		return c;
	const std::string_view name(c.data(), dot);
	const std::string_view suffix(c.data() + dot, c.size() - dot);
	if (suffix != ".scope" && suffix != ".service")
		return c;
	auto all = [&](size_t from, auto pred) {
		if (from >= name.size())
			return false;
		for (size_t i = from; i < name.size(); i++)
			if (!pred(name[i]))
				return false;
		return true;
	};
	if (name.rfind("run-r", 0) == 0 && all(5, is_hex))
		return "run-r*" + std::string(suffix);
	if (name.rfind("run-u", 0) == 0 && all(5, is_digit))
		return "run-u*" + std::string(suffix);
	if (name.rfind("run-p", 0) == 0) {
		const size_t p = digit_run(name, 5);
		if (p && name.compare(5 + p, 2, "-i") == 0 && all(7 + p, is_digit))
			return "run-p*-i*" + std::string(suffix);
	}
	if (suffix == ".scope" && name.rfind("session-", 0) == 0) {
		const size_t from = name.size() > 8 && name[8] == 'c' ? 9 : 8;
		if (all(from, is_digit))
			return "session-*.scope";
	}
	return c;
}

}  // namespace

std::string normalise_cgroup_path(std::string_view path)
{
	std::string out;
	size_t i = 0;
	while (i < path.size()) {
		if (path[i] == '/') {
			out += '/';
			i++;
			continue;
		}
		size_t end = path.find('/', i);
		if (end == std::string_view::npos)
			end = path.size();
		out += star_transient(star_instances(path.substr(i, end - i)));
		i = end;
	}
	return out;
}

std::string writer_identity(std::string_view cgroup_path, std::string_view dir)
{
	std::string s = normalise_cgroup_path(cgroup_path);
	if (!dir.empty()) {
		s += '@';
		s += dir;
	}
	return s;
}

uint64_t identity_hash(std::string_view identity)
{
	return fnv1a(identity);
}

bool cgroup_pattern_matches(std::string_view pattern, std::string_view path)
{
	// m[j]: pattern[0, i) matches path[0, j); one row per pattern position.
	std::vector<char> m(path.size() + 1, 0), next(path.size() + 1, 0);
	m[0] = 1;
	for (size_t i = 0; i < pattern.size();) {
		std::fill(next.begin(), next.end(), 0);
		if (pattern[i] == '*') {
			const bool any = i + 1 < pattern.size() && pattern[i + 1] == '*';
			// A star extends each match over path characters (not '/' for one star).
			char run = 0;
			for (size_t j = 0; j <= path.size(); j++) {
				if (j > 0 && !any && path[j - 1] == '/')
					run = 0;
				run = static_cast<char>(run | m[j]);
				next[j] = run;
			}
			i += any ? 2 : 1;
		} else {
			for (size_t j = 0; j < path.size(); j++)
				next[j + 1] = static_cast<char>(m[j] && path[j] == pattern[i]);
			i++;
		}
		m.swap(next);
	}
	return m[path.size()] != 0;
}

}  // namespace kvfdp
