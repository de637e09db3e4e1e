// The running daemon's counters, policy and policy reload (daemon_state.hpp).
#include "userspace/daemon/daemon_state.hpp"

#include "userspace/daemon/config.hpp"

namespace kvfdp::daemon {

CounterSnapshot snapshot(const State &s)
{
	std::vector<const QueueCounters *> q;
	for (const auto &u : s.queues)
		q.push_back(&u->counters());
	return sum_counters(q);
}

std::shared_ptr<const Policy> current_policy(State &s)
{
	std::lock_guard<std::mutex> g(s.policy_mu);
	return s.policy;
}

Result<uint64_t> reload_policy(State &s)
{
	auto cfg = load_config(s.opts.config_path, !s.opts.config_explicit);
	if (!cfg)
		return std::move(cfg).error();
	auto p = make_policy(*cfg, s.nruh);
	if (!p)
		return std::move(p).error();
	std::lock_guard<std::mutex> g(s.policy_mu);
	p->generation = ++s.generation;
	auto np = std::make_shared<const Policy>(std::move(*p));
	s.tagger.apply_rules(s.policy.get(), *np);
	s.table.publish(np->handle);
	if (s.learned)
		s.learned->set_policy(*np);
	s.policy = np;
	return np->generation;
}

} // namespace kvfdp::daemon
