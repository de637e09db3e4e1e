// Size, number and integer parsing for the simulate options.
#include "tools/sim/parse.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

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
	size_t i = 0;
	while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
		i++;
	auto num = parse_number(s.substr(0, i));
	if (!num || *num <= 0)
		return std::nullopt;
	std::string suf;
	for (char c : s.substr(i))
		suf += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	int shift = -1;
	if (suf.empty() || suf == "b")
		shift = 0;
	else if (suf == "k" || suf == "kib")
		shift = 10;
	else if (suf == "m" || suf == "mib")
		shift = 20;
	else if (suf == "g" || suf == "gib")
		shift = 30;
	else if (suf == "t" || suf == "tib")
		shift = 40;
	if (shift < 0)
		return std::nullopt;
	const double bytes = std::ldexp(*num, shift);
	if (bytes >= 18446744073709551615.0 || bytes != std::floor(bytes))
		return std::nullopt;
	return static_cast<uint64_t>(bytes);
}

} // namespace kvfdp::sim
