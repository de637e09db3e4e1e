// Window: the slots and the reply's records.
#include "model/twin/window.hpp"

#include <algorithm>

#include "model/twin/sampler.hpp"

namespace kvfdp::twin {

// The window's ops on the wire are twin::Op's values.
static_assert(uint8_t(Op::write) == uint8_t(proto::TwinWindowOp::write));
static_assert(uint8_t(Op::discard) == uint8_t(proto::TwinWindowOp::discard));
static_assert(uint8_t(Op::write_zeroes) == uint8_t(proto::TwinWindowOp::write_zeroes));
// The plan's share of the bound buys records of this size.
static_assert(sizeof(Record) + sizeof(uint32_t) == kWindowRecordBytes);

Window::Window(uint64_t capacity)
    : capacity_(capacity), slots_(capacity ? new Record[capacity] : nullptr),
      times_(capacity ? new uint32_t[capacity]() : nullptr)
{
}

void Window::fill(proto::TwinWindow &w, uint32_t now_ms, uint64_t from, uint64_t max) const
{
	const uint64_t n = size();
	const uint64_t oldest = total_ - n;
	const uint64_t begin = std::clamp(from, oldest, total_) - oldest;  // index among those held
	const uint64_t end = begin + std::min(max, n - begin);
	w.capacity = capacity_;
	w.total = total_;
	w.first = oldest + begin;
	w.next = oldest + end;
	w.records.clear();
	w.records.reserve(end - begin);
	for (uint64_t i = begin; i < end; i++) {
		const Record &r = at(i);
		w.records.push_back(
			{r.slba, r.nlb, r.handle, static_cast<proto::TwinWindowOp>(r.op)});
	}
	// Unsigned differences: right across the 32-bit wrap of the times.
	w.span_ms = n ? static_cast<uint32_t>(time_at(n - 1) - time_at(0)) : 0;
	w.age_ms = n ? static_cast<uint32_t>(now_ms - time_at(n - 1)) : 0;
}

}  // namespace kvfdp::twin
