// libkvgpu's bounded store on the host path: capacity, eviction policies, the index journal
// across restarts and crashes, batched loads, prefetch, contains, bad input.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/kvgpu.h"
#include "kvgpu/kvgpu.hpp"
#include "kvgpu/store_index.hpp"
#include "tests/kvgpu/kvgpu_kill_util.hpp"
#include "tests/kvgpu/kvgpu_store_util.hpp"

using namespace kvfdp::gpu;
using namespace kvfdp::gpu::test;

namespace {

constexpr size_t kChunk = 20000;          // 24 KiB on disk
constexpr uint64_t kFile = 4096 + 20480;  // file_bytes(kChunk)
constexpr uint64_t kCap = 10 * kFile;     // ten chunks

std::string key_of(int i)
{
	return "chunk/" + std::to_string(i);
}

std::string index_path(const TempDir &d)
{
	return d.path + "/" + kIndexName;
}

// Flips one byte of a file at offset.
void flip_byte(const std::string &path, off_t off)
{
	int fd = ::open(path.c_str(), O_RDWR);
	REQUIRE(fd >= 0);
	unsigned char b = 0;
	REQUIRE(::pread(fd, &b, 1, off) == 1);
	b ^= 0x5a;
	REQUIRE(::pwrite(fd, &b, 1, off) == 1);
	::close(fd);
}

// Opens a store of capacity cap on dir, puts key_of(0 .. n-1) (kChunk bytes each), closes it.
void fill_store(const TempDir &dir, uint64_t cap, int n)
{
	Ctx c(dir.path, store_options(cap));
	REQUIRE(c.rc == 0);
	for (int i = 0; i < n; i++)
		REQUIRE(put_key(c.c, key_of(i), kChunk) == 0);
}

}  // namespace

TEST_CASE("store: file_bytes of the test chunk")
{
	CHECK(file_bytes(kChunk) == kFile);
}

TEST_CASE("store: FIFO keeps the newest chunks and never exceeds its capacity")
{
	TempDir dir;
	REQUIRE(dir.ok());
	Ctx c(dir.path, store_options(kCap));
	REQUIRE(c.rc == 0);
	for (int i = 0; i < 40; i++) {
		REQUIRE(put_key(c.c, key_of(i), kChunk) == 0);
		kvgpu_stats_t s = stats_of(c.c);
		CHECK(s.used_bytes <= kCap);
		CHECK(disk_use(dir.path).bytes <= kCap);
		// Loads of old chunks do not save them from FIFO.
		if (i >= 5)
			CHECK(verify_key(c.c, key_of(i - 5)) == 1);
	}
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.chunks == 10);
	CHECK(s.used_bytes == kCap);
	CHECK(s.evictions == 30);
	CHECK(s.capacity_bytes == kCap);
	for (int i = 0; i < 30; i++)
		CHECK(kvgpu_contains(c.c, key_of(i).c_str()) == 0);
	for (int i = 30; i < 40; i++) {
		CHECK(kvgpu_contains(c.c, key_of(i).c_str()) == 1);
		CHECK(verify_key(c.c, key_of(i)) == 1);
	}
	CHECK(disk_use(dir.path).files == 10);
}

TEST_CASE("store: LRU keeps what is loaded, FIFO2 gives loaded chunks a second chance")
{
	for (uint32_t policy : {uint32_t(KVGPU_EVICT_LRU), uint32_t(KVGPU_EVICT_FIFO2)}) {
		CAPTURE(policy);
		TempDir dir;
		REQUIRE(dir.ok());
		Ctx c(dir.path, store_options(kCap, policy));
		REQUIRE(c.rc == 0);
		for (int i = 0; i < 30; i++) {
			REQUIRE(put_key(c.c, key_of(i), kChunk) == 0);
			// chunk 0 is loaded after every put: the hot chunk.
			CHECK(verify_key(c.c, key_of(0)) == 1);
		}
		CHECK(kvgpu_contains(c.c, key_of(0).c_str()) == 1);
		CHECK(kvgpu_contains(c.c, key_of(1).c_str()) == 0);
		kvgpu_stats_t s = stats_of(c.c);
		CHECK(s.used_bytes <= kCap);
		if (policy == KVGPU_EVICT_FIFO2) {
			CHECK(s.reinserts >= 1);
			CHECK(s.reinserted_bytes == s.reinserts * kFile);
		} else {
			CHECK(s.reinserts == 0);
		}
	}
}

TEST_CASE("store: the index survives a restart without reading payloads, and every chunk verifies")
{
	TempDir dir;
	REQUIRE(dir.ok());
	{
		Ctx c(dir.path, store_options(kCap));
		REQUIRE(c.rc == 0);
		for (int i = 0; i < 25; i++)
			REQUIRE(put_key(c.c, key_of(i), kChunk - size_t(i)) == 0);
		REQUIRE(kvgpu_remove(c.c, key_of(24).c_str()) == 0);
	}
	Ctx c(dir.path, store_options(kCap));
	REQUIRE(c.rc == 0);
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.chunks == 9);
	CHECK(s.adopted == 0);
	CHECK(s.dropped == 0);
	CHECK(s.index_rebuilds == 0);
	CHECK(s.index_error == 0);
	CHECK(s.open_ns > 0);
	for (int i = 15; i < 24; i++) {
		CHECK(kvgpu_lookup(c.c, key_of(i).c_str()) == int64_t(kChunk) - i);
		CHECK(verify_key(c.c, key_of(i)) == 1);
	}
	// FIFO order came back from the journal: the next put evicts chunk 15, the oldest.
	REQUIRE(put_key(c.c, "new-a", kChunk) == 0);
	REQUIRE(put_key(c.c, "new-b", kChunk) == 0);
	CHECK(kvgpu_contains(c.c, key_of(15).c_str()) == 0);
	CHECK(kvgpu_contains(c.c, key_of(16).c_str()) == 1);
}

TEST_CASE("store: a lower capacity at open evicts down to it")
{
	TempDir dir;
	REQUIRE(dir.ok());
	fill_store(dir, kCap, 10);
	Ctx c(dir.path, store_options(4 * kFile));
	REQUIRE(c.rc == 0);
	CHECK(stats_of(c.c).chunks == 4);
	CHECK(disk_use(dir.path).bytes == 4 * kFile);
	for (int i = 6; i < 10; i++)
		CHECK(verify_key(c.c, key_of(i)) == 1);
}

TEST_CASE("store: a corrupt index is rebuilt from the chunk headers, never trusted")
{
	TempDir dir;
	REQUIRE(dir.ok());
	fill_store(dir, kCap, 8);
	SUBCASE("a flipped byte in a record")
	{
		flip_byte(index_path(dir), 16 + 8 + 3);  // the first record's seq
	}
	SUBCASE("garbage instead of the header")
	{
		std::ofstream(index_path(dir), std::ios::binary | std::ios::in) << "not an index";
	}
	Ctx c(dir.path, store_options(kCap));
	REQUIRE(c.rc == 0);
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.index_error == KVGPU_ERR_INDEX);
	CHECK(s.index_rebuilds == 1);
	CHECK(s.chunks == 8);
	CHECK(std::string(kvgpu_strerror(KVGPU_ERR_INDEX)).find("rebuilt") != std::string::npos);
	for (int i = 0; i < 8; i++)
		CHECK(verify_key(c.c, key_of(i)) == 1);
	// The rebuilt order is the headers' creation order: FIFO still evicts chunk 0 first.
	REQUIRE(put_key(c.c, "x1", kChunk) == 0);
	REQUIRE(put_key(c.c, "x2", kChunk) == 0);
	REQUIRE(put_key(c.c, "x3", kChunk) == 0);
	CHECK(kvgpu_contains(c.c, key_of(0).c_str()) == 0);
	CHECK(kvgpu_contains(c.c, key_of(1).c_str()) == 1);
}

TEST_CASE("store: a torn last record is cut off; a missing journal is rebuilt; orphans are adopted")
{
	TempDir dir;
	REQUIRE(dir.ok());
	fill_store(dir, kCap, 4);
	{
		// Half a record at the end: what a crash inside the append leaves.
		std::ofstream f(index_path(dir), std::ios::binary | std::ios::app);
		f.write("\x12\x34\x56\x78\x01\x00\x05\x00", 8);
	}
	{
		Ctx c(dir.path, store_options(kCap));
		REQUIRE(c.rc == 0);
		kvgpu_stats_t s = stats_of(c.c);
		CHECK(s.index_error == 0);
		CHECK(s.chunks == 4);
	}
	// A chunk written by an unbounded context (no index): found by name, adopted from its header.
	{
		Ctx u(dir.path, engine_options(KVGPU_ENGINE_HOST));
		REQUIRE(u.rc == 0);
		REQUIRE(put_key(u.c, "orphan", 5000) == 0);
	}
	{
		Ctx c(dir.path, store_options(kCap));
		REQUIRE(c.rc == 0);
		kvgpu_stats_t s = stats_of(c.c);
		CHECK(s.adopted == 1);
		CHECK(s.chunks == 5);
		CHECK(verify_key(c.c, "orphan") == 1);
	}
	REQUIRE(::unlink(index_path(dir).c_str()) == 0);
	Ctx c(dir.path, store_options(kCap));
	REQUIRE(c.rc == 0);
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.index_error == 0);
	CHECK(s.index_rebuilds == 1);
	CHECK(s.chunks == 5);
	for (int i = 0; i < 4; i++)
		CHECK(verify_key(c.c, key_of(i)) == 1);
}

TEST_CASE("store: a replacement whose journal record was lost is corrected by its first load")
{
	TempDir dir;
	REQUIRE(dir.ok());
	fill_store(dir, kCap, 2);
	{
		// As if a crash fell between the rename and the journal append: the file is new, the
		// journal still describes the old chunk.
		Ctx u(dir.path, engine_options(KVGPU_ENGINE_HOST));
		REQUIRE(u.rc == 0);
		REQUIRE(put_key(u.c, key_of(1), 3 * kChunk) == 0);
	}
	Ctx c(dir.path, store_options(kCap));
	REQUIRE(c.rc == 0);
	CHECK(kvgpu_lookup(c.c, key_of(1).c_str()) == int64_t(kChunk));  // the index, no I/O
	CHECK(verify_key(c.c, key_of(0)) == 1);
	std::vector<unsigned char> got(3 * kChunk);
	CHECK(kvgpu_load(c.c, key_of(1).c_str(), got.data(), got.size(), nullptr) ==
	      int64_t(3 * kChunk));
	CHECK(got == key_payload(key_of(1), 3 * kChunk));
	CHECK(kvgpu_lookup(c.c, key_of(1).c_str()) == int64_t(3 * kChunk));
	CHECK(stats_of(c.c).used_bytes == disk_use(dir.path).bytes);
}

TEST_CASE(
	"store: a chunk edited by hand fails its own load with a clear code and is dropped; the rest stay")
{
	TempDir dir;
	REQUIRE(dir.ok());
	Ctx c(dir.path, store_options(kCap));
	REQUIRE(c.rc == 0);
	for (int i = 0; i < 6; i++)
		REQUIRE(put_key(c.c, key_of(i), kChunk) == 0);
	std::string f1 = dir.path + "/" + key_to_name(key_of(1));
	std::string f2 = dir.path + "/" + key_to_name(key_of(2));
	flip_byte(f1, 4096 + 1234);  // payload
	flip_byte(f2, 20);           // header
	std::vector<unsigned char> buf(kChunk);
	CHECK(kvgpu_load(c.c, key_of(1).c_str(), buf.data(), buf.size(), nullptr) ==
	      KVGPU_ERR_CHECKSUM);
	CHECK(kvgpu_load(c.c, key_of(2).c_str(), buf.data(), buf.size(), nullptr) ==
	      KVGPU_ERR_CORRUPT);
	CHECK(std::string(kvgpu_strerror(KVGPU_ERR_CHECKSUM)).find("damaged") != std::string::npos);
	// Dropped from the index and the directory: they no longer hold capacity.
	CHECK(kvgpu_contains(c.c, key_of(1).c_str()) == 0);
	CHECK(kvgpu_contains(c.c, key_of(2).c_str()) == 0);
	CHECK(::access(f1.c_str(), F_OK) != 0);
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.dropped == 2);
	CHECK(s.chunks == 4);
	CHECK(s.used_bytes == 4 * kFile);
	for (int i : {0, 3, 4, 5})
		CHECK(verify_key(c.c, key_of(i)) == 1);
	// A file removed behind the store's back: contains still answers from the index (no I/O),
	// the load finds it gone and drops it.
	REQUIRE(::unlink((dir.path + "/" + key_to_name(key_of(3))).c_str()) == 0);
	CHECK(kvgpu_contains(c.c, key_of(3).c_str()) == 1);
	CHECK(kvgpu_load(c.c, key_of(3).c_str(), buf.data(), buf.size(), nullptr) ==
	      KVGPU_ERR_NOT_FOUND);
	CHECK(kvgpu_contains(c.c, key_of(3).c_str()) == 0);
}

TEST_CASE("store: bad input gets its own code")
{
	TempDir dir;
	REQUIRE(dir.ok());
	kvgpu_ctx *c = nullptr;
	kvgpu_options o = store_options(4096);
	CHECK(kvgpu_open(dir.path.c_str(), &o, &c) == KVGPU_ERR_CAPACITY);
	CHECK(c == nullptr);
	o = store_options(kCap, 7);
	CHECK(kvgpu_open(dir.path.c_str(), &o, &c) == KVGPU_ERR_INVAL);
	o = store_options(kCap);
	o.prefetch_slots = 5000;
	CHECK(kvgpu_open(dir.path.c_str(), &o, &c) == KVGPU_ERR_INVAL);

	Ctx s(dir.path, store_options(kCap));
	REQUIRE(s.rc == 0);
	// One context per store directory.
	Ctx second(dir.path, store_options(kCap));
	CHECK(second.rc == KVGPU_ERR_BUSY);
	// A chunk larger than the whole store.
	std::vector<unsigned char> big(kCap);
	CHECK(kvgpu_evict(s.c, big.data(), big.size(), "big", 2, nullptr) == KVGPU_ERR_CAPACITY);
	std::string long_key(KVGPU_MAX_KEY + 1, 'k');
	CHECK(kvgpu_evict(s.c, big.data(), 10, long_key.c_str(), 2, nullptr) == KVGPU_ERR_KEY);
	CHECK(kvgpu_contains(s.c, long_key.c_str()) == KVGPU_ERR_KEY);
	CHECK(kvgpu_contains(s.c, "") == KVGPU_ERR_KEY);
	const char *keys[] = {long_key.c_str()};
	CHECK(kvgpu_prefetch(s.c, 1, keys) == KVGPU_ERR_KEY);
	CHECK(kvgpu_batch_wait(s.c, 12345) == KVGPU_ERR_TICKET);
	CHECK(kvgpu_batch_poll(s.c, 0) == KVGPU_ERR_TICKET);
	CHECK(kvgpu_load_batch(s.c, 1, nullptr, nullptr, nullptr, nullptr, nullptr) ==
	      KVGPU_ERR_INVAL);
	// The longest key works, and nothing above disturbed the store.
	std::string max_key(KVGPU_MAX_KEY, 'm');
	CHECK(put_key(s.c, max_key, 100) == 0);
	CHECK(verify_key(s.c, max_key) == 1);
	CHECK(stats_of(s.c).chunks == 1);
}

TEST_CASE("store: a batch loads together; a bad entry fails only itself")
{
	TempDir dir;
	REQUIRE(dir.ok());
	Ctx c(dir.path, store_options(64 * kFile, KVGPU_EVICT_FIFO, 16 * 1024, 4));
	REQUIRE(c.rc == 0);
	constexpr int kN = 40;  // more than max_jobs would be fine too; 40 > slots * 3
	std::vector<std::string> keys;
	for (int i = 0; i < kN; i++) {
		keys.push_back(key_of(i));
		REQUIRE(put_key(c.c, keys.back(), kChunk + size_t(i) * 100) == 0);
	}
	keys[7] = "missing";
	std::vector<std::vector<unsigned char>> bufs(kN);
	std::vector<const char *> kp(kN);
	std::vector<void *> dp(kN);
	std::vector<size_t> sz(kN);
	std::vector<int64_t> res(kN, 999);
	for (int i = 0; i < kN; i++) {
		bufs[size_t(i)].resize(kChunk + size_t(i) * 100);
		kp[size_t(i)] = keys[size_t(i)].c_str();
		dp[size_t(i)] = bufs[size_t(i)].data();
		sz[size_t(i)] = bufs[size_t(i)].size();
	}
	sz[9] = 10;  // too small
	// A damaged header in the second group of header reads (32 per submission).
	flip_byte(dir.path + "/" + key_to_name(keys[35]), 8);
	int64_t b = kvgpu_load_batch(c.c, kN, kp.data(), dp.data(), sz.data(), res.data(), nullptr);
	REQUIRE(b > 0);
	CHECK(kvgpu_batch_wait(c.c, b) == KVGPU_ERR_NOT_FOUND);
	CHECK(kvgpu_batch_poll(c.c, b) == 1);
	CHECK(res[7] == KVGPU_ERR_NOT_FOUND);
	CHECK(res[9] == KVGPU_ERR_SIZE);
	CHECK(res[35] == KVGPU_ERR_CORRUPT);
	CHECK(kvgpu_contains(c.c, keys[35].c_str()) == 0);  // dropped: it can never load
	for (int i = 0; i < kN; i++) {
		if (i == 7 || i == 9 || i == 35)
			continue;
		CAPTURE(i);
		CHECK(res[size_t(i)] == int64_t(kChunk) + i * 100);
		CHECK(bufs[size_t(i)] == key_payload(keys[size_t(i)], bufs[size_t(i)].size()));
	}
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.batches == 1);
	CHECK(s.misses == 1);
	// An empty batch is done at once.
	int64_t e = kvgpu_load_batch(c.c, 0, nullptr, nullptr, nullptr, nullptr, nullptr);
	REQUIRE(e > 0);
	CHECK(kvgpu_batch_wait(c.c, e) == 0);
}

TEST_CASE(
	"store: prefetched chunks load from their buffer; a replace or remove voids the staged copy")
{
	TempDir dir;
	REQUIRE(dir.ok());
	kvgpu_options o = store_options(32 * kFile, KVGPU_EVICT_FIFO, 32 * 1024, 4);
	o.prefetch_slots = 4;
	Ctx c(dir.path, o);
	REQUIRE(c.rc == 0);
	for (int i = 0; i < 8; i++)
		REQUIRE(put_key(c.c, key_of(i), kChunk) == 0);
	std::vector<std::string> ks = {key_of(0), key_of(1), key_of(2), "absent"};
	std::vector<const char *> kp;
	for (auto &k : ks)
		kp.push_back(k.c_str());
	CHECK(kvgpu_prefetch(c.c, kp.size(), kp.data()) == 3);
	for (int i = 0; i < 3; i++)
		CHECK(verify_key(c.c, key_of(i)) == 1);
	CHECK(stats_of(c.c).prefetch_hits == 3);
	CHECK(stats_of(c.c).prefetches == 3);

	// Staged, then replaced: the load must see the new bytes.
	const char *k3[] = {"chunk/3"};
	CHECK(kvgpu_prefetch(c.c, 1, k3) == 1);
	std::vector<unsigned char> other = pattern(kChunk, 4242);
	int64_t t = kvgpu_evict(c.c, other.data(), other.size(), "chunk/3", 2, nullptr);
	REQUIRE(t > 0);
	REQUIRE(kvgpu_wait(c.c, t) == 0);
	std::vector<unsigned char> got(kChunk);
	CHECK(kvgpu_load(c.c, "chunk/3", got.data(), got.size(), nullptr) == int64_t(kChunk));
	CHECK(got == other);
	// Staged, then removed: not found.
	const char *k4[] = {"chunk/4"};
	CHECK(kvgpu_prefetch(c.c, 1, k4) == 1);
	REQUIRE(kvgpu_remove(c.c, "chunk/4") == 0);
	CHECK(kvgpu_load(c.c, "chunk/4", got.data(), got.size(), nullptr) == KVGPU_ERR_NOT_FOUND);
	// More keys than buffers: the rest load the ordinary way.
	std::vector<std::string> many;
	std::vector<const char *> mp;
	for (int i = 0; i < 8; i++)
		if (i != 4)
			many.push_back(key_of(i));
	for (auto &k : many)
		mp.push_back(k.c_str());
	int staged = kvgpu_prefetch(c.c, mp.size(), mp.data());
	CHECK(staged >= 1);
	CHECK(staged <= 4);
	for (int i = 0; i < 8; i++)
		if (i != 3 && i != 4)
			CHECK(verify_key(c.c, key_of(i)) == 1);
}

TEST_CASE("store: the C++ layer's contains, prefetch and batch")
{
	TempDir dir;
	REQUIRE(dir.ok());
	kvgpu_options o = store_options(kCap);
	std::error_code ec;
	auto st = Store::open(dir.path, &o, ec);
	REQUIRE(!ec);
	auto v = key_payload("a", kChunk);
	REQUIRE(!st.put(v.data(), v.size(), "a", KVGPU_LIFETIME_LONG));
	CHECK(st.contains("a") == 1);
	CHECK(st.contains("b") == 0);
	const char *keys[] = {"a", "b"};
	CHECK(st.prefetch(2, keys) == 1);
	std::vector<unsigned char> x(kChunk), y(kChunk);
	void *dsts[] = {x.data(), y.data()};
	size_t sizes[] = {kChunk, kChunk};
	int64_t res[2] = {};
	int64_t b = st.load_batch(2, keys, dsts, sizes, res);
	REQUIRE(b > 0);
	CHECK(st.batch_wait(b) == make_kvgpu_error(KVGPU_ERR_NOT_FOUND));
	CHECK(res[0] == int64_t(kChunk));
	CHECK(res[1] == KVGPU_ERR_NOT_FOUND);
	CHECK(x == v);
	CHECK(st.stats().prefetch_hits == 1);
}

TEST_CASE("store: concurrent put, get and evict from four threads")
{
	TempDir dir;
	REQUIRE(dir.ok());
	Ctx c(dir.path, store_options(12 * kFile, KVGPU_EVICT_LRU));
	REQUIRE(c.rc == 0);
	std::atomic<int> bad{0}, loaded{0}, over{0};
	std::vector<std::thread> th;
	for (int t = 0; t < 4; t++) {
		th.emplace_back([&, t] {
			for (int i = 0; i < 60; i++) {
				std::string key = key_of((t * 7 + i * 3) % 30);
				if (i % 3 == 0) {
					if (put_key(c.c, key, kChunk) != 0)
						bad++;
				} else {
					int r = verify_key(c.c, key);
					if (r == 1)
						loaded++;
					else if (r != KVGPU_ERR_NOT_FOUND)
						bad++;  // a wrong byte, or any error but "evicted meanwhile"
				}
				if (stats_of(c.c).used_bytes > 12 * kFile)
					over++;
			}
		});
	}
	for (auto &x : th)
		x.join();
	CHECK(bad == 0);
	CHECK(over == 0);
	CHECK(loaded > 0);
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.used_bytes <= 12 * kFile);
	CHECK(disk_use(dir.path).bytes == s.used_bytes);
	CHECK(disk_use(dir.path).files == s.chunks);
	MESSAGE("4 threads: " << loaded.load() << " verified loads, " << s.evictions
			      << " evictions");
}

namespace {

// Forks a child that opens the store and runs work(ctx, i) for i = 0, 1, ... forever,
// writing a byte to the parent after each; kills it with SIGKILL after `after` bytes.
template <class F>
void kill_child_after(const std::string &dir, const kvgpu_options &o, int after, F work)
{
	fork_kill_after(after, [&](int progress) {
		kvgpu_ctx *c = nullptr;
		if (kvgpu_open(dir.c_str(), &o, &c) != 0)
			::_exit(2);
		for (int i = 0;; i++) {
			if (!work(c, i))
				::_exit(3);
			char one = 1;
			if (::write(progress, &one, 1) != 1)
				::_exit(4);
		}
	});
}

// Reopens dir; every chunk the index lists verifies, and index and disk agree.
void check_after_crash(const std::string &dir, uint64_t cap, int keys)
{
	Ctx c(dir, store_options(cap));
	REQUIRE(c.rc == 0);
	check_reopened(c.c, dir, cap, keys, key_of);
}

}  // namespace

TEST_CASE(
	"store: kill -9 during evictions: the index comes back and every surviving chunk verifies")
{
	TempDir dir;
	REQUIRE(dir.ok());
	for (int round = 0; round < 3; round++) {
		CAPTURE(round);
		for (uint32_t policy : {uint32_t(KVGPU_EVICT_FIFO), uint32_t(KVGPU_EVICT_FIFO2)}) {
			// The child keeps the store full: every put evicts (FIFO2 also rewrites hit chunks).
			kill_child_after(dir.path, store_options(kCap, policy), 25 + 7 * round,
					 [](kvgpu_ctx *c, int i) {
						 std::string key = key_of((i * 5) % 37);
						 auto v = key_payload(key, kChunk);
						 int64_t t = kvgpu_evict(c, v.data(), v.size(),
									 key.c_str(), 2, nullptr);
						 if (t < 0)
							 return false;
						 if (i % 2)
							 (void)verify_key(c,
									  key_of((i * 5 + 3) % 37));
						 return kvgpu_wait(c, t) == 0;
					 });
			check_after_crash(dir.path, kCap, 37);
		}
	}
}

TEST_CASE("store: kill -9 during loads and batches: the index comes back and every chunk verifies")
{
	TempDir dir;
	REQUIRE(dir.ok());
	fill_store(dir, kCap, 10);
	for (int round = 0; round < 3; round++) {
		kill_child_after(dir.path, store_options(kCap, KVGPU_EVICT_LRU), 20 + 9 * round,
				 [](kvgpu_ctx *c, int i) {
					 static std::vector<std::vector<unsigned char>> bufs(
						 4, std::vector<unsigned char>(kChunk));
					 std::string ks[4];
					 const char *kp[4];
					 void *dp[4];
					 size_t sz[4];
					 int64_t res[4];
					 for (int k = 0; k < 4; k++) {
						 ks[k] = key_of((i + k) % 10);
						 kp[k] = ks[k].c_str();
						 dp[k] = bufs[size_t(k)].data();
						 sz[k] = kChunk;
					 }
					 int64_t b =
						 kvgpu_load_batch(c, 4, kp, dp, sz, res, nullptr);
					 return b > 0 && kvgpu_batch_wait(c, b) == 0 &&
						verify_key(c, key_of(i % 10)) == 1;
				 });
		check_after_crash(dir.path, kCap, 10);
		Ctx c(dir.path, store_options(kCap));
		CHECK(stats_of(c.c).chunks == 10);
	}
}
