// The table of KV-cache size presets.
#include "model/workload/presets.hpp"

#include <array>

namespace kvfdp::workload {

namespace {

constexpr std::array kPresets{
	kDefaultPreset,
	// 80 layers, 8 KV heads, 128 dims.
	ModelPreset{"llama-3.1-70b", 2ull * 80 * 8 * 128 * 2},
	// 28 layers, 4 KV heads, 128 dims.
	ModelPreset{"qwen2.5-7b", 2ull * 28 * 4 * 128 * 2},
	// 32 layers, 8 KV heads, 128 dims.
	ModelPreset{"mistral-7b", 2ull * 32 * 8 * 128 * 2},
};

}  // namespace

std::optional<ModelPreset> find_preset(std::string_view name)
{
	for (const auto &p : kPresets)
		if (p.name == name)
			return p;
	return std::nullopt;
}

std::string preset_names()
{
	std::string out;
	for (const auto &p : kPresets) {
		if (!out.empty())
			out += ", ";
		out += p.name;
	}
	return out;
}

}  // namespace kvfdp::workload
