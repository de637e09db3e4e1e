// The learner's data path: ns per place() + died() from one and two threads (bench label;
// figures are printed, not asserted). The allocation-free check is test_placement's.
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "placement/learner.hpp"

using namespace kvfdp::placement;

namespace {

double run(Learner &l, int threads, uint64_t per_thread)
{
	const auto t0 = std::chrono::steady_clock::now();
	std::vector<std::thread> ts;
	for (int t = 0; t < threads; t++)
		ts.emplace_back([&l, t, per_thread] {
			uint64_t sink = 0;
			for (uint64_t i = 0; i < per_thread; i++) {
				const Key k{static_cast<uint64_t>(t * 16 + i % 16),
					    static_cast<uint8_t>(i % 6)};
				sink += l.place(k, 4096);
				l.died(k, 4096, i);
			}
			if (sink == 1)
				std::puts("");
		});
	for (auto &t : ts)
		t.join();
	const double s =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	return s * 1e9 / static_cast<double>(per_thread * threads);
}

}  // namespace

int main()
{
	LearnerConfig c;
	c.capacity_bytes = 4ull << 30;
	c.ru_bytes = 16 << 20;
	Learner l(c);
	const uint64_t n = 2'000'000;
	std::printf("learner place+died: %.1f ns per write, 1 thread\n", run(l, 1, n));
	std::printf("learner place+died: %.1f ns per write, 2 threads (shared clock and slots)\n",
		    run(l, 2, n));
	(void)l.recompute(1.0);
	std::printf("learner keys: %zu, clock %llu bytes\n", l.groups().size(),
		    static_cast<unsigned long long>(l.clock()));
	return 0;
}
