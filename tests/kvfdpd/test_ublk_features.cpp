// Tests of the 7.x ublk feature negotiation: each flag asked for only where GET_FEATURES
// offers it, and a driver without GET_FEATURES asked for none.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>
#include <liburing.h>
#include <string>
#include <system_error>
#include <vector>

#include "kvfdpd/ublk/features.hpp"
#include "kvfdpd/ublk/io_cmd.hpp"

using namespace kvfdp::ublk;

namespace {

constexpr uint64_t kAll7x = kFlagNoAutoPartScan | kFlagSafeStopDev | kFlagBatchIo;

kvfdp::Result<uint64_t> offered(uint64_t flags)
{
	return flags;
}

}  // namespace

TEST_CASE("ublk: a driver offering the 7.x features gets all three asked for, and no note")
{
	const FeatureChoice c = choose_features(
		offered(kAll7x | kFlagAutoBufReg | kFlagUserRecovery), FeatureWants{});
	CHECK(c.add_flags == kAll7x);
	CHECK(c.note.empty());
}

TEST_CASE("ublk: a flag is asked for only where GET_FEATURES offers it")
{
	// Every subset of the three, with unrelated bits around them.
	for (uint64_t subset = 0; subset < 8; subset++) {
		uint64_t have = kFlagCmdIoctlEncode | kFlagUserRecovery;
		if (subset & 1)
			have |= kFlagNoAutoPartScan;
		if (subset & 2)
			have |= kFlagSafeStopDev;
		if (subset & 4)
			have |= kFlagBatchIo;
		CAPTURE(have);
		const FeatureChoice c = choose_features(offered(have), FeatureWants{});
		CHECK(c.add_flags == (have & kAll7x));
		CHECK((c.note.find("UBLK_F_NO_AUTO_PART_SCAN") == std::string::npos) ==
		      bool(subset & 1));
		CHECK((c.note.find("UBLK_F_SAFE_STOP_DEV") == std::string::npos) ==
		      bool(subset & 2));
		CHECK((c.note.find("UBLK_F_BATCH_IO") == std::string::npos) == bool(subset & 4));
		CHECK(c.note.empty() == (subset == 7));
	}
}

TEST_CASE("ublk: a driver without GET_FEATURES (before 6.5) is asked for none of them")
{
	const kvfdp::Result<uint64_t> refused = kvfdp::errno_error(EOPNOTSUPP, "ublk GET_FEATURES");
	const FeatureChoice c = choose_features(refused, FeatureWants{});
	CHECK(c.add_flags == 0);
	CHECK(c.note ==
	      "this ublk driver lacks UBLK_F_NO_AUTO_PART_SCAN, UBLK_F_SAFE_STOP_DEV, UBLK_F_BATCH_IO (Linux 7.x)");
}

TEST_CASE("ublk: --no-batch-io leaves BATCH_IO out even where offered, and out of the note")
{
	FeatureWants w;
	w.batch_io = false;
	CHECK(choose_features(offered(kAll7x), w).add_flags ==
	      (kFlagNoAutoPartScan | kFlagSafeStopDev));
	const FeatureChoice old = choose_features(offered(kFlagAutoBufReg), w);
	CHECK(old.add_flags == 0);
	CHECK(old.note.find("BATCH_IO") == std::string::npos);
	CHECK(old.note.find("UBLK_F_SAFE_STOP_DEV") != std::string::npos);
}

TEST_CASE("ublk: feature bits are named as linux/ublk_cmd.h names them, unknown ones by bit")
{
	CHECK(feature_names(0).empty());
	CHECK(feature_names(kFlagUserRecovery | kFlagCmdIoctlEncode | kFlagAutoBufReg) ==
	      std::vector<std::string>{"USER_RECOVERY", "CMD_IOCTL_ENCODE", "AUTO_BUF_REG"});
	CHECK(feature_names(kFlagBatchIo | kFlagSafeStopDev | kFlagNoAutoPartScan) ==
	      std::vector<std::string>{"BATCH_IO", "SAFE_STOP_DEV", "NO_AUTO_PART_SCAN"});
	CHECK(feature_names(1ull << 20 | 1ull << 40) ==
	      std::vector<std::string>{"IO_DESC_SIZE", "bit 40"});
}

TEST_CASE("ublk: the batch commands' element layouts and opcodes")
{
	// The driver reads elem_bytes per element: 8 without a buffer address, 16 with one.
	CHECK(sizeof(BatchElemHeader) == 8);
	CHECK(sizeof(BatchElem) == 16);
	CHECK(kUIoCommitIoCmds == 0xc0107526u);
	CHECK((kUIoPrepIoCmds & 0xff) == kIoPrepIoCmds);
	CHECK(kUCmdTryStopDev == 0xc0207517u);
}

TEST_CASE(
	"ublk: batch commands carry their elements by address, the fetch is multishot with selected buffers")
{
	alignas(16) uint8_t elems[4 * sizeof(BatchElem)] = {};
	// Copy mode: 16-byte elements with the buffer address after the header.
	put_batch_elem(elems, sizeof(BatchElem), 2, 7, 7, -5, 0x1000);
	BatchElem e{};
	std::memcpy(&e, elems + 2 * sizeof(BatchElem), sizeof(e));
	CHECK(e.header.tag == 7);
	CHECK(e.header.buf_index == 7);
	CHECK(e.header.result == -5);
	CHECK(e.buf_addr == 0x1000);
	// Zero copy: 8-byte elements, nothing written past the header.
	uint8_t small[3 * sizeof(BatchElemHeader)];
	std::memset(small, 0xee, sizeof(small));
	put_batch_elem(small, sizeof(BatchElemHeader), 1, 3, 3, 4096, 0x2000);
	BatchElemHeader h{};
	std::memcpy(&h, small + sizeof(BatchElemHeader), sizeof(h));
	CHECK(h.tag == 3);
	CHECK(h.result == 4096);
	CHECK(small[2 * sizeof(BatchElemHeader)] == 0xee);

	io_uring_sqe sqe[2];
	prep_batch_cmd(sqe[0], 9, kUIoCommitIoCmds, 1, kBatchFHasBufAddr, 3, sizeof(BatchElem),
		       elems, 42);
	CHECK(sqe[0].opcode == IORING_OP_URING_CMD);
	CHECK(sqe[0].cmd_op == kUIoCommitIoCmds);
	CHECK(sqe[0].addr == reinterpret_cast<uintptr_t>(elems));
	CHECK(sqe[0].len == 3 * sizeof(BatchElem));
	BatchIo b{};
	std::memcpy(&b, sqe[0].cmd, sizeof(b));
	CHECK(b.q_id == 1);
	CHECK(b.flags == kBatchFHasBufAddr);
	CHECK(b.nr_elem == 3);
	CHECK(b.elem_bytes == sizeof(BatchElem));

	prep_batch_fetch(sqe[0], 9, 2, 0, 64, 43);
	CHECK(sqe[0].cmd_op == kUIoFetchIoCmds);
	CHECK((sqe[0].flags & IOSQE_BUFFER_SELECT) != 0);
	CHECK(static_cast<unsigned>(sqe[0].buf_group) == 0u);
	CHECK(sqe[0].uring_cmd_flags == kUringCmdMultishot);
	std::memcpy(&b, sqe[0].cmd, sizeof(b));
	CHECK(b.q_id == 2);
	CHECK(b.flags == 0);  // the driver refuses any flag on a fetch
	CHECK(b.elem_bytes == 2);
	CHECK(b.nr_elem == 64);
}
