// Size parsing and formatting, class names, the default class -> handle map.
#include "tools/cli/units.hpp"

#include <cctype>
#include <cstdio>

namespace kvfdp::cli {

namespace {

constexpr std::array<std::string_view, kClassCount> kClassNames = {
	"not_set", "none", "short", "medium", "long", "extreme"};

bool iequal(std::string_view a, std::string_view b)
{
	if (a.size() != b.size())
		return false;
	for (size_t i = 0; i < a.size(); i++)
		if (std::tolower(static_cast<unsigned char>(a[i])) !=
		    std::tolower(static_cast<unsigned char>(b[i])))
			return false;
	return true;
}

} // namespace

Result<uint64_t> parse_size(std::string_view text)
{
	auto bad = [&](const char *why) {
		return guidance_error(std::errc::invalid_argument,
				      "bad size '" + std::string(text) + "' (" + why +
					      "): give bytes or a number with KiB, MiB, GiB or TiB, "
					      "e.g. 64GiB");
	};
	size_t i = 0;
	uint64_t value = 0;
	while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
		uint64_t d = static_cast<uint64_t>(text[i] - '0');
		if (value > (UINT64_MAX - d) / 10)
			return bad("too large");
		value = value * 10 + d;
		i++;
	}
	if (i == 0)
		return bad("no number");
	std::string_view suffix = text.substr(i);
	unsigned shift = 0;
	if (suffix.empty() || iequal(suffix, "B"))
		shift = 0;
	else if (iequal(suffix, "K") || iequal(suffix, "KiB"))
		shift = 10;
	else if (iequal(suffix, "M") || iequal(suffix, "MiB"))
		shift = 20;
	else if (iequal(suffix, "G") || iequal(suffix, "GiB"))
		shift = 30;
	else if (iequal(suffix, "T") || iequal(suffix, "TiB"))
		shift = 40;
	else
		return bad("unknown suffix");
	if (shift && value > (UINT64_MAX >> shift))
		return bad("too large");
	return value << shift;
}

std::string format_u128(u128 v)
{
	if (v == 0)
		return "0";
	char buf[48];
	int n = 0;
	while (v) {
		buf[n++] = static_cast<char>('0' + static_cast<int>(v % 10));
		v /= 10;
	}
	std::string s;
	while (n)
		s.push_back(buf[--n]);
	return s;
}

std::string format_bytes(u128 bytes)
{
	static constexpr const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (bytes < 1024)
		return format_u128(bytes) + " B";
	long double v = static_cast<long double>(bytes);
	int u = 0;
	while (v >= 1024.0L && u < 6) {
		v /= 1024.0L;
		u++;
	}
	char buf[64];
	std::snprintf(buf, sizeof buf, "%.2Lf %s", v, kUnits[u]);
	return buf;
}

std::string_view class_name(int cls)
{
	if (cls < 0 || cls >= kClassCount)
		return "invalid";
	return kClassNames[static_cast<size_t>(cls)];
}

std::optional<int> parse_class(std::string_view text)
{
	for (int c = 0; c < kClassCount; c++)
		if (iequal(text, kClassNames[static_cast<size_t>(c)]))
			return c;
	if (iequal(text, "not-set") || iequal(text, "notset"))
		return 0;
	if (text.size() == 1 && text[0] >= '0' && text[0] < '0' + kClassCount)
		return text[0] - '0';
	return std::nullopt;
}

std::string class_names_list()
{
	std::string s;
	for (auto n : kClassNames) {
		if (!s.empty())
			s += ", ";
		s += n;
	}
	return s;
}

std::array<int, kClassCount> default_class_map(unsigned nruh)
{
	std::array<int, kClassCount> map{};
	if (nruh == 0) {
		map.fill(-1);
		return map;
	}
	map[0] = map[1] = 0;
	// SHORT..EXTREME (4 classes) over handles 1..nruh-1; neighbours share when fewer.
	unsigned placed = nruh - 1;
	for (int k = 0; k < 4; k++) {
		int cls = 2 + k;
		if (placed == 0)
			map[static_cast<size_t>(cls)] = 0;
		else if (placed >= 4)
			map[static_cast<size_t>(cls)] = 1 + k;
		else
			map[static_cast<size_t>(cls)] =
				1 + static_cast<int>(static_cast<unsigned>(k) * placed / 4);
	}
	return map;
}

std::vector<int> classes_on_handle(const std::array<int, kClassCount> &map, int handle)
{
	std::vector<int> out;
	for (int c = 0; c < kClassCount; c++)
		if (map[static_cast<size_t>(c)] == handle)
			out.push_back(c);
	return out;
}

} // namespace kvfdp::cli
