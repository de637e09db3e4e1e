// The twin tests' workload of kvfdpd on a 64 MiB model: two writers of different turnover
// pushed through queue 0's ring, as test_twin_daemon and test_twin_advise feed it.
#pragma once

#include <cstdint>

#include "model/twin/twin.hpp"

namespace kvfdp::test {

// Handle 2 writes 40 MiB once, 128 KiB at a time, between handle 1's rewrites of 8 MiB. Adds
// queue 0's ring; whenever it is half full the thread stops (its last drain applies all
// pushed so far) and starts again; it is stopped at the end. Returns the records pushed.
inline uint64_t push_two_writers(twin::Twin &t)
{
	t.add_rings(1);
	twin::Ring &ring = t.ring(0);
	const uint32_t nlb = 32;  // 128 KiB
	const uint64_t hot = (8ull << 20) / 4096, cold = (40ull << 20) / 4096;
	uint64_t cold_at = 0, pushed = 0, n = 0;
	for (uint64_t i = 0; i < 6000; i++) {
		pushed += ring.push(
			twin::Record{(i * 7 % (hot / nlb)) * nlb, nlb, 1, twin::Op::write, 0});
		if (i % 4 == 0 && cold_at < cold) {
			pushed +=
				ring.push(twin::Record{hot + cold_at, nlb, 2, twin::Op::write, 0});
			cold_at += nlb;
		}
		if (ring.pushed() - n >= ring.capacity() / 2) {
			t.stop();
			n = ring.pushed();
			t.start();
		}
	}
	t.stop();
	return pushed;
}

}  // namespace kvfdp::test
