// CRC32C: slicing-by-8 tables built at compile time, and the SSE4.2 crc32 instruction in three lanes.
#include "kvgpu/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace kvfdp::gpu {
namespace {

// Reflected Castagnoli polynomial.
constexpr uint32_t kPoly = 0x82F63B78u;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables()
{
	Tables t{};
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
		t[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (size_t s = 1; s < 8; s++)
			t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
	return t;
}

constexpr Tables kTables = make_tables();

#if defined(__x86_64__)
// The crc32 instruction has a 3-cycle latency and a 1-cycle throughput: three independent
// lanes of kLane bytes run in parallel, and are then joined with the linear operator that
// advances a CRC register over kLane zero bytes (the register update is linear over GF(2):
// reg(s, A || B) = shift(reg(s, A), |B|) ^ reg(0, B)).
constexpr size_t kLane = 8192;

// A 32x32 GF(2) matrix as its 32 columns: column i is the image of bit i.
using Gf2Matrix = std::array<uint32_t, 32>;

uint32_t gf2_apply(const Gf2Matrix &m, uint32_t v)
{
	uint32_t out = 0;
	for (int i = 0; v; i++, v >>= 1)
		if (v & 1)
			out ^= m[static_cast<size_t>(i)];
	return out;
}

// The operator that advances a register over kLane zero bytes: the one-byte operator (the
// instruction applied to each unit vector), squared log2(kLane) times.
__attribute__((target("sse4.2"))) Gf2Matrix make_lane_shift()
{
	Gf2Matrix m{};
	for (unsigned i = 0; i < 32; i++)
		m[i] = _mm_crc32_u8(1u << i, 0);
	for (size_t len = 1; len < kLane; len *= 2) {
		Gf2Matrix sq{};
		for (size_t i = 0; i < 32; i++)
			sq[i] = gf2_apply(m, m[i]);
		m = sq;
	}
	return m;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const unsigned char *p,
							size_t n)
{
	static const Gf2Matrix kShift = make_lane_shift();
	uint64_t c = ~crc;
	while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
		c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
		n--;
	}
	while (n >= 3 * kLane) {
		uint64_t a = c, b = 0, d = 0;
		for (size_t i = 0; i < kLane; i += 8) {
			uint64_t va, vb, vd;
			std::memcpy(&va, p + i, 8);
			std::memcpy(&vb, p + kLane + i, 8);
			std::memcpy(&vd, p + 2 * kLane + i, 8);
			a = _mm_crc32_u64(a, va);
			b = _mm_crc32_u64(b, vb);
			d = _mm_crc32_u64(d, vd);
		}
		uint32_t ab =
			gf2_apply(kShift, static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b);
		c = gf2_apply(kShift, ab) ^ static_cast<uint32_t>(d);
		p += 3 * kLane;
		n -= 3 * kLane;
	}
	while (n >= 8) {
		uint64_t v;
		std::memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		n -= 8;
	}
	while (n--)
		c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
	return ~static_cast<uint32_t>(c);
}

const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t crc32c_portable(uint32_t crc, const void *data, size_t n) noexcept
{
	const auto *p = static_cast<const unsigned char *>(data);
	uint32_t c = ~crc;
	while (n >= 8) {
		uint32_t lo;
		uint32_t hi;
		std::memcpy(&lo, p, 4);
		std::memcpy(&hi, p + 4, 4);
		lo ^= c;
		c = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^
		    kTables[5][(lo >> 16) & 0xff] ^ kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^
		    kTables[2][(hi >> 8) & 0xff] ^ kTables[1][(hi >> 16) & 0xff] ^
		    kTables[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xff];
	return ~c;
}

uint32_t crc32c(uint32_t crc, const void *data, size_t n) noexcept
{
#if defined(__x86_64__)
	if (kHaveSse42)
		return crc32c_sse42(crc, static_cast<const unsigned char *>(data), n);
#endif
	return crc32c_portable(crc, data, n);
}

}  // namespace kvfdp::gpu
