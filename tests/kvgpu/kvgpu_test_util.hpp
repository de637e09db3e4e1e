// Helpers shared by the kvgpu tests and benches: temp dirs, patterned buffers, fs names.
#pragma once

#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kvgpu/kvgpu.h"
#include "tests/support/temp_files.hpp"

namespace kvfdp::gpu::test {

// tests/support's TempDir, under /var/tmp unless a test names another base (kvgpu's files
// want O_DIRECT, which tmpfs refuses); a base mkdtemp refuses leaves ok() false.
struct TempDir : kvfdp::test::TempDir {
	explicit TempDir(const std::string &base = "/var/tmp")
	    : kvfdp::test::TempDir(base, MayFail{})
	{
	}
};

inline uint64_t splitmix(uint64_t &s)
{
	uint64_t z = (s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// Fills n bytes with a stream determined by seed.
inline void fill_pattern(void *p, size_t n, uint64_t seed)
{
	auto *b = static_cast<unsigned char *>(p);
	uint64_t s = seed;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = splitmix(s);
		std::memcpy(b + i, &v, 8);
	}
	uint64_t v = splitmix(s);
	std::memcpy(b + i, &v, n - i);
}

inline std::vector<unsigned char> pattern(size_t n, uint64_t seed)
{
	std::vector<unsigned char> v(n);
	fill_pattern(v.data(), n, seed);
	return v;
}

// The filesystem type of path, as a name ("ext4", "tmpfs", "xfs", or the magic in hex).
inline std::string fs_name(const std::string &path)
{
	struct statfs st {};
	if (::statfs(path.c_str(), &st) != 0)
		return "unknown";
	switch (static_cast<unsigned long>(st.f_type)) {
	case 0xEF53: return "ext4";
	case 0x01021994: return "tmpfs";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x794c7630: return "overlayfs";
	default: {
		char buf[32];
		std::snprintf(buf, sizeof(buf), "0x%lx", static_cast<unsigned long>(st.f_type));
		return buf;
	}
	}
}

inline uint64_t file_size(const std::string &path)
{
	struct stat st {};
	return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

// Options for one engine; slot_bytes/slots 0 keep the defaults.
inline kvgpu_options engine_options(kvgpu_engine engine, uint32_t slot_bytes = 0,
				    uint32_t slots = 0)
{
	kvgpu_options o;
	kvgpu_options_init(&o);
	o.engine = engine;
	if (slot_bytes)
		o.slot_bytes = slot_bytes;
	if (slots)
		o.slots = slots;
	return o;
}

// A store opened on dir (rc is kvgpu_open's code; c is null when it failed), closed at scope end.
struct Ctx {
	kvgpu_ctx *c = nullptr;
	int rc = 0;
	Ctx(const std::string &dir, const kvgpu_options &o)
	{
		rc = kvgpu_open(dir.c_str(), &o, &c);
	}
	~Ctx() { kvgpu_close(c); }
	Ctx(const Ctx &) = delete;
	Ctx &operator=(const Ctx &) = delete;
};

}  // namespace kvfdp::gpu::test
