// Byte formatting; sizes, class names and the default map come from the placement library.
#include "cli/units.hpp"

#include <cstdio>

#include "placement/classes.hpp"
#include "placement/handle_map.hpp"
#include "placement/size.hpp"
#include "proto/u128_json.hpp"

namespace kvfdp::cli {

Result<uint64_t> parse_size(std::string_view text)
{
	return placement::parse_size(text);
}

std::string format_seconds(double s)
{
	char buf[32];
	if (s < 120)
		std::snprintf(buf, sizeof buf, "%.1fs", s);
	else if (s < 7200)
		std::snprintf(buf, sizeof buf, "%.1fm", s / 60);
	else if (s < 172800)
		std::snprintf(buf, sizeof buf, "%.1fh", s / 3600);
	else
		std::snprintf(buf, sizeof buf, "%.1fd", s / 86400);
	return buf;
}

std::string format_u128(u128 v)
{
	return proto::u128_text(v);
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
	return placement::class_name(static_cast<unsigned>(cls));
}

std::optional<int> parse_class(std::string_view text)
{
	auto c = placement::parse_class(text);
	return c ? std::optional<int>(*c) : std::nullopt;
}

std::string class_names_list()
{
	return placement::class_names_list();
}

std::array<int, kClassCount> default_class_map(unsigned nruh)
{
	std::array<int, kClassCount> map{};
	if (nruh == 0) {
		map.fill(-1);
		return map;
	}
	const auto m = placement::default_map(static_cast<uint16_t>(
		nruh > placement::kMaxHandles ? placement::kMaxHandles : nruh));
	for (size_t c = 0; c < map.size(); c++)
		map[c] = m[c];
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

}  // namespace kvfdp::cli
