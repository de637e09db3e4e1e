// The steps of a start, timed: one line at ready says where a (re)start spent its time
// (docs/deploy.md "kill -9 and restart" reads it).
#pragma once

#include <chrono>
#include <string>

namespace kvfdp::daemon {

class StartSteps {
public:
	// Takes the time from exec to now (the process's start time, /proc/self/stat field 22,
	// in clock ticks since boot, against CLOCK_BOOTTIME).
	StartSteps();
	void mark(const char *step)
	{
		const auto now = std::chrono::steady_clock::now();
		text_ += (text_.empty() ? "" : ", ") + std::string(step) + " " +
			 std::to_string(ms(last_, now));
		last_ = now;
	}
	// "T ms after exec (ms per step: main M, checks C, ...)": main is from the process's start
	// (its fork; one clock tick, 10 ms, of resolution) to main(), left out where /proc is not
	// readable.
	[[nodiscard]] std::string line() const
	{
		const long main_ms = ms(t0_, last_);
		if (exec_ms_ < 0)
			return std::to_string(main_ms) + " ms after main (ms per step: " + text_ +
			       ")";
		return std::to_string(exec_ms_ + main_ms) + " ms after exec (ms per step: main " +
		       std::to_string(exec_ms_) + ", " + text_ + ")";
	}

private:
	static long ms(std::chrono::steady_clock::time_point a,
		       std::chrono::steady_clock::time_point b)
	{
		return static_cast<long>(
			std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
	}
	std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now(), last_ = t0_;
	std::string text_;
	long exec_ms_ = -1;
};

}  // namespace kvfdp::daemon
