// EngineRig: one queue of kvfdpd's request engine (IoEngine) over a test's IoQueue, with 4
// tags of 1 MiB buffers, tag slots the test sets, the default class map and every commit
// recorded. The engine tests (tests/kvfdpd/test_engine.cpp) and the stripe tests
// (tests/nvme/test_stripe.cpp) drive it; the ublk driver is not involved, so the requests
// are the test's own descriptors.
#pragma once

#include <doctest/doctest.h>

#include <liburing.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "bpf/tag.h"
#include "nvme/device.hpp"
#include "kvfdpd/daemon/io/queue_counters.hpp"
#include "kvfdpd/daemon/io/io_engine.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/daemon/io/write_class.hpp"
#include "kvfdpd/ublk/uapi.hpp"

namespace kvfdp::test {

// Every commit the engine makes, in order: (tag, result).
struct Commits final : daemon::Committer {
	std::vector<std::pair<uint16_t, int>> v;
	void commit(uint16_t tag, int result) override { v.emplace_back(tag, result); }
};

// Two queues of 4 tag slots, as the tagger's BPF map lays them out (queue * depth + tag).
struct TagSlots {
	std::vector<kvfdp_tag_slot> v = std::vector<kvfdp_tag_slot>(2 * 4);
	uint64_t last_seq = 0;
	// Writes slot idx as the tagger does, seq last.
	void set(unsigned idx, uint64_t seq, uint64_t sector, uint32_t sectors, uint8_t cls)
	{
		v[idx].sector = sector;
		v[idx].sectors = sectors;
		v[idx].cls = cls;
		v[idx].source = KVFDP_SRC_BIO_HINT;
		v[idx].seq = seq;
		last_seq = seq;
	}
	// set() with the next sequence number.
	void set_next(unsigned idx, uint64_t sector, uint32_t sectors, uint8_t cls)
	{
		set(idx, last_seq + 1, sector, sectors, cls);
	}
};

inline constexpr uint32_t kRigTags = 4;
inline constexpr uint32_t kRigBufBytes = 1 << 20;

// The engine of queue 0 over ioq. cfg's depth, io_buf_bytes and lba_size are the rig's (4
// tags, 1 MiB, 4096); the rest (max_transfer, nlb, nruh, zero_copy, stripe, ...) is the
// test's. ring_flags: the rig's io_uring setup flags (the engine preps no SQE of its own
// on it in these tests).
struct EngineRig {
	io_uring ring{};
	std::vector<ublk::IoDesc> descs = std::vector<ublk::IoDesc>(kRigTags);
	std::vector<std::vector<uint8_t>> mem =
		std::vector<std::vector<uint8_t>>(kRigTags, std::vector<uint8_t>(kRigBufBytes));
	std::vector<uint8_t *> bufs;
	TagSlots slots;
	bpf::SlotReader tags = daemon::queue_slot_reader(slots.v.data(), 0, kRigTags);
	daemon::PolicyTable policy;
	daemon::QueueCounters ctr;
	Commits commits;
	daemon::EngineConfig ec;
	std::unique_ptr<daemon::IoEngine> engine;

	EngineRig(nvme::IoQueue &ioq, daemon::EngineConfig cfg, unsigned ring_flags = 0) : ec(cfg)
	{
		REQUIRE(io_uring_queue_init(8, &ring, ring_flags) == 0);
		for (auto &m : mem)
			bufs.push_back(m.data());
		policy.publish(kvfdp::placement::default_map(ec.nruh));
		ec.depth = kRigTags;
		ec.io_buf_bytes = kRigBufBytes;
		ec.lba_size = 4096;
		engine = std::make_unique<daemon::IoEngine>(ec, ring, ioq, descs.data(),
							    ec.zero_copy ? nullptr : bufs.data(),
							    tags, policy, ctr, commits);
	}
	~EngineRig() { io_uring_queue_exit(&ring); }
	EngineRig(const EngineRig &) = delete;
	EngineRig &operator=(const EngineRig &) = delete;

	// A ublk request of op over sectors at sector on tag, started.
	void request_sectors(uint16_t tag, uint8_t op, uint64_t sector, uint32_t sectors)
	{
		descs[tag] = ublk::IoDesc{};
		descs[tag].op_flags = op;
		descs[tag].nr_sectors = sectors;
		descs[tag].start_sector = sector;
		engine->start(tag);
	}
	// The same in 4096-byte LBAs.
	void request(uint16_t tag, uint8_t op, uint64_t lba, uint32_t nlb)
	{
		request_sectors(tag, op, lba * 8, nlb * 8);
	}
	// A write of nlb LBAs at lba whose tag slot says cls.
	void write(uint16_t tag, uint64_t lba, uint32_t nlb, uint8_t cls)
	{
		slots.set_next(tag, lba * 8, nlb * 8, cls);
		request(tag, ublk::kOpWrite, lba, nlb);
	}
};

}  // namespace kvfdp::test
