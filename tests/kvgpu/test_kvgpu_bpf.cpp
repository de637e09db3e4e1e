// libkvgpu under the real BPF tagger on a loop-device ext4 and XFS: the bytes of every evict
// are counted under the lifetime it was given, and under the chunk file's inode.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bpf/user/devnum.hpp"
#include "bpf/user/tagger.hpp"
#include "kvgpu/chunk_format.hpp"
#include "kvgpu/kvgpu.h"
#include "tests/bpf/test_disk.hpp"
#include "tests/kvgpu/kvgpu_test_util.hpp"
#include "tests/support/skip.hpp"

using namespace kvfdp;
using namespace kvfdp::gpu;
namespace ktest = kvfdp::test;
namespace gtest = kvfdp::gpu::test;

namespace {

struct Evicted {
	std::string key;
	uint64_t bytes = 0;
	int lifetime = 0;
	uint64_t ino = 0;
};

void check_filesystem(const std::string &fstype)
{
	ktest::ScratchFs fs(fstype, 320);
	REQUIRE_MESSAGE(fs.ok(),
			"cannot make the " << fstype << " scratch filesystem: " << fs.why());
	auto t = bpf::Tagger::load(bpf::TaggerOptions{});
	// A refusal (the verifier's) is a failure: root and BTF were checked up front.
	REQUIRE_MESSAGE(t.ok(), "the kernel refused the BPF tagger: "
					<< (t.ok() ? "" : t.error().message())
					<< " (the verifier log, if any, is above)");
	// Counters only: no tag slots, as for any disk kvfdpd does not serve through ublk.
	REQUIRE(t->watch_disk(fs.disk(), 0).ok());
	auto fsdev = bpf::path_fs_dev(fs.mnt());
	REQUIRE(fsdev.ok());

	std::string dir = fs.mnt() + "/kv";
	REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
	kvgpu_options o;
	kvgpu_options_init(&o);
	o.engine = KVGPU_ENGINE_HOST;
	o.direct_io = KVGPU_DIRECT_ON;  // the expectation below is about O_DIRECT writes
	o.slot_bytes = 1u << 20;
	o.slots = 4;
	kvgpu_ctx *c = nullptr;
	REQUIRE_MESSAGE(kvgpu_open(dir.c_str(), &o, &c) == 0, fstype << " refuses O_DIRECT?");

	// Every evict writes its chunk file once with O_DIRECT: the payload zero-padded to 4 KiB
	// and the 4 KiB header block, all after F_SET_RW_HINT, so each byte of file_bytes(n)
	// reaches the disk in a request that carries the lifetime. fallocate writes no data
	// (unwritten extents); the extent conversion, the inode, the directory and the journal
	// are metadata without a hint, counted under class 0 (NOT_SET) with the open-time O_DIRECT
	// probe's one block. So classes 1..5 hold exactly the chunk bytes, class 0 at least them.
	const uint64_t sizes[] = {1u << 20, (3u << 20) + 123, 4096, 1};
	std::vector<Evicted> done;
	uint64_t expected[KVFDP_NR_CLASSES] = {};
	for (int lifetime = KVGPU_LIFETIME_NOT_SET; lifetime <= KVGPU_LIFETIME_EXTREME;
	     lifetime++) {
		// One lifetime at a time, its evicts concurrent: no request ever mixes two classes.
		std::vector<int64_t> tickets;
		std::vector<std::vector<unsigned char>> data;
		for (uint64_t n : sizes) {
			Evicted e{"L" + std::to_string(lifetime) + "-" + std::to_string(n), n,
				  lifetime, 0};
			data.push_back(gtest::pattern(n, uint64_t(lifetime) * 10 + n));
			int64_t tk = kvgpu_evict(c, data.back().data(), n, e.key.c_str(), lifetime,
						 nullptr);
			REQUIRE_MESSAGE(tk > 0, kvgpu_strerror(int(tk)));
			tickets.push_back(tk);
			expected[lifetime] += file_bytes(n);
			done.push_back(e);
		}
		for (int64_t tk : tickets)
			REQUIRE(kvgpu_wait(c, tk) == 0);
	}
	kvgpu_stats_t st{};
	REQUIRE(kvgpu_stats(c, &st) == 0);
	CHECK(st.direct_files == done.size());
	CHECK(st.hint_failures == 0);
	REQUIRE(kvgpu_close(c) == 0);
	::sync();

	auto counters = t->counters(fs.disk());
	REQUIRE(counters.ok());
	for (int k = KVFDP_CLASS_NONE; k < KVFDP_NR_CLASSES; k++)
		CHECK_MESSAGE(counters->write[k].bytes == expected[k],
			      fstype << " class " << k << ": " << counters->write[k].bytes
				     << " bytes tagged, " << expected[k]
				     << " evicted (file_bytes of each chunk)");
	CHECK_MESSAGE(counters->write[KVFDP_CLASS_NOT_SET].bytes >= expected[KVFDP_CLASS_NOT_SET],
		      fstype << " class 0: " << counters->write[0].bytes << " bytes < "
			     << expected[0]);
	MESSAGE(fstype << ": class 0 (metadata + NOT_SET chunks) " << counters->write[0].bytes
		       << " bytes, chunks with lifetime 0: " << expected[0]);

	// Per inode: informational only. On the 6.18 host about half of these io_uring O_DIRECT
	// bytes reach the chunk files' inodes through the tagger's dio-inode source (its matter,
	// reported to bpf/); the per-class counts above are the contract kvgpu relies on.
	if (t->sources().dio_inode) {
		uint64_t attributed = 0, written = 0;
		for (auto &e : done) {
			struct stat sb {};
			REQUIRE(::stat((dir + "/" + key_to_name(e.key)).c_str(), &sb) == 0);
			attributed += t->inode_bytes(*fsdev, sb.st_ino);
			written += file_bytes(e.bytes);
		}
		MESSAGE(fstype
			<< ": " << attributed << " of " << written
			<< " chunk bytes attributed to the chunk files' inodes (not asserted)");
	}
}

// Capabilities, decided before any check: root, BTF, the loop driver.
const ktest::Requires need_root("root", ktest::probe_root("loading BPF and creating loop devices"));
const ktest::Requires need_btf("btf", ktest::probe_btf());
const ktest::Requires need_loop("loop", ktest::probe_scratch_disk());

}  // namespace

TEST_CASE("kvgpu bpf: evictions are counted under the lifetime class they were given (ext4)")
{
	check_filesystem("ext4");
}

TEST_CASE("kvgpu bpf: evictions are counted under the lifetime class they were given (XFS)")
{
	check_filesystem("xfs");
}
