// Lifetime class names.
#include "userspace/daemon/classes.hpp"

#include <array>
#include <cctype>
#include <string>

namespace kvfdp::daemon {

namespace {
constexpr std::array<const char *, kNumClasses> kNames = {"not_set", "none", "short",
							  "medium", "long", "extreme"};
}

const char *class_name(unsigned cls) { return cls < kNumClasses ? kNames[cls] : "?"; }

std::optional<uint8_t> parse_class(std::string_view name)
{
	std::string lower;
	for (char c : name)
		lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	for (unsigned i = 0; i < kNumClasses; i++)
		if (lower == kNames[i])
			return static_cast<uint8_t>(i);
	return std::nullopt;
}

} // namespace kvfdp::daemon
