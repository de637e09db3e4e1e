// 128-bit counters as JSON and as text.
#include "proto/u128_json.hpp"

namespace kvfdp::proto {

std::string u128_text(nvme::u128 v)
{
	if (v == 0)
		return "0";
	std::string digits;
	while (v) {
		digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
		v /= 10;
	}
	return digits;
}

nlohmann::json u128_json(nvme::u128 v)
{
	if (v >> 64)
		return u128_text(v);
	return static_cast<uint64_t>(v);
}

nvme::u128 u128_from_json(const nlohmann::json &j)
{
	if (j.is_number_unsigned())
		return j.get<uint64_t>();
	if (j.is_number_integer())
		return j.get<int64_t>() < 0 ? 0 : static_cast<nvme::u128>(j.get<int64_t>());
	if (!j.is_string())
		return 0;
	const auto &s = j.get_ref<const std::string &>();
	nvme::u128 v = 0;
	for (char ch : s) {
		if (ch < '0' || ch > '9')
			return 0;
		v = v * 10 + static_cast<unsigned>(ch - '0');
	}
	return v;
}

}  // namespace kvfdp::proto
