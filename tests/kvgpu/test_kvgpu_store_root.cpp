// The bounded store on filesystems a test mounts (root): a filesystem that fills up below the
// store's capacity, and one that refuses O_DIRECT when the store requires it.
#include <doctest/doctest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "kvgpu/kvgpu.h"
#include "tests/kvgpu/kvgpu_store_util.hpp"
#include "tests/support/skip.hpp"

using namespace kvfdp::gpu;
using namespace kvfdp::gpu::test;

static const kvfdp::test::Requires
	need_root("root", kvfdp::test::probe_root("mounting a small tmpfs and a ramfs"));

namespace {

// A filesystem mounted on a fresh directory for the scope.
struct Mount {
	TempDir dir;
	bool ok = false;
	Mount(const char *type, const char *data)
	{
		ok = dir.ok() && ::mount("kvgpu-store", dir.path.c_str(), type, 0, data) == 0;
	}
	~Mount()
	{
		if (ok)
			::umount2(dir.path.c_str(), MNT_DETACH);
	}
};

constexpr size_t kChunk = 20000;  // 24 KiB files

}  // namespace

TEST_CASE(
	"store: a filesystem full below the capacity fails the put with NO_SPACE; nothing stored is lost")
{
	Mount m("tmpfs", "size=256k");
	REQUIRE_MESSAGE(m.ok, "mount tmpfs: " << std::strerror(errno));
	Ctx c(m.dir.path, store_options(64ull << 20));  // far more than the 256 KiB filesystem
	REQUIRE(c.rc == 0);
	int stored = 0, full = 0;
	for (int i = 0; i < 40 && full == 0; i++) {
		int rc = put_key(c.c, "c" + std::to_string(i), kChunk);
		if (rc == 0)
			stored++;
		else if (rc == KVGPU_ERR_NO_SPACE)
			full = i;
		else
			FAIL("put " << i << ": " << kvgpu_strerror(rc));
	}
	REQUIRE(full > 0);
	CHECK(stored == full);
	CHECK(std::string(kvgpu_strerror(KVGPU_ERR_NO_SPACE)).find("full") != std::string::npos);
	kvgpu_stats_t s = stats_of(c.c);
	// The failed put released its reservation and left no temp file; the index matches the disk.
	CHECK(s.chunks == uint64_t(stored));
	CHECK(s.used_bytes == disk_use(m.dir.path).bytes);
	CHECK(s.evict_errors == 1);
	for (int i = 0; i < stored; i++)
		CHECK(verify_key(c.c, "c" + std::to_string(i)) == 1);
	// Room made by a remove is usable again.
	REQUIRE(kvgpu_remove(c.c, "c0") == 0);
	CHECK(put_key(c.c, "after", kChunk) == 0);
	CHECK(verify_key(c.c, "after") == 1);
}

TEST_CASE(
	"store: direct_io ON on a filesystem without O_DIRECT is refused at open; AUTO works buffered")
{
	Mount m("ramfs", nullptr);
	REQUIRE_MESSAGE(m.ok, "mount ramfs: " << std::strerror(errno));
	kvgpu_options o = store_options(1 << 20);
	o.direct_io = KVGPU_DIRECT_ON;
	{
		Ctx c(m.dir.path, o);
		CHECK(c.rc == KVGPU_ERR_DIRECT);
		CHECK(std::string(kvgpu_strerror(KVGPU_ERR_DIRECT)).find("O_DIRECT") !=
		      std::string::npos);
	}
	o.direct_io = KVGPU_DIRECT_AUTO;
	o.evict_policy = KVGPU_EVICT_FIFO2;
	Ctx c(m.dir.path, o);
	REQUIRE(c.rc == 0);
	for (int i = 0; i < 60; i++) {
		REQUIRE(put_key(c.c, "r" + std::to_string(i), kChunk) == 0);
		CHECK(verify_key(c.c, "r0") ==
		      1);  // hit every time: FIFO2 rewrites it (buffered) and keeps it
	}
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.direct_io == 0);
	CHECK(s.reinserts > 0);
	CHECK(s.used_bytes <= (1u << 20));
	CHECK(verify_key(c.c, "r59") == 1);
}
