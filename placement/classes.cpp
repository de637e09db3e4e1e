// Lifetime class names.
#include "placement/classes.hpp"

#include <array>
#include <cctype>

namespace kvfdp::placement {

namespace {

constexpr std::array<const char *, kNumClasses> kNames = {"not_set", "none", "short",
							  "medium",  "long", "extreme"};

}  // namespace

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

const char *class_name(unsigned cls)
{
	return cls < kNumClasses ? kNames[cls] : "?";
}

std::optional<uint8_t> parse_class(std::string_view text)
{
	for (unsigned i = 0; i < kNumClasses; i++)
		if (iequal(text, kNames[i]))
			return static_cast<uint8_t>(i);
	if (iequal(text, "not-set") || iequal(text, "notset"))
		return uint8_t{KVFDP_CLASS_NOT_SET};
	if (text.size() == 1 && text[0] >= '0' && text[0] < static_cast<char>('0' + kNumClasses))
		return static_cast<uint8_t>(text[0] - '0');
	return std::nullopt;
}

std::string class_names_list()
{
	std::string s;
	for (const char *n : kNames) {
		if (!s.empty())
			s += ", ";
		s += n;
	}
	return s;
}

}  // namespace kvfdp::placement
