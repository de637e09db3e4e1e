// TaggerOwner over bpf::Tagger, or the null tagger when kvfdpd is built without BPF.
#include "kvfdpd/daemon/ctl/tagger_owner.hpp"

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/cgroups.hpp"
#include "common/log.hpp"
#include "kvfdp_build.hpp"

#if KVFDP_WITH_BPF
#include "bpf/user/files.hpp"
#include "bpf/user/identity.hpp"
#include "bpf/user/pins.hpp"
#include "bpf/user/writer_specs.hpp"
#include "bpf/user/tagger.hpp"
#include "kvfdpd/daemon/ctl/files_rows.hpp"
#include "kvfdpd/daemon/writers.hpp"
#endif

namespace kvfdp::daemon {

using nlohmann::json;

#if KVFDP_WITH_BPF

struct TaggerOwner::Impl {
	bool active = false;
	std::string reason;
	std::vector<std::string> sources;
	std::unique_ptr<bpf::Tagger> tagger;
	// Per-file records from the tagger's event ring: the events thread folds events in,
	// the control thread reads them; files_mu guards the table (never a queue thread).
	std::mutex files_mu;
	bpf::FileTable files;
	std::thread events_thread;
	std::atomic<bool> events_stop{false};
	std::string events_error;  // set (under files_mu) when polling the ring failed
	WriterNames writers;       // names for the `files` reply
	// Identities for raw writer ids (the events thread), and their names (the replies).
	std::unique_ptr<bpf::IdentityResolver> identity;
};

void TaggerOwner::load(bool disabled, uint32_t queues, uint32_t depth, const std::string &pin_dir,
		       bool fresh)
{
	Impl &m = *impl_;
	if (!pin_dir.empty() && (disabled || fresh)) {
		if (auto r = bpf::remove_pin_dir(pin_dir); !r)
			log::warn("removing the tagger set pinned at %s: %s", pin_dir.c_str(),
				  r.error().message().c_str());
	}
	if (disabled) {
		m.reason = "disabled with --no-tagger";
		return;
	}
	bpf::TaggerOptions to;
	to.queues = queues;
	to.depth = depth;
	to.pin_dir = pin_dir;
	const auto t0 = std::chrono::steady_clock::now();
	auto t = bpf::Tagger::load(to);
	const long ms = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
						  std::chrono::steady_clock::now() - t0)
						  .count());
	if (!t) {
		m.reason = t.error().message();
		log::warn("BPF tagger not loaded (%s): every write goes to the default handle",
			  m.reason.c_str());
		return;
	}
	m.tagger = std::make_unique<bpf::Tagger>(std::move(*t));
	m.identity = std::make_unique<bpf::IdentityResolver>(*m.tagger);
	bpf::IdentityResolver *ident = m.identity.get();
	m.writers.set_identity_source(&ident->cgroups(),
				      [ident](uint32_t w) { return ident->name_of(w); });
	m.active = true;
	const bpf::ActiveSources &src = m.tagger->sources();
	if (src.bio_hint)
		m.sources.push_back("bio_hint");
	if (src.page_inode)
		m.sources.push_back("page_inode");
	if (src.dio_inode)
		m.sources.push_back("dio_inode");
	if (src.hint_events)
		m.sources.push_back("hint_events");
	if (src.create_events)
		m.sources.push_back("create_events");
	if (!src.unlink_hook.empty())
		m.sources.push_back("unlink=" + src.unlink_hook);
	m.reason = src.notes;
	if (m.tagger->reopened())
		log::info(
			"BPF tagger: re-opened the set pinned at %s in %ld ms (nothing loaded or attached)",
			pin_dir.c_str(), ms);
	else
		log::info("BPF tagger: loaded and attached in %ld ms%s%s", ms,
			  m.tagger->pinned_at().empty() ? "" : ", pinned at ",
			  m.tagger->pinned_at().c_str());
}

void TaggerOwner::unpin()
{
	if (!impl_->tagger)
		return;
	if (auto r = impl_->tagger->unpin(); !r)
		log::warn("%s", r.error().message().c_str());
}

std::string TaggerOwner::pinned_at() const
{
	return impl_->tagger ? impl_->tagger->pinned_at() : std::string();
}
bool TaggerOwner::reopened() const
{
	return impl_->tagger && impl_->tagger->reopened();
}

const volatile kvfdp_tag_slot *TaggerOwner::slot_base() const
{
	return impl_->tagger ? impl_->tagger->slots().slot(0, 0) : nullptr;
}

void TaggerOwner::watch_disk(const std::string &path)
{
	Impl &m = *impl_;
	if (!m.tagger)
		return;
	auto r = m.tagger->watch_disk(path, KVFDP_DISK_SLOTS);
	if (!r) {
		m.active = false;
		m.reason = "watching " + path + ": " + r.error().message();
		log::warn("%s", m.reason.c_str());
	}
}

void TaggerOwner::apply_rules(const placement::Policy *old_p, const placement::Policy &p)
{
	Impl &m = *impl_;
	m.writers.set_config(p.config);
	if (!m.tagger)
		return;
	if (old_p)
		for (const placement::DirRule &r : old_p->config.rules)
			(void)m.tagger->remove_dir_rule(r.path);
	else
		m.tagger->clear_dir_rules();
	for (const placement::DirRule &r : p.config.rules) {
		auto res = m.tagger->add_dir_rule(r.path, r.cls);
		if (!res)
			log::warn("directory rule %s: %s", r.path.c_str(),
				  res.error().message().c_str());
	}
	for (const std::string &w :
	     m.identity->configure(bpf::writer_specs(p.config.writers), p.config.watch_dir))
		log::warn("%s", w.c_str());
}

void TaggerOwner::start_events()
{
	Impl &m = *impl_;
	if (!m.tagger || !m.active)
		return;
	m.events_stop.store(false, std::memory_order_release);
	m.events_thread = std::thread([&m] {
		const bpf::EventCallback on_event = [&m](const kvfdp_event &e) {
			// A raw writer id becomes its identity before the record is made (off the
			// lock: it may read /proc and the mount root).
			const uint32_t w = m.identity->on_create(e);
			std::lock_guard<std::mutex> g(m.files_mu);
			if (w == e.writer) {
				m.files.on_event(e);
				return;
			}
			kvfdp_event c = e;
			c.writer = w;
			m.files.on_event(c);
		};
		while (!m.events_stop.load(std::memory_order_acquire)) {
			const int n = m.tagger->poll(250, on_event);
			if (n < 0 && n != -EINTR) {
				std::lock_guard<std::mutex> g(m.files_mu);
				m.events_error =
					std::string("reading the tagger's event ring failed: ") +
					std::strerror(-n) + "; restart kvfdpd";
				log::warn("%s", m.events_error.c_str());
				return;
			}
		}
	});
}

void TaggerOwner::stop_events()
{
	Impl &m = *impl_;
	m.events_stop.store(true, std::memory_order_release);
	if (m.events_thread.joinable())
		m.events_thread.join();
}

json TaggerOwner::files(const proto::FilesQuery &q)
{
	Impl &m = *impl_;
	if (m.tagger && m.active) {
		std::lock_guard<std::mutex> g(m.files_mu);
		if (!m.events_error.empty())
			return {{"available", false},
				{"reason", m.events_error},
				{"files", json::array()}};
		bpf::Tagger *t = m.tagger.get();
		m.files.refresh_bytes(
			[t](uint32_t dev, uint64_t ino) { return t->inode_bytes(dev, ino); });
		return files_json(m.files, q, realtime_minus_monotonic_ns(),
				  [&m](const bpf::FileRecord &r) {
					  return m.writers.name_of(r.writer, r.cgroup_id);
				  });
	}
	return {{"available", false},
		{"reason", "the BPF tagger is not active (" +
				   (m.reason.empty() ? std::string("no reason given") : m.reason) +
				   "): see kvfdp status"},
		{"files", json::array()}};
}

proto::TaggerBounds TaggerOwner::bounds()
{
	Impl &m = *impl_;
	proto::TaggerBounds b;
	if (!m.tagger)
		return b;
	{
		std::lock_guard<std::mutex> g(m.files_mu);
		b.tables.push_back({"file_table", m.files.live_count(), m.files.max_live(),
				    m.files.live_evictions(), 0});
	}
	const bpf::TaggerStats st = m.tagger->stats();
	// An LRU map's fill from its counters: added - removed, at most the bound; what is above
	// the bound was evicted.
	auto lru = [&st](const char *name, uint64_t limit, int added, int removed, int failed) {
		const uint64_t a = st[added], r = st[removed];
		const uint64_t net = a > r ? a - r : 0;
		return proto::TableBound{name, std::min(net, limit), limit,
					 net > limit ? net - limit : 0,
					 failed >= 0 ? st[failed] : 0};
	};
	b.tables.push_back(lru("inode_policy", KVFDP_INODE_MAP_ENTRIES, KVFDP_STAT_POLICY_ADDED,
			       KVFDP_STAT_POLICY_REMOVED, KVFDP_STAT_POLICY_FAILED));
	b.tables.push_back(lru("inode_writer", KVFDP_INODE_MAP_ENTRIES, KVFDP_STAT_WRITER_ADDED,
			       KVFDP_STAT_WRITER_REMOVED, KVFDP_STAT_WRITER_FAILED));
	b.renames_over = st[KVFDP_STAT_RENAME_OVER];
	b.requests = st[KVFDP_STAT_ISSUED];
	b.missed_runs = m.tagger->missed_runs();
	if (m.identity) {
		const bpf::IdentityStats is = m.identity->stats();
		const uint64_t idents = is.resolved;
		b.tables.push_back(
			{"writer_idents", std::min<uint64_t>(idents, KVFDP_IDENT_MAP_ENTRIES),
			 KVFDP_IDENT_MAP_ENTRIES,
			 idents > KVFDP_IDENT_MAP_ENTRIES ? idents - KVFDP_IDENT_MAP_ENTRIES : 0,
			 0});
		// dir_idents: only userspace inserts (entries created - removed by a reload).
		const uint64_t dirs = is.dir_idents_added > is.dir_idents_removed
					      ? is.dir_idents_added - is.dir_idents_removed
					      : 0;
		b.tables.push_back(
			{"dir_idents", std::min<uint64_t>(dirs, KVFDP_DIR_IDENT_MAP_ENTRIES),
			 KVFDP_DIR_IDENT_MAP_ENTRIES,
			 dirs > KVFDP_DIR_IDENT_MAP_ENTRIES ? dirs - KVFDP_DIR_IDENT_MAP_ENTRIES
							    : 0,
			 0});
		b.tables.push_back({"cgroup_paths", is.cgroups.entries, is.cgroups.capacity,
				    is.cgroups.evictions, 0});
		b.tables.push_back(
			{"identity_names", is.names, is.names_capacity, is.name_evictions, 0});
		b.tables.push_back(
			{"writer_dir_names", is.dirs, is.dirs_capacity, is.dir_evictions, 0});
		b.identities_resolved = is.resolved;
		b.identities_by_pattern = is.by_pattern;
		b.identities_unresolved = is.unresolved;
		b.identities_rewritten = is.rewritten;
		b.identities_provisional = st[KVFDP_STAT_IDENT_PROVISIONAL];
		b.identities_provisional_right = is.provisional_right;
		b.identities_provisional_wrong = is.provisional_wrong;
		b.identity_early_bytes = is.early_bytes;
	}
	return b;
}

#else  // the null tagger

struct TaggerOwner::Impl {
	bool active = false;  // never
	std::string reason;
	std::vector<std::string> sources;
	WriterNames writers;
};

void TaggerOwner::load(bool disabled, uint32_t, uint32_t, const std::string &, bool)
{
	if (disabled) {
		impl_->reason = "disabled with --no-tagger";
		return;
	}
	impl_->reason = "this kvfdpd was built without BPF (KVFDP_WITH_BPF=OFF)";
	log::warn("%s: every write goes to the default handle", impl_->reason.c_str());
}

const volatile kvfdp_tag_slot *TaggerOwner::slot_base() const
{
	return nullptr;
}
void TaggerOwner::watch_disk(const std::string &) {}
void TaggerOwner::apply_rules(const placement::Policy *, const placement::Policy &p)
{
	impl_->writers.set_config(p.config);
}
void TaggerOwner::start_events() {}
void TaggerOwner::stop_events() {}
void TaggerOwner::unpin() {}
std::string TaggerOwner::pinned_at() const
{
	return {};
}
bool TaggerOwner::reopened() const
{
	return false;
}

proto::TaggerBounds TaggerOwner::bounds()
{
	return {};
}

json TaggerOwner::files(const proto::FilesQuery &)
{
	return {{"available", false},
		{"reason",
		 "the BPF tagger is not active (" + impl_->reason + "): see kvfdp status"},
		{"files", json::array()}};
}

#endif

TaggerOwner::TaggerOwner() : impl_(std::make_unique<Impl>()) {}

WriterNames &TaggerOwner::writer_names()
{
	return impl_->writers;
}

TaggerOwner::~TaggerOwner()
{
	stop_events();
}

bool TaggerOwner::active() const
{
	return impl_->active;
}
const std::string &TaggerOwner::reason() const
{
	return impl_->reason;
}
const std::vector<std::string> &TaggerOwner::sources() const
{
	return impl_->sources;
}

}  // namespace kvfdp::daemon
