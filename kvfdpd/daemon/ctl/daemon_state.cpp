// The running daemon's counters, policy and policy reload (daemon_state.hpp).
#include "kvfdpd/daemon/ctl/daemon_state.hpp"

#include <cerrno>
#include <climits>
#include <sys/stat.h>
#include <unistd.h>

#include "placement/config.hpp"
#include "kvfdpd/daemon/policy_table.hpp"

namespace kvfdp::daemon {

proto::CounterSnapshot snapshot(const State &s)
{
	std::vector<const QueueCounters *> q;
	for (const auto &u : s.queues)
		q.push_back(&u->counters());
	return sum_counters(q);
}

std::shared_ptr<const placement::Policy> current_policy(State &s)
{
	std::lock_guard<std::mutex> g(s.policy_mu);
	return s.policy;
}

namespace {

// A reload's refusal of a missing config: one line naming it (and a dangling symlink's
// target) and what to do; the caller adds "; old policy kept".
Error missing_on_reload(const std::string &path)
{
	std::string what = "config " + path + " is missing";
	struct stat st {};
	char target[PATH_MAX];
	if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
		const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
		if (n > 0)
			what += " (a symlink to " + std::string(target, static_cast<size_t>(n)) +
				", which does not exist)";
	}
	return guidance_errno(
		ENOENT, what + ": restore it and reload again (an empty file there reloads the "
			       "built-in map)");
}

}  // namespace

Result<uint64_t> reload_policy(State &s)
{
	// Only the first load (at start) runs the built-in map for a missing default config
	// (docs/deploy.md). Once a policy is in force a missing file is a mistake (deleted, a
	// dangling symlink), never a request to reset it.
	const bool starting = current_policy(s) == nullptr;
	auto cfg = placement::load_config(s.opts.config_path, starting && !s.opts.config_explicit);
	if (!cfg) {
		if (!starting &&
		    cfg.error().code == std::error_code(ENOENT, std::system_category()))
			return missing_on_reload(s.opts.config_path);
		return std::move(cfg).error();
	}
	auto p = placement::make_policy(*cfg, s.nruh);
	if (!p)
		return std::move(p).error();
	std::lock_guard<std::mutex> g(s.policy_mu);
	p->generation = ++s.generation;
	auto np = std::make_shared<const placement::Policy>(std::move(*p));
	s.tagger.apply_rules(s.policy.get(), *np);
	s.table.publish(np->handle);
	if (s.learned)
		s.learned->set_policy(*np);
	s.policy = np;
	return np->generation;
}

}  // namespace kvfdp::daemon
