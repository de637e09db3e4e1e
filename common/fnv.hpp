// FNV-1a 64: the one hash of state-file checksums, stripe fingerprints and BPF object identities.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kvfdp {

// The hash of no bytes (FNV-1a 64's offset basis): where a hash starts.
inline constexpr uint64_t kFnv1aBasis = 0xcbf29ce484222325ull;
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ull;

// Folds the bytes of s into h; chain calls (the result as the next h) to hash several pieces.
[[nodiscard]] constexpr uint64_t fnv1a(std::string_view s, uint64_t h = kFnv1aBasis)
{
	for (const char c : s) {
		h ^= static_cast<unsigned char>(c);
		h *= kFnv1aPrime;
	}
	return h;
}

// The same over size raw bytes (a file's or an ELF object's image).
[[nodiscard]] inline uint64_t fnv1a_bytes(const void *bytes, size_t size, uint64_t h = kFnv1aBasis)
{
	return fnv1a(std::string_view(static_cast<const char *>(bytes), size), h);
}

static_assert(fnv1a("") == kFnv1aBasis);
static_assert(fnv1a("a") == 0xaf63dc4c8601ec8cull, "FNV-1a 64 test vector");

}  // namespace kvfdp
