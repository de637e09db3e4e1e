// Size parsing with exact integer arithmetic (no floating point).
#include "placement/size.hpp"

#include <cctype>
#include <string>

#include "placement/classes.hpp"

namespace kvfdp::placement {

Result<uint64_t> parse_size(std::string_view text)
{
	auto bad = [&](const char *why) {
		return guidance_error(std::errc::invalid_argument,
				      "bad size '" + std::string(text) + "' (" + why +
					      "): give bytes or a number with KiB, MiB, GiB or TiB, "
					      "e.g. 64GiB");
	};
	using u128 = unsigned __int128;
	size_t i = 0;
	u128 whole = 0;
	while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
		whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
		if (whole > UINT64_MAX)
			return bad("too large");
		i++;
	}
	const size_t int_digits = i;
	u128 frac = 0, frac_den = 1;
	if (i < text.size() && text[i] == '.') {
		i++;
		size_t digits = 0;
		while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
			if (++digits > 9)
				return bad("too many decimals");
			frac = frac * 10 + static_cast<unsigned>(text[i] - '0');
			frac_den *= 10;
			i++;
		}
		if (digits == 0)
			return bad("no digits after the point");
	}
	if (int_digits == 0)
		return bad("no number");
	const std::string_view suffix = text.substr(i);
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
	const u128 frac_bytes = frac << shift;
	if (frac_bytes % frac_den != 0)
		return bad("not a whole number of bytes");
	const u128 bytes = (whole << shift) + frac_bytes / frac_den;
	if (bytes > UINT64_MAX)
		return bad("too large");
	return static_cast<uint64_t>(bytes);
}

} // namespace kvfdp::placement
