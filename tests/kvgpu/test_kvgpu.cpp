// libkvgpu on the host path: format, round trips, threads, hints, crash safety, bad input.
#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bpf/tag.h"
#include "kvgpu/chunk_format.hpp"
#include "kvgpu/crc32c.hpp"
#include "kvgpu/kvgpu.h"
#include "kvgpu/kvgpu.hpp"
#include "tests/kvgpu/kvgpu_kill_util.hpp"
#include "tests/kvgpu/kvgpu_test_util.hpp"
#include "tests/support/skip.hpp"

using namespace kvfdp::gpu;
using kvfdp::gpu::test::fork_kill_after;
using kvfdp::gpu::test::TempDir;

namespace {

kvgpu_options host_options(uint32_t slot_bytes = 0, uint32_t slots = 0)
{
	return test::engine_options(KVGPU_ENGINE_HOST, slot_bytes, slots);
}

using test::Ctx;

int put(kvgpu_ctx *c, const std::vector<unsigned char> &v, const std::string &key, int lifetime = 2)
{
	int64_t t = kvgpu_evict(c, v.data(), v.size(), key.c_str(), lifetime, nullptr);
	if (t < 0)
		return static_cast<int>(t);
	return kvgpu_wait(c, t);
}

std::vector<std::string> temp_files(const std::string &dir)
{
	std::vector<std::string> out;
	DIR *d = ::opendir(dir.c_str());
	if (!d)
		return out;
	while (dirent *e = ::readdir(d))
		if (std::strncmp(e->d_name, ".tmp-", 5) == 0)
			out.emplace_back(e->d_name);
	::closedir(d);
	return out;
}

// Payloads that describe themselves: the first 8 bytes are the seed, the length follows from it.
size_t self_len(uint64_t seed)
{
	return (4u << 20) + 1 + (seed * 2654435761u) % (12u << 20);
}
std::vector<unsigned char> self_payload(uint64_t seed)
{
	auto v = test::pattern(self_len(seed), seed);
	if (v.size() >= 8)
		std::memcpy(v.data(), &seed, 8);
	return v;
}
bool self_valid(const std::vector<unsigned char> &v, size_t n)
{
	if (n < 8)
		return false;
	uint64_t seed;
	std::memcpy(&seed, v.data(), 8);
	if (n != self_len(seed))
		return false;
	auto want = self_payload(seed);
	return std::memcmp(want.data(), v.data(), n) == 0;
}

}  // namespace

TEST_CASE("kvgpu: crc32c matches the Castagnoli check value and the portable version")
{
	const char *check = "123456789";
	CHECK(crc32c(0, check, 9) == 0xE3069283u);
	CHECK(crc32c_portable(0, check, 9) == 0xE3069283u);
	auto buf = test::pattern(100003, 7);
	uint32_t whole = crc32c_portable(0, buf.data(), buf.size());
	CHECK(crc32c(0, buf.data(), buf.size()) == whole);
	// Split at odd points and chained: same value.
	uint32_t c = crc32c(0, buf.data(), 13);
	c = crc32c(c, buf.data() + 13, 4096);
	c = crc32c(c, buf.data() + 13 + 4096, buf.size() - 13 - 4096);
	CHECK(c == whole);
	// Lengths around the three-lane blocks (3 x 8 KiB) at unaligned starts, chained at odd points.
	auto big = test::pattern((1u << 20) + 77, 11);
	for (size_t start : {size_t(0), size_t(1), size_t(5)})
		for (size_t n : {size_t(24575), size_t(24576), size_t(24577), size_t(49152 + 9),
				 size_t(1u << 20)}) {
			uint32_t want = crc32c_portable(0, big.data() + start, n);
			CHECK_MESSAGE(crc32c(0, big.data() + start, n) == want, start << "+" << n);
			uint32_t chained = crc32c(crc32c(0, big.data() + start, n / 3),
						  big.data() + start + n / 3, n - n / 3);
			CHECK_MESSAGE(chained == want, start << "+" << n << " chained");
		}
}

TEST_CASE("kvgpu: key names never escape the directory and long keys hash")
{
	CHECK(key_to_name("abc_DEF-09") == "k-abc_DEF-09");
	CHECK(key_to_name("../etc/passwd") == "k-%2e%2e%2fetc%2fpasswd");
	CHECK(key_to_name(".") == "k-%2e");
	CHECK(key_to_name("a b") != key_to_name("a%20b"));
	std::string long_key(300, 'x');
	std::string h = key_to_name(long_key);
	CHECK(h.substr(0, 2) == "h-");
	CHECK(h.size() == 34);
	std::string other = long_key;
	other[299] = 'y';
	CHECK(key_to_name(other) != h);
	for (const std::string &k : {std::string("a/b"), std::string("\x01\xff"), long_key})
		CHECK(key_to_name(k).find('/') == std::string::npos);
	CHECK(temp_name_pid(temp_name(1234, 5)) == 1234);
	CHECK(temp_name_pid("k-tmp-1-2") == -1);
	CHECK(temp_name_pid(".tmp-x-1") == -1);
}

TEST_CASE("kvgpu: the header round-trips and rejects damage and other keys")
{
	alignas(4096) unsigned char block[kBlock];
	encode_header(block, "key1", 4097, 3, true, 0xdeadbeef, 42);
	ChunkHeader h{};
	REQUIRE(decode_header(block, "key1", &h) == 0);
	CHECK(h.payload_bytes == 4097);
	CHECK(h.lifetime == 3);
	CHECK(h.payload_crc == 0xdeadbeef);
	CHECK(decode_header(block, "key2", &h) == -ENOENT);
	block[20] ^= 1;
	CHECK(decode_header(block, "key1", &h) == -EBADMSG);
	CHECK(file_bytes(1) == 8192);
	CHECK(file_bytes(4096) == 8192);
	CHECK(file_bytes(4097) == 12288);
}

TEST_CASE("kvgpu: round trips of many sizes, through a large and a tiny staging ring")
{
	TempDir dir;
	REQUIRE(dir.ok());
	MESSAGE("test dir " << dir.path << " on " << test::fs_name(dir.path));
	const std::vector<size_t> sizes = {1,
					   2,
					   511,
					   4095,
					   4096,
					   4097,
					   65535,
					   65536,
					   65537,
					   131072 + 7,
					   (1u << 20) + 3,
					   4u << 20,
					   (4u << 20) + 1,
					   (9u << 20) + 4095};
	for (uint32_t slot : {0u, 65536u}) {
		for (uint32_t checksum : {1u, 0u}) {
			kvgpu_options o = host_options(slot, slot ? 2 : 0);
			o.checksum = checksum;
			Ctx c(dir.path, o);
			REQUIRE(c.rc == 0);
			for (size_t n : sizes) {
				CAPTURE(n);
				CAPTURE(slot);
				std::string key = "size-" + std::to_string(n);
				auto v = test::pattern(n, n * 31 + slot + checksum);
				REQUIRE(put(c.c, v, key) == 0);
				CHECK(test::file_size(dir.path + "/" + key_to_name(key)) ==
				      file_bytes(n));
				CHECK(kvgpu_lookup(c.c, key.c_str()) == int64_t(n));
				std::vector<unsigned char> got(n + 100, 0xAA);
				REQUIRE(kvgpu_load(c.c, key.c_str(), got.data(), got.size(),
						   nullptr) == int64_t(n));
				CHECK(std::memcmp(got.data(), v.data(), n) == 0);
				// Bytes past the chunk in the destination stay untouched.
				CHECK(got[n] == 0xAA);
				std::vector<unsigned char> exact(n);
				CHECK(kvgpu_load(c.c, key.c_str(), exact.data(), n, nullptr) ==
				      int64_t(n));
				CHECK(exact == v);
			}
			kvgpu_stats_t s{};
			REQUIRE(kvgpu_stats(c.c, &s) == 0);
			CHECK(s.evicts == sizes.size());
			CHECK(s.loads == 2 * sizes.size());
			CHECK(s.engine == KVGPU_ENGINE_HOST);
			CHECK(s.evict_errors == 0);
			if (slot)
				CHECK(s.max_copies_in_flight <= 2);
		}
	}
}

TEST_CASE("kvgpu: concurrent evicts from four threads all land intact")
{
	TempDir dir;
	REQUIRE(dir.ok());
	Ctx c(dir.path, host_options(256 * 1024, 4));
	REQUIRE(c.rc == 0);
	constexpr int kThreads = 4;
	constexpr int kPer = 12;
	std::atomic<int> failures{0};
	std::vector<std::thread> threads;
	for (int t = 0; t < kThreads; t++) {
		threads.emplace_back([&, t] {
			std::vector<std::vector<unsigned char>> bufs;
			std::vector<int64_t> tickets;
			for (int i = 0; i < kPer; i++) {
				uint64_t seed = uint64_t(t) * 1000 + uint64_t(i);
				bufs.push_back(test::pattern(1 + (seed * 7919) % 700000, seed));
			}
			for (int i = 0; i < kPer; i++) {
				std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
				tickets.push_back(kvgpu_evict(c.c, bufs[size_t(i)].data(),
							      bufs[size_t(i)].size(), key.c_str(),
							      1 + i % 5, nullptr));
			}
			for (int64_t tk : tickets)
				if (tk <= 0 || kvgpu_wait(c.c, tk) != 0)
					failures++;
		});
	}
	for (auto &th : threads)
		th.join();
	CHECK(failures == 0);
	for (int t = 0; t < kThreads; t++) {
		for (int i = 0; i < kPer; i++) {
			uint64_t seed = uint64_t(t) * 1000 + uint64_t(i);
			auto want = test::pattern(1 + (seed * 7919) % 700000, seed);
			std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
			std::vector<unsigned char> got(want.size());
			CHECK(kvgpu_load(c.c, key.c_str(), got.data(), got.size(), nullptr) ==
			      int64_t(want.size()));
			CHECK(got == want);
		}
	}
	kvgpu_stats_t s{};
	kvgpu_stats(c.c, &s);
	CHECK(s.evicts == kThreads * kPer);
	// The pipeline overlapped: more than one io_uring op or copy was in flight at some point.
	CHECK(s.max_io_in_flight + s.max_copies_in_flight > 2);
	MESSAGE("max io in flight " << s.max_io_in_flight << ", max copies "
				    << s.max_copies_in_flight);
}

TEST_CASE("kvgpu: each chunk file carries its lifetime as the write hint (F_GET_RW_HINT)")
{
	for (const char *base : {"/var/tmp", "/dev/shm"}) {
		TempDir dir(base);
		if (!dir.ok())
			continue;
		MESSAGE("hint check on " << dir.path << " (" << test::fs_name(dir.path) << ")");
		Ctx c(dir.path, host_options());
		REQUIRE(c.rc == 0);
		for (int life = KVGPU_LIFETIME_NOT_SET; life <= KVGPU_LIFETIME_EXTREME; life++) {
			std::string key = "life" + std::to_string(life);
			REQUIRE(put(c.c, test::pattern(10000, uint64_t(life)), key, life) == 0);
			int fd = ::open((dir.path + "/" + key_to_name(key)).c_str(),
					O_RDONLY | O_CLOEXEC);
			REQUIRE(fd >= 0);
			uint64_t hint = 99;
			REQUIRE(::fcntl(fd, KVFDP_F_GET_RW_HINT, &hint) == 0);
			CHECK(hint == uint64_t(life));
			::close(fd);
		}
		kvgpu_stats_t s{};
		kvgpu_stats(c.c, &s);
		CHECK(s.hint_failures == 0);
	}
}

TEST_CASE("kvgpu: O_DIRECT is used where the filesystem takes it (tmpfs: either way, reported)")
{
	TempDir disk;
	REQUIRE(disk.ok());
	kvgpu_options on = host_options();
	on.direct_io = KVGPU_DIRECT_ON;
	// tmpfs accepts O_DIRECT from Linux 6.6 (and refuses it before): report which.
	{
		TempDir shm("/dev/shm");
		REQUIRE(shm.ok());
		Ctx c(shm.path, host_options());
		REQUIRE(c.rc == 0);
		REQUIRE(put(c.c, test::pattern(5000, 1), "x") == 0);
		kvgpu_stats_t s{};
		kvgpu_stats(c.c, &s);
		MESSAGE("tmpfs /dev/shm: O_DIRECT "
			<< std::string(s.direct_io ? "accepted" : "refused, buffered fallback"));
		CHECK(s.direct_files + s.buffered_files == 1);
		CHECK(s.direct_files == uint64_t(s.direct_io));
	}
	if (test::fs_name(disk.path) == "ext4" || test::fs_name(disk.path) == "xfs") {
		Ctx d(disk.path, on);
		REQUIRE(d.rc == 0);
		REQUIRE(put(d.c, test::pattern(5000, 1), "x") == 0);
		kvgpu_stats_t s{};
		kvgpu_stats(d.c, &s);
		CHECK(s.direct_io == 1);
		CHECK(s.direct_files == 1);
	}
}

// ramfs has no direct I/O at all: open(O_DIRECT) fails with EINVAL. Mounting it needs root
// (decided before any case runs: without root the executable exits 77, "SKIP: root: ...").
TEST_CASE("kvgpu: on ramfs, which refuses O_DIRECT, the store is buffered and a strict open fails" *
	  kvfdp::test::case_requires("root", kvfdp::test::probe_root("mounting ramfs")))
{
	kvgpu_options on = host_options();
	on.direct_io = KVGPU_DIRECT_ON;
	TempDir mnt;
	REQUIRE(mnt.ok());
	REQUIRE_MESSAGE(::mount("kvgpu-ramfs", mnt.path.c_str(), "ramfs", 0, nullptr) == 0,
			"mount -t ramfs on " << mnt.path << ": " << std::strerror(errno));
	{
		Ctx c(mnt.path, host_options());
		REQUIRE(c.rc == 0);
		auto v = test::pattern(5000, 1);
		REQUIRE(put(c.c, v, "x") == 0);
		std::vector<unsigned char> got(5000);
		CHECK(kvgpu_load(c.c, "x", got.data(), got.size(), nullptr) == 5000);
		CHECK(got == v);
		kvgpu_stats_t s{};
		kvgpu_stats(c.c, &s);
		CHECK(s.direct_io == 0);
		CHECK(s.buffered_files == 2);
		CHECK(s.direct_files == 0);
		kvgpu_ctx *strict = nullptr;
		CHECK(kvgpu_open(mnt.path.c_str(), &on, &strict) == KVGPU_ERR_DIRECT);
		CHECK(strict == nullptr);
	}
	CHECK(::umount2(mnt.path.c_str(), MNT_DETACH) == 0);
}

TEST_CASE("kvgpu: replace, remove, lookup, durable mode and wait-all")
{
	TempDir dir;
	REQUIRE(dir.ok());
	kvgpu_options o = host_options();
	o.durability = KVGPU_DURABLE_FSYNC;
	Ctx c(dir.path, o);
	REQUIRE(c.rc == 0);
	auto a = test::pattern(10000, 1);
	auto b = test::pattern(7000, 2);
	REQUIRE(put(c.c, a, "same") == 0);
	REQUIRE(put(c.c, b, "same") == 0);
	CHECK(kvgpu_lookup(c.c, "same") == 7000);
	std::vector<unsigned char> got(10000);
	CHECK(kvgpu_load(c.c, "same", got.data(), got.size(), nullptr) == 7000);
	CHECK(std::memcmp(got.data(), b.data(), 7000) == 0);
	CHECK(kvgpu_remove(c.c, "same") == 0);
	CHECK(kvgpu_lookup(c.c, "same") == KVGPU_ERR_NOT_FOUND);
	CHECK(kvgpu_remove(c.c, "same") == KVGPU_ERR_NOT_FOUND);
	// Fire-and-forget evicts, then one wait for all of them.
	std::vector<std::vector<unsigned char>> bufs;
	for (int i = 0; i < 10; i++)
		bufs.push_back(test::pattern(3000 + size_t(i), uint64_t(i)));
	for (int i = 0; i < 10; i++)
		REQUIRE(kvgpu_evict(c.c, bufs[size_t(i)].data(), bufs[size_t(i)].size(),
				    ("w" + std::to_string(i)).c_str(), 3, nullptr) > 0);
	CHECK(kvgpu_wait(c.c, 0) == 0);
	for (int i = 0; i < 10; i++)
		CHECK(kvgpu_lookup(c.c, ("w" + std::to_string(i)).c_str()) == int64_t(3000 + i));
	CHECK(temp_files(dir.path).empty());
	// A long key goes through the hashed name and still round-trips.
	std::string long_key(KVGPU_MAX_KEY, 'q');
	REQUIRE(put(c.c, a, long_key) == 0);
	CHECK(kvgpu_lookup(c.c, long_key.c_str()) == 10000);
	CHECK(kvgpu_remove(c.c, long_key.c_str()) == 0);
}

TEST_CASE("kvgpu: tickets expire after max_jobs newer evicts")
{
	TempDir dir;
	REQUIRE(dir.ok());
	kvgpu_options o = host_options();
	o.max_jobs = 4;
	Ctx c(dir.path, o);
	REQUIRE(c.rc == 0);
	auto v = test::pattern(100, 1);
	int64_t first = kvgpu_evict(c.c, v.data(), v.size(), "a", 1, nullptr);
	REQUIRE(first > 0);
	for (int i = 0; i < 4; i++) {
		int64_t t = kvgpu_evict(c.c, v.data(), v.size(), "b", 1, nullptr);
		REQUIRE(t > 0);
		CHECK(kvgpu_wait(c.c, t) == 0);
	}
	CHECK(kvgpu_wait(c.c, first) == KVGPU_ERR_EXPIRED);
	CHECK(kvgpu_wait(c.c, 1000) == KVGPU_ERR_TICKET);
	CHECK(kvgpu_wait(c.c, -3) == KVGPU_ERR_TICKET);
}

TEST_CASE("kvgpu: bad input gets clean error codes")
{
	TempDir dir;
	REQUIRE(dir.ok());
	kvgpu_ctx *bad = nullptr;
	CHECK(kvgpu_open("/nonexistent/kvgpu", nullptr, &bad) == KVGPU_ERR_DIR);
	CHECK(kvgpu_open(nullptr, nullptr, &bad) == KVGPU_ERR_INVAL);
	CHECK(kvgpu_open(dir.path.c_str(), nullptr, nullptr) == KVGPU_ERR_INVAL);
	kvgpu_options o = host_options();
	o.slot_bytes = 1000;
	CHECK(kvgpu_open(dir.path.c_str(), &o, &bad) == KVGPU_ERR_INVAL);
	o = host_options();
	o.struct_size = 3;
	CHECK(kvgpu_open(dir.path.c_str(), &o, &bad) == KVGPU_ERR_INVAL);
	o = host_options();
	o.engine = KVGPU_ENGINE_CUDA;
	int cuda_rc = kvgpu_open(dir.path.c_str(), &o, &bad);
	if (cuda_rc == 0)
		kvgpu_close(bad);
	else
		CHECK_MESSAGE((cuda_rc == KVGPU_ERR_NO_DEVICE || cuda_rc == KVGPU_ERR_NOT_BUILT),
			      cuda_rc);
	CHECK_MESSAGE((bad == nullptr || cuda_rc == 0), cuda_rc);

	Ctx c(dir.path, host_options());
	REQUIRE(c.rc == 0);
	auto v = test::pattern(8192, 5);
	CHECK(kvgpu_evict(nullptr, v.data(), v.size(), "k", 1, nullptr) == KVGPU_ERR_INVAL);
	CHECK(kvgpu_evict(c.c, nullptr, v.size(), "k", 1, nullptr) == KVGPU_ERR_INVAL);
	CHECK(kvgpu_evict(c.c, v.data(), 0, "k", 1, nullptr) == KVGPU_ERR_SIZE);
	CHECK(kvgpu_evict(c.c, v.data(), v.size(), nullptr, 1, nullptr) == KVGPU_ERR_INVAL);
	CHECK(kvgpu_evict(c.c, v.data(), v.size(), "", 1, nullptr) == KVGPU_ERR_KEY);
	std::string too_long(KVGPU_MAX_KEY + 1, 'k');
	CHECK(kvgpu_evict(c.c, v.data(), v.size(), too_long.c_str(), 1, nullptr) == KVGPU_ERR_KEY);
	CHECK(kvgpu_evict(c.c, v.data(), v.size(), "k", 6, nullptr) == KVGPU_ERR_LIFETIME);
	CHECK(kvgpu_evict(c.c, v.data(), v.size(), "k", -1, nullptr) == KVGPU_ERR_LIFETIME);
	std::vector<unsigned char> got(8192);
	CHECK(kvgpu_load(c.c, "unknown", got.data(), got.size(), nullptr) == KVGPU_ERR_NOT_FOUND);
	CHECK(kvgpu_load(c.c, "k", nullptr, got.size(), nullptr) == KVGPU_ERR_INVAL);
	CHECK(kvgpu_load(c.c, "k", got.data(), 0, nullptr) == KVGPU_ERR_SIZE);
	CHECK(kvgpu_remove(c.c, "unknown") == KVGPU_ERR_NOT_FOUND);
	CHECK(kvgpu_remove(c.c, "") == KVGPU_ERR_KEY);
	CHECK(kvgpu_stats(c.c, nullptr) == KVGPU_ERR_INVAL);
	CHECK(kvgpu_wait(nullptr, 1) == KVGPU_ERR_INVAL);
	REQUIRE(put(c.c, v, "k") == 0);
	CHECK(kvgpu_load(c.c, "k", got.data(), 8191, nullptr) == KVGPU_ERR_SIZE);

	// Damage on disk: a flipped payload byte fails the checksum; a cut file is corrupt.
	std::string path = dir.path + "/" + key_to_name("k");
	int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0);
	unsigned char byte = 0;
	REQUIRE(::pread(fd, &byte, 1, kDataOffset + 100) == 1);
	byte ^= 0x40;
	REQUIRE(::pwrite(fd, &byte, 1, kDataOffset + 100) == 1);
	CHECK(kvgpu_load(c.c, "k", got.data(), got.size(), nullptr) == KVGPU_ERR_CHECKSUM);
	REQUIRE(::ftruncate(fd, 4096 + 100) == 0);
	CHECK(kvgpu_load(c.c, "k", got.data(), got.size(), nullptr) == KVGPU_ERR_CORRUPT);
	REQUIRE(::pwrite(fd, "garbage!", 8, 0) == 8);
	CHECK(kvgpu_lookup(c.c, "k") == KVGPU_ERR_CORRUPT);
	::close(fd);
	CHECK(kvgpu_remove(c.c, "k") == 0);
	kvgpu_stats_t s{};
	kvgpu_stats(c.c, &s);
	CHECK(s.checksum_failures == 1);

	for (int code = 0; code >= -25; code--)
		CHECK(kvgpu_strerror(code) != nullptr);
	CHECK(std::string(kvgpu_strerror(KVGPU_ERR_NO_SPACE)).find("full") != std::string::npos);
}

// A 256 KiB tmpfs fills up for real (needs root to mount; decided before any case runs).
TEST_CASE("kvgpu: a full filesystem gives KVGPU_ERR_NO_SPACE and leaves no temp file" *
	  kvfdp::test::case_requires("root", kvfdp::test::probe_root("mounting a small tmpfs")))
{
	TempDir mnt;
	REQUIRE(mnt.ok());
	REQUIRE_MESSAGE(::mount("kvgpu-full", mnt.path.c_str(), "tmpfs", 0, "size=256k") == 0,
			"mount -t tmpfs -o size=256k on " << mnt.path << ": "
							  << std::strerror(errno));
	{
		Ctx c(mnt.path, host_options());
		REQUIRE(c.rc == 0);
		auto big = test::pattern(1 << 20, 3);
		int64_t t = kvgpu_evict(c.c, big.data(), big.size(), "big", 2, nullptr);
		REQUIRE(t > 0);
		CHECK(kvgpu_wait(c.c, t) == KVGPU_ERR_NO_SPACE);
		CHECK(kvgpu_lookup(c.c, "big") == KVGPU_ERR_NOT_FOUND);
		CHECK(temp_files(mnt.path).empty());
		kvgpu_stats_t s{};
		kvgpu_stats(c.c, &s);
		CHECK(s.last_errno == ENOSPC);
		CHECK(s.evict_errors == 1);
		// The store still works for what fits.
		auto small = test::pattern(1000, 4);
		CHECK(put(c.c, small, "small") == 0);
		CHECK(kvgpu_lookup(c.c, "small") == 1000);
	}
	CHECK(::umount2(mnt.path.c_str(), MNT_DETACH) == 0);
}

TEST_CASE("kvgpu: a SIGKILLed evictor leaves no torn chunk under any key")
{
	TempDir dir;
	REQUIRE(dir.ok());
	size_t temps_total = 0;
	// Three rounds, each killing a new child after a different number of finished evicts.
	for (int round = 0; round < 3; round++) {
		// Let the child start 16 to 26 evicts, then kill it while the last one is in flight.
		fork_kill_after(16 + 5 * round, [&](int progress) {
			kvgpu_options o = host_options(64 * 1024, 2);
			kvgpu_ctx *c = nullptr;
			if (kvgpu_open(dir.path.c_str(), &o, &c) != 0)
				::_exit(2);
			for (uint64_t seed = 1;; seed++) {
				auto v = self_payload(seed);
				std::string key = "k" + std::to_string(seed % 8);
				int64_t t = kvgpu_evict(c, v.data(), v.size(), key.c_str(),
							int(seed % 6), nullptr);
				// Tell the parent an evict is in flight: its kill lands inside one.
				char one = 1;
				if (t < 0 || ::write(progress, &one, 1) != 1)
					::_exit(3);
				if (kvgpu_wait(c, t) != 0)
					::_exit(4);
			}
		});

		size_t temps_before = temp_files(dir.path).size();
		temps_total += temps_before;
		Ctx c(dir.path, host_options());
		REQUIRE(c.rc == 0);
		kvgpu_stats_t s{};
		kvgpu_stats(c.c, &s);
		CHECK(s.stale_temps_removed == temps_before);
		CHECK(temp_files(dir.path).empty());
		int visible = 0;
		for (int k = 0; k < 8; k++) {
			std::string key = "k" + std::to_string(k);
			int64_t n = kvgpu_lookup(c.c, key.c_str());
			if (n == KVGPU_ERR_NOT_FOUND)
				continue;
			REQUIRE(n > 0);
			std::vector<unsigned char> got(static_cast<size_t>(n));
			CHECK(kvgpu_load(c.c, key.c_str(), got.data(), got.size(), nullptr) == n);
			CHECK(self_valid(got, size_t(n)));
			visible++;
		}
		CHECK(visible == 8);
	}
	MESSAGE("temp files left by killed children over 3 rounds: " << temps_total);
}
