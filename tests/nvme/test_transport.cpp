// The passthrough transport's pure parts: SQE layout, I/O splitting, the in-flight map,
// and a real SQE128|CQE32 ring on this host.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <map>
#include <random>

#include "nvme/commands.hpp"
#include "nvme/inflight.hpp"
#include "nvme/uring.hpp"
#include "tests/nvme/sync_io.hpp"
#include "tests/support/temp_files.hpp"

using namespace kvfdp::nvme;

TEST_CASE("nvme: prep_uring_cmd fills opcode, cmd_op, fd, user_data and the 72-byte command")
{
	alignas(64) io_uring_sqe sqe[2];
	std::memset(sqe, 0xAB, sizeof(sqe));
	uint8_t buf[4096];
	UringCmd cmd = make_write(1, 0x10, 1, buf, 4096, uint16_t{4});
	prep_uring_cmd(&sqe[0], 7, kUringCmdIo, cmd, 0xDEADBEEFull);
	CHECK(sqe[0].opcode == IORING_OP_URING_CMD);
	CHECK(sqe[0].fd == 7);
	CHECK(sqe[0].cmd_op == 0xC0484E80u);
	CHECK(sqe[0].user_data == 0xDEADBEEFull);
	CHECK(sqe[0].uring_cmd_flags == 0u);
	CHECK(unsigned{sqe[0].buf_index} == 0u);
	CHECK(sqe[0].flags == 0u);
	CHECK(std::memcmp(sqe[0].cmd, &cmd, sizeof(cmd)) == 0);
	// The 8 bytes after the command (end of the 128-byte SQE) are zeroed.
	const uint8_t *tail = sqe[0].cmd + sizeof(cmd);
	for (int i = 0; i < 8; ++i)
		CHECK(tail[i] == 0);

	prep_uring_cmd(&sqe[0], 3, kUringCmdAdmin, cmd, 1, 5);
	CHECK(sqe[0].cmd_op == 0xC0484E82u);
	CHECK(sqe[0].uring_cmd_flags == IORING_URING_CMD_FIXED);
	CHECK(unsigned{sqe[0].buf_index} == 5u);
}

TEST_CASE("nvme: split_io cuts at max_nlb and keeps buffer offsets contiguous")
{
	using kvfdp::test::IoChunk;
	using kvfdp::test::split_io;
	IoChunk c[8];
	size_t n = split_io(1000, 300, 128, 4096, c);
	REQUIRE(n == 3);
	CHECK(c[0].slba == 1000);
	CHECK(c[0].nlb == 128);
	CHECK(c[0].buf_offset == 0);
	CHECK(c[1].slba == 1128);
	CHECK(c[1].buf_offset == 128u * 4096);
	CHECK(c[2].slba == 1256);
	CHECK(c[2].nlb == 44);
	CHECK(c[2].buf_offset == 256u * 4096);

	CHECK(split_io(0, 128, 128, 512, c) == 1);
	CHECK(c[0].nlb == 128);
	// More pieces than room: the count is still the total, only out.size() are written.
	CHECK(split_io(0, 100, 10, 512, std::span<IoChunk>(c, 2)) == 10);
	CHECK(c[1].slba == 10);
	// NLB's 16-bit field caps a piece at 65536 blocks whatever max_nlb says.
	CHECK(split_io(0, 70000, 0, 512, c) == 2);
	CHECK(c[0].nlb == kMaxNlb);
	CHECK(c[1].nlb == 70000 - 65536);
}

TEST_CASE("nvme: InflightMap finds every live key after random inserts and removals")
{
	InflightMap<uint32_t> m(64);
	std::map<uint64_t, uint32_t> ref;
	std::mt19937_64 rng(42);
	for (int step = 0; step < 20000; ++step) {
		bool add = ref.size() < 64 && (ref.empty() || (rng() & 1));
		if (add) {
			uint64_t k = rng() % 4096;
			if (ref.count(k))
				continue;
			uint32_t v = static_cast<uint32_t>(rng());
			REQUIRE(m.insert(k, v));
			ref[k] = v;
		} else {
			auto it = ref.begin();
			std::advance(it, static_cast<long>(rng() % ref.size()));
			uint32_t v = 0;
			REQUIRE(m.take(it->first, v));
			CHECK(v == it->second);
			ref.erase(it);
		}
		REQUIRE(m.size() == ref.size());
	}
	for (auto &[k, v] : ref) {
		uint32_t got = 0;
		REQUIRE(m.take(k, got));
		CHECK(got == v);
	}
	uint32_t none;
	CHECK(!m.take(12345, none));
	CHECK(m.empty());
}

TEST_CASE("nvme: InflightMap refuses inserts beyond its capacity")
{
	InflightMap<int> m(4);
	int added = 0;
	while (m.insert(static_cast<uint64_t>(added), added) && added < 1000)
		++added;
	CHECK(added >= 4);
	CHECK(added < 1000);
}

TEST_CASE("nvme: UringPassthru creates an SQE128|CQE32 ring and reaps by user_data")
{
	auto u = UringPassthru::create(8);
	REQUIRE_MESSAGE(u.ok(), (u.ok() ? "" : u.error().message()));
	CHECK((u->ring().flags & kPassthruRingFlags) == kPassthruRingFlags);
	// NOPs travel the same submit/reap path as passthrough commands.
	for (uint64_t i = 0; i < 3; ++i) {
		io_uring_sqe *sqe = io_uring_get_sqe(&u->ring());
		REQUIRE(sqe);
		io_uring_prep_nop(sqe);
		sqe->user_data = 100 + i;
	}
	CHECK(u->submit() == 3);
	uint64_t sum = 0;
	int got = 0;
	while (got < 3) {
		int r = u->reap(1, [&](uint64_t ud, int res, uint32_t) {
			sum += ud;
			CHECK(res == 0);
		});
		REQUIRE(r > 0);
		got += r;
	}
	CHECK(sum == 303);
	// A uring_cmd on a regular file (no ->uring_cmd) fails with a decoded errno. (Not
	// /dev/null: it accepts uring_cmd as a no-op on recent kernels.)
	const kvfdp::test::TempFile file;
	int fd = ::open(file.path.c_str(), O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0);
	UringCmd c = make_flush(1);
	int res = u->run(fd, kUringCmdIo, c);
	close(fd);
	CHECK(res == -EOPNOTSUPP);
}
