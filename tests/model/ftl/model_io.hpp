// One request on a model device's queue, which completes every request inline (no ring
// round trip): for tests that write through the model and then read its RUH Status.
#pragma once

#include <doctest/doctest.h>
#include <liburing.h>

#include <cstdint>

#include "nvme/device.hpp"

namespace kvfdp::test {

// 0, -errno or an NVMe status, as IoQueue::complete() reports it.
inline int model_io(nvme::IoQueue &q, nvme::IoOp op, uint16_t handle, uint64_t slba, uint32_t nlb,
		    void *buf)
{
	io_uring ring{};  // never touched: the model's prep() finishes inline
	nvme::IoRequest r;
	r.op = op;
	r.handle = handle;
	r.slba = slba;
	r.nlb = nlb;
	r.buf = buf;
	const nvme::Prep p = q.prep(ring, r);
	REQUIRE_FALSE(p.queued);
	return p.result;
}

}  // namespace kvfdp::test
