// KV-cache size presets: bytes of KV per token for common models (bf16, 2 × layers ×
// KV heads × head dim × 2 bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvfdp::workload {

struct ModelPreset {
	std::string_view name;
	uint64_t bytes_per_token;
};

// Llama-3.1-8B: 32 layers, 8 KV heads (GQA), 128 dims: 128 KiB per token.
inline constexpr ModelPreset kDefaultPreset{"llama-3.1-8b", 2ull * 32 * 8 * 128 * 2};

// Looks a preset up by name (case-sensitive).
[[nodiscard]] std::optional<ModelPreset> find_preset(std::string_view name);
// The preset names, comma-separated, for help and error text.
[[nodiscard]] std::string preset_names();

}  // namespace kvfdp::workload
