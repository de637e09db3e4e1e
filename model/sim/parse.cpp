// Size, number and integer parsing for the simulate options.
#include "model/sim/parse.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "placement/size.hpp"

namespace kvfdp::sim {

std::optional<double> parse_number(std::string_view s)
{
	if (s.empty() || std::isspace(static_cast<unsigned char>(s.front())))
		return std::nullopt;
	std::string str(s);
	char *end = nullptr;
	const double v = std::strtod(str.c_str(), &end);
	if (end != str.c_str() + str.size() || !std::isfinite(v))
		return std::nullopt;
	return v;
}

std::optional<uint64_t> parse_uint(std::string_view s)
{
	uint64_t v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || p != s.data() + s.size() || s.empty())
		return std::nullopt;
	return v;
}

std::optional<uint64_t> parse_size(std::string_view s)
{
	auto r = placement::parse_size(s);
	if (!r || *r == 0)
		return std::nullopt;
	return *r;
}

}  // namespace kvfdp::sim
