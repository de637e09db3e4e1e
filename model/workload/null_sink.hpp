// A BlockSink that drops everything: the oracle's pre-pass only needs the lifetimes.
#pragma once

#include "model/sim/workload.hpp"

namespace kvfdp::workload {

class NullSink final : public sim::BlockSink {
public:
	void write(uint64_t, uint64_t, uint8_t, uint64_t) override {}
	void deallocate(uint64_t, uint64_t) override {}
};

}  // namespace kvfdp::workload
