// kvfdpd request engine: user_data packing, tag-slot matching, class -> handle, splitting at
// the transfer limit, op translation, error mapping, ublk parameters, copy and zero-copy
// buffers and the choice between them.
#include <doctest/doctest.h>

#include <cerrno>
#include <liburing.h>
#include <vector>

#include "tests/kvfdpd/fake_device.hpp"
#include "tests/support/engine_rig.hpp"
#include "nvme/status.hpp"
#include "kvfdpd/daemon/io/io_engine.hpp"
#include "proto/metrics.hpp"
#include "kvfdpd/daemon/io/user_data.hpp"
#include "kvfdpd/ublk/ctrl.hpp"
#include "kvfdpd/ublk/data_mode.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;

TEST_CASE("user_data: tag, kind and sub index round-trip at their widths")
{
	for (uint32_t tag : {0u, 1u, 4095u, 65535u})
		for (UdKind k : {UdKind::ublk, UdKind::device})
			for (uint32_t sub : {0u, 7u, 65535u}) {
				const uint64_t ud = pack_user_data(static_cast<uint16_t>(tag), k,
								   static_cast<uint16_t>(sub));
				const UserData u = unpack_user_data(ud);
				CHECK(u.tag == tag);
				CHECK(u.kind == k);
				CHECK(u.sub == sub);
			}
	CHECK(pack_user_data(1, UdKind::ublk) != pack_user_data(1, UdKind::device));
	static_assert(unpack_user_data(pack_user_data(42, UdKind::device, 3)).sub == 3);
}

using Slots = test::TagSlots;

TEST_CASE("tag slots: a fresh matching slot gives its class once")
{
	Slots s;
	bpf::SlotReader q1 = queue_slot_reader(s.v.data(), 1, 4);  // queue 1 owns slots 4..7
	s.set(4 + 2, 10, 800, 8, KVFDP_CLASS_LONG);
	WriteClass r = classify_write(q1, 2, 800, 8);
	CHECK(!r.stale);
	CHECK(r.cls == KVFDP_CLASS_LONG);
	// Same seq again: the slot was not rewritten for this request -> stale, default class.
	r = classify_write(q1, 2, 800, 8);
	CHECK(r.stale);
	CHECK(r.cls == KVFDP_CLASS_NOT_SET);
}

TEST_CASE("tag slots: sector or length mismatch, seq 0 and queue offsets are stale")
{
	Slots s;
	bpf::SlotReader q0 = queue_slot_reader(s.v.data(), 0, 4);
	CHECK(classify_write(q0, 0, 0, 8).stale);  // never written
	s.set(1, 5, 100, 8, KVFDP_CLASS_SHORT);
	CHECK(classify_write(q0, 1, 108, 8).stale);
	s.set(1, 6, 100, 8, KVFDP_CLASS_SHORT);
	CHECK(classify_write(q0, 1, 100, 16).stale);
	s.set(1, 7, 100, 8, KVFDP_CLASS_SHORT);
	CHECK(classify_write(q0, 1, 100, 8).cls == KVFDP_CLASS_SHORT);
	// Queue 1's reader does not see queue 0's slot 1.
	bpf::SlotReader q1 = queue_slot_reader(s.v.data(), 1, 4);
	CHECK(classify_write(q1, 1, 100, 8).stale);
	CHECK(classify_write(q0, 9, 100, 8).stale);  // tag beyond depth
	// An out-of-range class byte falls back to the default.
	s.set(2, 8, 0, 8, 77);
	WriteClass r = classify_write(q0, 2, 0, 8);
	CHECK(!r.stale);
	CHECK(r.cls == KVFDP_CLASS_NOT_SET);
	// A seq that went backwards (tagger reloaded) still counts as changed.
	s.set(1, 3, 200, 8, KVFDP_CLASS_MEDIUM);
	CHECK(classify_write(q0, 1, 200, 8).cls == KVFDP_CLASS_MEDIUM);
}

TEST_CASE("tag slots: without a tagger nothing is stale")
{
	bpf::SlotReader none = queue_slot_reader(nullptr, 0, 4);
	WriteClass r = classify_write(none, 0, 0, 8);
	CHECK(!r.stale);
	CHECK(r.cls == KVFDP_CLASS_NOT_SET);
}

TEST_CASE("errno: NVMe statuses map to what the block layer understands")
{
	CHECK(nvme::result_to_errno(0) == 0);
	CHECK(nvme::result_to_errno(0x4081) == -ENOSPC);      // capacity exceeded, DNR
	CHECK(nvme::result_to_errno(0x4002) == -EOPNOTSUPP);  // invalid field, DNR
	CHECK(nvme::result_to_errno(0x0080) == -EREMOTEIO);   // LBA out of range
	CHECK(nvme::result_to_errno(0x0281) == -ENODATA);
	CHECK(nvme::result_to_errno(0x0282) == -EILSEQ);
	CHECK(nvme::result_to_errno(0x0370) == -ENOLINK);  // path error
	CHECK(nvme::result_to_errno(0x0006) == -EIO);      // internal error
	CHECK(nvme::result_to_errno(0x2006) == -EIO);      // More bit ignored
	CHECK(nvme::result_to_errno(-EINVAL) == -EIO);
	CHECK(nvme::result_to_errno(-ENOSPC) == -ENOSPC);
	CHECK(nvme::result_to_errno(0x010b) ==
	      -EIO);  // SC 0x0B is only generic's Invalid Namespace
	CHECK(nvme::result_to_errno(0x000b) == -EOPNOTSUPP);
	CHECK(nvme::result_to_errno(0x0180) == -EOPNOTSUPP);          // conflicting attributes
	CHECK(nvme::result_to_errno(0x0083) == -EBADE);               // reservation conflict
	CHECK(nvme::result_to_errno(0x0287) == -ENODATA);             // deallocated or unwritten
	CHECK(nvme::result_to_errno(0x0080 | 0x1800) == -EREMOTEIO);  // CRD ignored
}

TEST_CASE("ublk params: derived from the namespace")
{
	ublk::ParamInput in;
	in.lba_size = 4096;
	in.nlb = 262144;  // 1 GiB
	in.max_transfer = 512 * 1024;
	in.io_buf_bytes = 512 * 1024;
	in.volatile_cache = true;
	auto p = ublk::make_params(in);
	REQUIRE(p.ok());
	CHECK(p->basic.logical_bs_shift == 12);
	CHECK(p->basic.physical_bs_shift == 12);
	CHECK(p->basic.max_sectors == 1024);
	in.max_transfer = 508 * 1024;  // QEMU on 6.12: (max_segments - 1) pages
	p = ublk::make_params(in);
	REQUIRE(p.ok());
	CHECK(p->basic.max_sectors == 1016);  // requests fit one NVMe command
	in.max_transfer = 512 * 1024;
	p = ublk::make_params(in);
	REQUIRE(p.ok());
	CHECK(p->basic.dev_sectors == (1ull << 30) / 512);
	CHECK((p->basic.attrs & ublk::kAttrVolatileCache) != 0);
	CHECK((p->basic.attrs & ublk::kAttrFua) == 0);
	CHECK((p->types & ublk::kParamTypeDiscard) != 0);
	CHECK(p->discard.discard_granularity == 4096);
	CHECK(p->discard.max_discard_segments == 1);
	CHECK(p->discard.max_write_zeroes_sectors == 65536u * 8);
	CHECK(p->discard.max_discard_sectors > 0);
	in.lba_size = 512;
	in.nlb = 1000;
	p = ublk::make_params(in);
	REQUIRE(p.ok());
	CHECK(p->basic.logical_bs_shift == 9);
	CHECK(p->basic.physical_bs_shift == 12);
	CHECK(p->discard.max_write_zeroes_sectors == 1000);  // never beyond the device
	in.lba_size = 8192;
	CHECK(!ublk::make_params(in).ok());
}

namespace {

struct RecordingQueue {
	test::NullQueue ioq{true};
};

// The rig over a null queue that records every request and completes it inline (as the
// model backend does): 2^18 LBAs, 8 handles.
struct Rig : RecordingQueue, test::EngineRig {
	explicit Rig(uint32_t max_transfer, bool zero_copy = false)
	    : test::EngineRig(ioq, config(max_transfer, zero_copy))
	{
	}
	static EngineConfig config(uint32_t max_transfer, bool zero_copy)
	{
		EngineConfig ec;
		ec.max_transfer = max_transfer;
		ec.nlb = 1 << 18;
		ec.nruh = 8;
		ec.zero_copy = zero_copy;
		return ec;
	}
};

}  // namespace

TEST_CASE("engine: a tagged write goes to its class's handle, split at max_transfer")
{
	Rig rig(128 * 1024);
	rig.slots.set(1, 1, 2048, 2048, KVFDP_CLASS_LONG);  // 1 MiB at LBA 256
	rig.request_sectors(1, ublk::kOpWrite, 2048, 2048);
	REQUIRE(rig.ioq.reqs.size() == 8);
	for (size_t i = 0; i < 8; i++) {
		const nvme::IoRequest &r = rig.ioq.reqs[i];
		CHECK(r.op == nvme::IoOp::write);
		CHECK(r.handle == 3);
		CHECK(r.nlb == 32);
		CHECK(r.slba == 256 + 32 * i);
		CHECK(r.buf == rig.bufs[1] + i * 128 * 1024);
		CHECK(r.buf_index == 1);
		CHECK(unpack_user_data(r.user_data).sub == i);
		CHECK(unpack_user_data(r.user_data).tag == 1);
		CHECK(unpack_user_data(r.user_data).kind == UdKind::device);
	}
	REQUIRE(rig.commits.v.size() == 1);
	CHECK(rig.commits.v[0] == std::pair<uint16_t, int>{1, 1 << 20});
	CHECK(rig.ctr.class_bytes[KVFDP_CLASS_LONG].get() == 1 << 20);
	CHECK(rig.ctr.handle_bytes[3].get() == 1 << 20);
	CHECK(rig.ctr.stale_tags.get() == 0);
	CHECK(rig.ctr.copied_bytes.get() ==
	      1 << 20);  // copy mode: the driver copied it into bufs[1]
}

TEST_CASE("engine: zero copy addresses the request's registered pages by offset, copies nothing")
{
	Rig rig(128 * 1024, true);
	rig.slots.set(2, 1, 2048, 1024, KVFDP_CLASS_SHORT);  // 512 KiB at LBA 256
	rig.request_sectors(2, ublk::kOpWrite, 2048, 1024);
	rig.request_sectors(3, ublk::kOpRead, 0, 256);  // 128 KiB
	rig.request_sectors(1, ublk::kOpWriteZeroes, 0, 8);
	REQUIRE(rig.ioq.reqs.size() == 6);
	for (size_t i = 0; i < 4; i++) {
		const nvme::IoRequest &r = rig.ioq.reqs[i];
		CHECK(r.op == nvme::IoOp::write);
		CHECK(r.buf_index == 2);  // the slot the driver registered tag 2's request at
		CHECK(reinterpret_cast<uintptr_t>(r.buf) == i * 128 * 1024);
		CHECK(r.slba == 256 + 32 * i);
	}
	CHECK(rig.ioq.reqs[4].op == nvme::IoOp::read);
	CHECK(rig.ioq.reqs[4].buf_index == 3);
	CHECK(rig.ioq.reqs[4].buf == nullptr);  // offset 0 of tag 3's request
	CHECK(rig.ioq.reqs[5].op == nvme::IoOp::write_zeroes);
	CHECK(rig.ioq.reqs[5].buf_index == -1);  // no data, no buffer
	REQUIRE(rig.commits.v.size() == 3);
	CHECK(rig.commits.v[0] == std::pair<uint16_t, int>{2, 512 * 1024});
	CHECK(rig.commits.v[1] == std::pair<uint16_t, int>{3, 128 * 1024});
	CHECK(rig.ctr.copied_bytes.get() == 0);
	CHECK(rig.ctr.write_bytes.get() == 512 * 1024);
	CHECK(rig.ctr.handle_bytes[1].get() == 512 * 1024);  // SHORT's handle in the default map
}

TEST_CASE(
	"data mode: zero copy only where the driver has UBLK_F_AUTO_BUF_REG and the backend is passthru")
{
	using ublk::DataMode;
	const Result<uint64_t> has =
		ublk::kFlagAutoBufReg | ublk::kFlagSupportZeroCopy | ublk::kFlagUserRecovery;
	ublk::DataModeChoice c = ublk::choose_data_mode(has, "passthru", true);
	CHECK(c.mode == DataMode::zero_copy);
	CHECK(c.add_flags == ublk::kFlagAutoBufReg);
	CHECK(c.note.empty());
	// 6.12: GET_FEATURES answers, with neither zero-copy feature.
	c = ublk::choose_data_mode(
		Result<uint64_t>(ublk::kFlagUserRecovery | ublk::kFlagCmdIoctlEncode), "passthru",
		true);
	CHECK(c.mode == DataMode::copy);
	CHECK(c.add_flags == 0);
	CHECK(c.note.find("lacks UBLK_F_AUTO_BUF_REG") != std::string::npos);
	// 6.15: only per-request registration.
	c = ublk::choose_data_mode(
		Result<uint64_t>(ublk::kFlagSupportZeroCopy | ublk::kFlagUserRecovery), "passthru",
		true);
	CHECK(c.mode == DataMode::zero_copy_reg);
	CHECK(c.add_flags == ublk::kFlagSupportZeroCopy);
	CHECK(c.note.empty());
	// Both: AUTO_BUF_REG, unless registration is asked for.
	CHECK(ublk::choose_data_mode(has, "passthru", true, true).mode == DataMode::zero_copy_reg);
	// A driver older than GET_FEATURES: copy, with a note (never an error).
	c = ublk::choose_data_mode(
		Result<uint64_t>(make_error(std::errc::invalid_argument, "GET_FEATURES")),
		"passthru", true);
	CHECK(c.mode == DataMode::copy);
	CHECK(c.note.find("GET_FEATURES") != std::string::npos);
	c = ublk::choose_data_mode(has, "model", true);
	CHECK(c.mode == DataMode::copy);
	CHECK(c.note.find("model backend") != std::string::npos);
	c = ublk::choose_data_mode(has, "passthru", false);
	CHECK(c.mode == DataMode::copy);
	CHECK(c.note.find("--no-zero-copy") != std::string::npos);
	CHECK(ublk::data_mode_of(ublk::kFlagAutoBufReg | ublk::kFlagUserRecovery) ==
	      DataMode::zero_copy);
	CHECK(ublk::data_mode_of(ublk::kFlagUserRecovery) == DataMode::copy);
	CHECK(ublk::data_mode_of(ublk::kFlagSupportZeroCopy) == DataMode::zero_copy_reg);
	CHECK(ublk::is_zero_copy(DataMode::zero_copy_reg));
	CHECK(!ublk::is_zero_copy(DataMode::copy));
	CHECK(std::string(ublk::data_mode_name(DataMode::zero_copy)) == "zero-copy");
}

TEST_CASE("engine: the ring is sized from the engine's own worst case")
{
	EngineConfig ec;
	ec.io_buf_bytes = 512 * 1024;
	ec.lba_size = 4096;
	ec.max_transfer = 512 * 1024;
	CHECK(IoEngine::max_subs_per_request(ec) == 1);
	ec.max_transfer = 128 * 1024;
	CHECK(IoEngine::max_subs_per_request(ec) == 4);
	ec.max_transfer = 508 * 1024;  // (max_segments - 1) pages: a 512 KiB request takes two
	CHECK(IoEngine::max_subs_per_request(ec) == 2);
	Rig rig(128 * 1024);
	rig.request_sectors(0, ublk::kOpWrite, 0,
			    2048);  // the largest request (1 MiB buffers) at 128 KiB
	CHECK(rig.ioq.reqs.size() == 8);
}

TEST_CASE("engine: an untagged write is stale and lands on handle 0")
{
	Rig rig(512 * 1024);
	rig.request_sectors(0, ublk::kOpWrite, 0, 8);
	REQUIRE(rig.ioq.reqs.size() == 1);
	CHECK(rig.ioq.reqs[0].handle == 0);
	CHECK(rig.ctr.stale_tags.get() == 1);
	CHECK(rig.ctr.class_bytes[KVFDP_CLASS_NOT_SET].get() == 4096);
	CHECK(rig.commits.v.back().second == 4096);
}

TEST_CASE("engine: a policy change moves the class without restarting")
{
	Rig rig(512 * 1024);
	auto m = kvfdp::placement::default_map(8);
	m[KVFDP_CLASS_SHORT] = 6;
	rig.policy.publish(m);
	rig.slots.set(2, 9, 64, 8, KVFDP_CLASS_SHORT);
	rig.request_sectors(2, ublk::kOpWrite, 64, 8);
	REQUIRE(rig.ioq.reqs.size() == 1);
	CHECK(rig.ioq.reqs[0].handle == 6);
}

TEST_CASE("engine: read, flush, discard and write zeroes become their NVMe commands")
{
	Rig rig(512 * 1024);
	rig.request_sectors(0, ublk::kOpRead, 16, 16);
	rig.request_sectors(1, ublk::kOpFlush, 0, 0);
	rig.request_sectors(2, ublk::kOpDiscard, 8192, 8192);            // 4 MiB
	rig.request_sectors(3, ublk::kOpWriteZeroes, 0, 65536 * 8 + 8);  // 65537 LBAs: two commands
	REQUIRE(rig.ioq.reqs.size() == 5);
	CHECK(rig.ioq.reqs[0].op == nvme::IoOp::read);
	CHECK(rig.ioq.reqs[0].slba == 2);
	CHECK(rig.ioq.reqs[0].nlb == 2);
	CHECK(rig.ioq.reqs[1].op == nvme::IoOp::flush);
	CHECK(rig.ioq.reqs[2].op == nvme::IoOp::deallocate);
	CHECK(rig.ioq.reqs[2].slba == 1024);
	CHECK(rig.ioq.reqs[2].nlb == 1024);
	CHECK(rig.ioq.reqs[3].op == nvme::IoOp::write_zeroes);
	CHECK(rig.ioq.reqs[3].nlb == 65536);
	CHECK(rig.ioq.reqs[4].nlb == 1);
	CHECK(rig.ioq.reqs[4].slba == 65536);
	REQUIRE(rig.commits.v.size() == 4);
	CHECK(rig.commits.v[0].second == 16 * 512);
	CHECK(rig.commits.v[1].second == 0);
	CHECK(rig.commits.v[2].second == 0);
	CHECK(rig.commits.v[3].second == 0);
	CHECK(rig.ctr.discards.get() == 1);
	CHECK(rig.ctr.discard_bytes.get() == 4u << 20);
	CHECK(rig.ctr.flushes.get() == 1);
}

TEST_CASE("engine: device errors and bad requests complete with an errno")
{
	Rig rig(512 * 1024);
	rig.ioq.fail_next = 0x4081;  // capacity exceeded
	rig.request_sectors(0, ublk::kOpWrite, 0, 8);
	CHECK(rig.commits.v.back() == std::pair<uint16_t, int>{0, -ENOSPC});
	rig.request_sectors(1, ublk::kOpWrite, (1ull << 21) - 8, 16);  // runs past the end
	CHECK(rig.commits.v.back().second == -EIO);
	rig.request_sectors(2, ublk::kOpWrite, 0, 4);  // not a whole LBA
	CHECK(rig.commits.v.back().second == -EIO);
	rig.request_sectors(3, ublk::kOpWriteSame, 0, 8);
	CHECK(rig.commits.v.back().second == -EOPNOTSUPP);
	CHECK(rig.ctr.errors.get() == 3);
	CHECK(rig.engine->device_inflight() == 0);
}

TEST_CASE("metrics: Prometheus text carries the counters")
{
	proto::MetricsInput m;
	m.counters.class_bytes[KVFDP_CLASS_SHORT] = 4096;
	m.counters.stale_tags = 3;
	m.nruh = 2;
	m.pids = {0, 1};
	m.tagger_active = true;
	const std::string t = proto::format_metrics(m);
	CHECK(t.find("kvfdp_class_bytes_total{class=\"short\"} 4096\n") != std::string::npos);
	CHECK(t.find("kvfdp_stale_tags_total 3\n") != std::string::npos);
	CHECK(t.find("kvfdp_handle_bytes_total{handle=\"1\",pid=\"1\"} 0\n") != std::string::npos);
	CHECK(t.find("kvfdp_tagger_active 1\n") != std::string::npos);
	CHECK(t.find("# TYPE kvfdp_io_total counter\n") != std::string::npos);
	// Serving DEGRADED (no tagger): the gauge the alert rule kvfdp-alerts.yml fires on.
	m.tagger_active = false;
	const std::string d = proto::format_metrics(m);
	CHECK(d.find("# TYPE kvfdp_tagger_active gauge\nkvfdp_tagger_active 0\n") !=
	      std::string::npos);
}
