// Lifetime class names and parsing: the F_SET_RW_HINT values of bpf/tag.h, the one copy
// every binary (kvfdpd, kvfdp, the simulator) uses. Header-only: kvfdp_proto uses it without
// kvfdp_placement.
#pragma once

#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bpf/tag.h"

namespace kvfdp::placement {

inline constexpr unsigned kNumClasses = KVFDP_NR_CLASSES;

inline constexpr std::array<const char *, kNumClasses> kClassNames = {"not_set", "none", "short",
								      "medium",  "long", "extreme"};

// ASCII case-insensitive equality (class names, size suffixes).
[[nodiscard]] inline bool iequal(std::string_view a, std::string_view b)
{
	if (a.size() != b.size())
		return false;
	for (size_t i = 0; i < a.size(); i++)
		if (std::tolower(static_cast<unsigned char>(a[i])) !=
		    std::tolower(static_cast<unsigned char>(b[i])))
			return false;
	return true;
}

// "not_set", "none", "short", "medium", "long", "extreme"; "?" out of range.
[[nodiscard]] inline const char *class_name(unsigned cls)
{
	return cls < kNumClasses ? kClassNames[cls] : "?";
}

// Accepts the names above in any case, "not-set"/"notset", and the numbers 0..5;
// nullopt for anything else.
[[nodiscard]] inline std::optional<uint8_t> parse_class(std::string_view text)
{
	for (unsigned i = 0; i < kNumClasses; i++)
		if (iequal(text, kClassNames[i]))
			return static_cast<uint8_t>(i);
	if (iequal(text, "not-set") || iequal(text, "notset"))
		return uint8_t{KVFDP_CLASS_NOT_SET};
	if (text.size() == 1 && text[0] >= '0' && text[0] < static_cast<char>('0' + kNumClasses))
		return static_cast<uint8_t>(text[0] - '0');
	return std::nullopt;
}

// "not_set, none, short, medium, long, extreme": for error messages and help.
[[nodiscard]] inline std::string class_names_list()
{
	std::string s;
	for (const char *n : kClassNames) {
		if (!s.empty())
			s += ", ";
		s += n;
	}
	return s;
}

}  // namespace kvfdp::placement
