// Size parsing with exact integer arithmetic (no floating point).
#include "placement/size.hpp"

#include <cctype>
#include <string>

#include "placement/classes.hpp"

namespace kvfdp::placement {

namespace {

// K, KB, KiB (any case) and the same for M, G, T: shift 10, 20, 30, 40. KB is 1024 bytes, as
// kvfdpd's options always read it; there is no decimal kilobyte.
bool binary_suffix(std::string_view s, unsigned &shift)
{
	static constexpr std::string_view kPrefixes = "KMGT";
	if (s.empty() || s.size() > 3)
		return false;
	const size_t p =
		kPrefixes.find(static_cast<char>(std::toupper(static_cast<unsigned char>(s[0]))));
	if (p == std::string_view::npos)
		return false;
	const std::string_view rest = s.substr(1);
	if (!rest.empty() && !iequal(rest, "B") && !iequal(rest, "iB"))
		return false;
	shift = 10 * static_cast<unsigned>(p + 1);
	return true;
}

}  // namespace

Result<uint64_t> parse_size(std::string_view text)
{
	auto bad = [&](const char *why) {
		return guidance_error(
			std::errc::invalid_argument,
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
	else if (!binary_suffix(suffix, shift))
		return bad("unknown suffix");
	const u128 frac_bytes = frac << shift;
	if (frac_bytes % frac_den != 0)
		return bad("not a whole number of bytes");
	const u128 bytes = (whole << shift) + frac_bytes / frac_den;
	if (bytes > UINT64_MAX)
		return bad("too large");
	return static_cast<uint64_t>(bytes);
}

}  // namespace kvfdp::placement
