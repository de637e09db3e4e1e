// libkvgpu's bounded store: the eviction order across restarts (LRU recency and FIFO2's load
// counts come back from the journal's touch records) and evictions unlinked by the reclaimer
// thread (the disk bound while it runs, and a crash with dead files waiting).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/kvgpu.h"
#include "kvgpu/store_index.hpp"
#include "tests/kvgpu/kvgpu_kill_util.hpp"
#include "tests/kvgpu/kvgpu_store_util.hpp"

using namespace kvfdp::gpu;
using namespace kvfdp::gpu::test;

namespace {

constexpr size_t kChunk = 20000;          // 24 KiB on disk
constexpr uint64_t kFile = 4096 + 20480;  // file_bytes(kChunk)
constexpr uint64_t kCap = 10 * kFile;     // ten chunks
// What the disk may hold past the capacity while the reclaimer catches up (kvgpu.h).
constexpr uint64_t kDiskBound = kCap + kCap / 8 + kFile;

std::string key_of(int i)
{
	return "chunk/" + std::to_string(i);
}

// The LRU scenario: chunks 0..9, then loads of 0, 1, 2 (now the most recent), then a remove of
// chunk 9 (its del record writes the waiting touches out with it).
bool lru_scenario(kvgpu_ctx *c)
{
	for (int i = 0; i < 10; i++)
		if (put_key(c, key_of(i), kChunk) != 0)
			return false;
	for (int i = 0; i < 3; i++)
		if (verify_key(c, key_of(i)) != 1)
			return false;
	return kvgpu_remove(c, key_of(9).c_str()) == 0;
}

// After lru_scenario and a restart: three new chunks evict the least recently used, 3 and 4
// (a restart that forgot the loads would evict 0 and 1, the oldest written).
void check_lru_order(const std::string &dir)
{
	Ctx c(dir, store_options(kCap, KVGPU_EVICT_LRU));
	REQUIRE(c.rc == 0);
	CHECK(stats_of(c.c).chunks == 9);
	for (int i = 0; i < 3; i++)
		REQUIRE(put_key(c.c, "new/" + std::to_string(i), kChunk) == 0);
	CHECK(stats_of(c.c).evictions == 2);
	for (int i = 0; i < 3; i++) {
		CAPTURE(i);
		CHECK(kvgpu_contains(c.c, key_of(i).c_str()) == 1);
		CHECK(verify_key(c.c, key_of(i)) == 1);
	}
	CHECK(kvgpu_contains(c.c, key_of(3).c_str()) == 0);
	CHECK(kvgpu_contains(c.c, key_of(4).c_str()) == 0);
	CHECK(kvgpu_contains(c.c, key_of(5).c_str()) == 1);
}

}  // namespace

TEST_CASE("store order: LRU recency survives a restart")
{
	TempDir dir;
	REQUIRE(dir.ok());
	{
		Ctx c(dir.path, store_options(kCap, KVGPU_EVICT_LRU));
		REQUIRE(c.rc == 0);
		REQUIRE(lru_scenario(c.c));
	}
	check_lru_order(dir.path);
}

TEST_CASE("store order: LRU recency survives kill -9 (up to the last journal write)")
{
	TempDir dir;
	REQUIRE(dir.ok());
	std::string d = dir.path;
	fork_kill_after(1, [&](int progress) {
		kvgpu_options o = store_options(kCap, KVGPU_EVICT_LRU);
		kvgpu_ctx *c = nullptr;
		if (kvgpu_open(d.c_str(), &o, &c) != 0 || !lru_scenario(c))
			::_exit(2);
		char one = 1;
		if (::write(progress, &one, 1) != 1)
			::_exit(3);
		for (;;)
			::pause();  // killed here, never closed
	});
	check_lru_order(d);
}

TEST_CASE("store order: FIFO2's load counts survive a restart")
{
	TempDir dir;
	REQUIRE(dir.ok());
	{
		Ctx c(dir.path, store_options(kCap, KVGPU_EVICT_FIFO2));
		REQUIRE(c.rc == 0);
		for (int i = 0; i < 10; i++)
			REQUIRE(put_key(c.c, key_of(i), kChunk) == 0);
		REQUIRE(verify_key(c.c, key_of(0)) ==
			1);  // earns chunk 0, the oldest, its second chance
	}
	Ctx c(dir.path, store_options(kCap, KVGPU_EVICT_FIFO2));
	REQUIRE(c.rc == 0);
	REQUIRE(put_key(c.c, "new", kChunk) == 0);
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.reinserts == 1);
	CHECK(s.evictions == 1);
	CHECK(kvgpu_contains(c.c, key_of(0).c_str()) == 1);
	CHECK(kvgpu_contains(c.c, key_of(1).c_str()) == 0);
	CHECK(verify_key(c.c, key_of(0)) == 1);
}

TEST_CASE("store reclaim: evictions are unlinked off the put path within the documented disk bound")
{
	for (uint32_t reclaim :
	     {uint32_t(KVGPU_RECLAIM_BACKGROUND), uint32_t(KVGPU_RECLAIM_INLINE)}) {
		CAPTURE(reclaim);
		TempDir dir;
		REQUIRE(dir.ok());
		{
			kvgpu_options o = store_options(kCap);
			o.reclaim = reclaim;
			Ctx c(dir.path, o);
			REQUIRE(c.rc == 0);
			for (int i = 0; i < 60; i++) {
				REQUIRE(put_key(c.c, key_of(i), kChunk) == 0);
				DiskUse u = disk_use(dir.path);
				CHECK(u.bytes <= kCap);  // live chunk files: the capacity
				CHECK(u.bytes + u.dead_bytes <=
				      kDiskBound);  // with the reclaimer's backlog
				if (reclaim == KVGPU_RECLAIM_INLINE)
					CHECK(u.dead_files == 0);
			}
			kvgpu_stats_t s = stats_of(c.c);
			CHECK(s.evictions == 50);
			CHECK(s.chunks == 10);
		}
		// The close waits for the reclaimer: only the ten live chunk files are left.
		DiskUse u = disk_use(dir.path);
		CHECK(u.files == 10);
		CHECK(u.bytes == kCap);
		CHECK(u.dead_files == 0);
	}
}

TEST_CASE("store reclaim: a crash with evicted chunks not yet unlinked: the reopen removes them")
{
	TempDir dir;
	REQUIRE(dir.ok());
	{
		Ctx c(dir.path, store_options(kCap));
		REQUIRE(c.rc == 0);
		for (int i = 0; i < 5; i++)
			REQUIRE(put_key(c.c, key_of(i), kChunk) == 0);
	}
	// What a kill between an eviction's rename and its del record leaves (chunk 2 renamed away,
	// the journal still lists it), and a dead file whose del record was written.
	std::string d = dir.path + "/";
	REQUIRE(::rename((d + key_to_name(key_of(2))).c_str(), (d + kDeadPrefix + "5").c_str()) ==
		0);
	int fd = ::open((d + kDeadPrefix + "9").c_str(), O_WRONLY | O_CREAT, 0644);
	REQUIRE(fd >= 0);
	::close(fd);
	Ctx c(dir.path, store_options(kCap));
	REQUIRE(c.rc == 0);
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.index_error == 0);
	CHECK(s.chunks == 4);
	CHECK(s.dropped == 1);
	CHECK(s.stale_temps_removed == 2);
	CHECK(kvgpu_contains(c.c, key_of(2).c_str()) == 0);
	DiskUse u = disk_use(dir.path);
	CHECK(u.dead_files == 0);
	CHECK(u.files == 4);
	CHECK(u.bytes == s.used_bytes);
	for (int i : {0, 1, 3, 4})
		CHECK(verify_key(c.c, key_of(i)) == 1);
}

TEST_CASE("store reclaim: kill -9 while the reclaimer unlinks: the index rebuilds consistently")
{
	TempDir dir;
	REQUIRE(dir.ok());
	std::string d = dir.path;
	uint64_t removed = 0;
	for (int round = 0; round < 4; round++) {
		CAPTURE(round);
		// Every put evicts; the kill lands among puts, renames and the reclaimer's unlinks.
		fork_kill_after(30 + 11 * round, [&](int progress) {
			kvgpu_options o = store_options(kCap);
			kvgpu_ctx *c = nullptr;
			if (kvgpu_open(d.c_str(), &o, &c) != 0)
				::_exit(2);
			for (int i = 0;; i++) {
				std::string key = key_of((i * 7) % 41);
				auto v = key_payload(key, kChunk);
				int64_t t =
					kvgpu_evict(c, v.data(), v.size(), key.c_str(), 2, nullptr);
				char one = 1;
				if (t < 0 || ::write(progress, &one, 1) != 1)
					::_exit(3);
				if (kvgpu_wait(c, t) != 0)
					::_exit(4);
			}
		});
		uint64_t dead_before = disk_use(d).dead_files;
		Ctx c(d, store_options(kCap));
		REQUIRE(c.rc == 0);
		CHECK(stats_of(c.c).stale_temps_removed >= dead_before);
		removed += dead_before;
		check_reopened(c.c, d, kCap, 41, key_of);
	}
	MESSAGE("dead files left by the killed children and removed at reopen: " << removed);
}
