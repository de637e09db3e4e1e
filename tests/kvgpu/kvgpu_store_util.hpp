// Helpers of the bounded-store tests: payloads that verify themselves from their key, on-disk
// accounting of a store directory, store options.
#pragma once

#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/kvgpu.h"
#include "kvgpu/store_index.hpp"
#include "tests/kvgpu/kvgpu_test_util.hpp"

namespace kvfdp::gpu::test {

// Host-engine options of a bounded store; small slots so tiny chunks still pipeline.
inline kvgpu_options store_options(uint64_t capacity, uint32_t policy = KVGPU_EVICT_FIFO,
				   uint32_t slot_bytes = 64 * 1024, uint32_t slots = 4)
{
	kvgpu_options o = engine_options(KVGPU_ENGINE_HOST, slot_bytes, slots);
	o.capacity_bytes = capacity;
	o.evict_policy = policy;
	return o;
}

// A payload fixed by key and length: any surviving chunk can be verified from its key alone.
inline std::vector<unsigned char> key_payload(const std::string &key, size_t n)
{
	return pattern(n, hash64(key, 77) ^ n);
}

// Sum of the sizes of the chunk files (k-*, h-*) in dir, and how many there are; the same for
// evicted chunks still waiting for the reclaimer's unlink (.kvgpu-dead-*).
struct DiskUse {
	uint64_t bytes = 0;
	uint64_t files = 0;
	uint64_t dead_bytes = 0;
	uint64_t dead_files = 0;
};
inline DiskUse disk_use(const std::string &dir)
{
	DiskUse u;
	DIR *d = ::opendir(dir.c_str());
	if (!d)
		return u;
	while (dirent *e = ::readdir(d)) {
		const char *n = e->d_name;
		bool dead = std::strncmp(n, kDeadPrefix, sizeof(kDeadPrefix) - 1) == 0;
		struct stat st {};
		if ((dead || ((n[0] == 'k' || n[0] == 'h') && n[1] == '-')) &&
		    ::stat((dir + "/" + n).c_str(), &st) == 0) {
			(dead ? u.dead_bytes : u.bytes) += uint64_t(st.st_size);
			(dead ? u.dead_files : u.files)++;
		}
	}
	::closedir(d);
	return u;
}

inline kvgpu_stats_t stats_of(kvgpu_ctx *c)
{
	kvgpu_stats_t s{};
	kvgpu_stats(c, &s);
	return s;
}

// Puts key with its key_payload of n bytes; returns kvgpu's code.
inline int put_key(kvgpu_ctx *c, const std::string &key, size_t n,
		   int lifetime = KVGPU_LIFETIME_SHORT)
{
	auto v = key_payload(key, n);
	int64_t t = kvgpu_evict(c, v.data(), v.size(), key.c_str(), lifetime, nullptr);
	return t < 0 ? int(t) : kvgpu_wait(c, t);
}

// Loads key and compares it with its key_payload: 1 equal, 0 different, or kvgpu's error.
inline int verify_key(kvgpu_ctx *c, const std::string &key)
{
	int64_t n = kvgpu_lookup(c, key.c_str());
	if (n < 0)
		return int(n);
	std::vector<unsigned char> got(static_cast<size_t>(n));
	int64_t r = kvgpu_load(c, key.c_str(), got.data(), got.size(), nullptr);
	if (r < 0)
		return int(r);
	return r == n && got == key_payload(key, size_t(n)) ? 1 : 0;
}

}  // namespace kvfdp::gpu::test
