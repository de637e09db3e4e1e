// Tests of the 7.x ublk feature negotiation: each flag asked for only where GET_FEATURES
// offers it, and a driver without GET_FEATURES asked for none.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

#include "userspace/ublk/features.hpp"

using namespace kvfdp::ublk;

namespace {

constexpr uint64_t kAll7x = kFlagNoAutoPartScan | kFlagSafeStopDev | kFlagBatchIo;

kvfdp::Result<uint64_t> offered(uint64_t flags) { return flags; }

} // namespace

TEST_CASE("ublk: a driver offering the 7.x features gets all three asked for, and no note")
{
	const FeatureChoice c = choose_features(offered(kAll7x | kFlagAutoBufReg | kFlagUserRecovery), FeatureWants{});
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
		CHECK((c.note.find("UBLK_F_NO_AUTO_PART_SCAN") == std::string::npos) == bool(subset & 1));
		CHECK((c.note.find("UBLK_F_SAFE_STOP_DEV") == std::string::npos) == bool(subset & 2));
		CHECK((c.note.find("UBLK_F_BATCH_IO") == std::string::npos) == bool(subset & 4));
		CHECK(c.note.empty() == (subset == 7));
	}
}

TEST_CASE("ublk: a driver without GET_FEATURES (before 6.5) is asked for none of them")
{
	const kvfdp::Result<uint64_t> refused = kvfdp::errno_error(EOPNOTSUPP, "ublk GET_FEATURES");
	const FeatureChoice c = choose_features(refused, FeatureWants{});
	CHECK(c.add_flags == 0);
	CHECK(c.note == "this ublk driver lacks UBLK_F_NO_AUTO_PART_SCAN, UBLK_F_SAFE_STOP_DEV, UBLK_F_BATCH_IO (Linux 7.x)");
}

TEST_CASE("ublk: --no-batch-io leaves BATCH_IO out even where offered, and out of the note")
{
	FeatureWants w;
	w.batch_io = false;
	CHECK(choose_features(offered(kAll7x), w).add_flags == (kFlagNoAutoPartScan | kFlagSafeStopDev));
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
	CHECK(feature_names(1ull << 20 | 1ull << 40) == std::vector<std::string>{"IO_DESC_SIZE", "bit 40"});
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
