// Summing per-queue counters.
#include "kvfdpd/daemon/io/queue_counters.hpp"

namespace kvfdp::daemon {

proto::CounterSnapshot sum_counters(const std::vector<const QueueCounters *> &queues)
{
	proto::CounterSnapshot s;
	for (const QueueCounters *q : queues) {
		for (unsigned i = 0; i < placement::kNumClasses; i++) {
			s.class_bytes[i] += q->class_bytes[i].get();
			s.class_writes[i] += q->class_writes[i].get();
		}
		for (unsigned i = 0; i < placement::kMaxHandles; i++) {
			s.handle_bytes[i] += q->handle_bytes[i].get();
			s.handle_writes[i] += q->handle_writes[i].get();
		}
		for (unsigned m = 0; m < nvme::kMaxStripeMembers; m++)
			for (unsigned i = 0; i < placement::kMaxHandles; i++)
				s.member_handle_bytes[m][i] += q->member_handle_bytes[m][i].get();
		s.reads += q->reads.get();
		s.read_bytes += q->read_bytes.get();
		s.writes += q->writes.get();
		s.write_bytes += q->write_bytes.get();
		s.flushes += q->flushes.get();
		s.discards += q->discards.get();
		s.discard_bytes += q->discard_bytes.get();
		s.write_zeroes += q->write_zeroes.get();
		s.write_zeroes_bytes += q->write_zeroes_bytes.get();
		s.stale_tags += q->stale_tags.get();
		s.errors += q->errors.get();
		s.unsupported += q->unsupported.get();
		s.copied_bytes += q->copied_bytes.get();
	}
	return s;
}

}  // namespace kvfdp::daemon
