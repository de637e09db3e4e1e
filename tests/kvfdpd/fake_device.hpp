// Test-only devices for the daemon's engine tests and bench: a null IoQueue that completes
// every request inline (like the model backend) and records what it was asked. A mock,
// because these tests drive the request engine without the ublk driver or an NVMe device;
// the real path runs in the daemon_* VM scenarios.
#pragma once

#include <cerrno>
#include <vector>

#include "nvme/device.hpp"

namespace kvfdp::test {

class NullQueue final : public nvme::IoQueue {
public:
	// record: keep every request (tests); off for the bench, which must not allocate.
	explicit NullQueue(bool record) : record_(record) {}
	nvme::Prep prep(io_uring &, const nvme::IoRequest &req) override
	{
		if (record_)
			reqs.push_back(req);
		count++;
		if (fail_next) {
			const int r = fail_next;
			fail_next = 0;
			return nvme::Prep{false, r};
		}
		return nvme::Prep{false, 0};
	}
	int complete(const io_uring_cqe &) override { return -EINVAL; }

	std::vector<nvme::IoRequest> reqs;
	uint64_t count = 0;
	int fail_next = 0;  // result of the next prep (e.g. an NVMe status)

private:
	bool record_;
};

}  // namespace kvfdp::test
