// The BPF tagger loaded into the running kernel, on a scratch disk with ext4 and XFS:
// hinted buffered and O_DIRECT writes (split bios too) land in the right class with the
// right bytes, on the disk or its hidden multipath path disks; directory rules tag new
// files, events carry inodes and lifetimes, tag slots are readable, `kvfdp record` totals
// match what was written, and an unwatched disk is no longer seen.
// KVFDP_BPF_TEST_DISK=/dev/X runs on that disk instead of a loop device (VM scenario).
#include <doctest/doctest.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "common/cgroups.hpp"
#include "bpf/user/devnum.hpp"
#include "bpf/user/disks.hpp"
#include "bpf/user/files.hpp"
#include "bpf/tag.h"
#include "bpf/user/tagger.hpp"
#include "tests/bpf/test_disk.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_files.hpp"
#include "cli/record/record.hpp"

using namespace kvfdp;
using namespace kvfdp::bpf;

namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr int kPollBudgetMs = 10000;  // upper bound on waiting for events (not a sleep)

uint64_t now_ns()
{
	timespec ts{};
	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

struct Written {
	std::string path;
	uint64_t ino = 0;
	uint64_t bytes = 0;
	uint8_t cls = 0;
	bool direct = false;
};

// Creates path, sets the hint (when nonzero), writes bytes, fsyncs. REQUIREs success.
Written write_file(const std::string &path, uint8_t hint, uint64_t bytes, bool direct)
{
	Written w{path, 0, bytes, hint, direct};
	int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
	REQUIRE_MESSAGE(fd >= 0, "open " << path << ": " << std::strerror(errno));
	if (hint) {
		uint64_t h = hint;
		REQUIRE_MESSAGE(::fcntl(fd, KVFDP_F_SET_RW_HINT, &h) == 0,
				"F_SET_RW_HINT: " << std::strerror(errno));
	}
	void *buf = nullptr;
	REQUIRE(::posix_memalign(&buf, 4096, 256 * 1024) == 0);
	std::memset(buf, 0x5a ^ hint, 256 * 1024);
	for (uint64_t off = 0; off < bytes; off += 256 * 1024)
		REQUIRE(::pwrite(fd, buf, 256 * 1024, static_cast<off_t>(off)) == 256 * 1024);
	std::free(buf);
	REQUIRE(::fsync(fd) == 0);
	struct stat st {};
	REQUIRE(::fstat(fd, &st) == 0);
	w.ino = st.st_ino;
	::close(fd);
	return w;
}

// Events collected from the tagger, with a bounded wait for a condition.
struct EventLog {
	std::vector<kvfdp_event> all;
	FileTable files;

	template <class Pred> bool wait_for(Tagger &t, Pred pred)
	{
		EventCallback cb = [this](const kvfdp_event &e) {
			all.push_back(e);
			files.on_event(e);
		};
		t.drain(cb);
		for (int waited = 0; !pred() && waited < kPollBudgetMs; waited += 50)
			t.poll(50, cb);
		return pred();
	}
	const kvfdp_event *find(uint32_t type, uint32_t dev, uint64_t ino) const
	{
		for (const auto &e : all)
			if (e.type == type && e.dev == dev && e.ino == ino)
				return &e;
		return nullptr;
	}
};

// The event hook a source's programs report (kvfdp_event.hook).
uint32_t hook_of(const std::string &hook)
{
	return hook.rfind("tracepoint/", 0) == 0 ? KVFDP_HOOK_SYSCALL_TP : KVFDP_HOOK_FENTRY;
}

// F_SET_RW_HINT calls that fail (an invalid hint: EINVAL; a bad pointer: EFAULT) report no
// hint event: a successful call on another file after them is reported, and they are not
// (events of one thread arrive in order).
void check_refused_hints(Tagger &t, const std::string &mnt, uint32_t dev, EventLog &log)
{
	auto create = [](const std::string &p) {
		int fd = ::open(p.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
		REQUIRE_MESSAGE(fd >= 0, "open " << p << ": " << std::strerror(errno));
		return fd;
	};
	auto ino_of = [](int fd) {
		struct stat st {};
		REQUIRE(::fstat(fd, &st) == 0);
		return static_cast<uint64_t>(st.st_ino);
	};
	int refused = create(mnt + "/hint_refused");
	int marker = create(mnt + "/hint_marker");
	uint64_t bad = 99;
	const int invalid = ::fcntl(refused, KVFDP_F_SET_RW_HINT, &bad);
	const int invalid_errno = errno;
	const int fault = ::fcntl(refused, KVFDP_F_SET_RW_HINT, static_cast<uint64_t *>(nullptr));
	const int fault_errno = errno;
	CHECK(invalid == -1);
	CHECK(invalid_errno == EINVAL);
	CHECK(fault == -1);
	CHECK(fault_errno == EFAULT);
	uint64_t good = KVFDP_CLASS_SHORT;
	REQUIRE(::fcntl(marker, KVFDP_F_SET_RW_HINT, &good) == 0);
	const uint64_t refused_ino = ino_of(refused), marker_ino = ino_of(marker);
	::close(refused);
	::close(marker);
	CHECK(log.wait_for(t, [&] { return log.find(KVFDP_EV_HINT, dev, marker_ino) != nullptr; }));
	CHECK(log.find(KVFDP_EV_HINT, dev, refused_ino) == nullptr);
	// Both stay: an inode number freed here could come back for a later file, whose events
	// the checks find by number.
}

// Lowers max_sectors_kb of the blk-mq request disks for its lifetime, so that the block
// layer splits larger bios (and their front parts end into the parent, bio_chain).
class SmallRequests {
public:
	SmallRequests(const std::vector<RequestDisk> &disks, unsigned kb)
	{
		for (const auto &d : disks) {
			std::string p = "/sys/block/" + d.name + "/queue/max_sectors_kb";
			std::string old;
			if (!(std::ifstream(p) >> old))
				continue;
			if (::access(("/sys/block/" + d.name + "/mq").c_str(), F_OK) != 0)
				continue;  // a bio-based head: its limit is stacked from the paths
			std::ofstream(p) << kb;
			saved_.emplace_back(p, old);
		}
	}
	~SmallRequests()
	{
		for (const auto &[p, old] : saved_)
			std::ofstream(p) << old;
	}
	SmallRequests(const SmallRequests &) = delete;
	SmallRequests &operator=(const SmallRequests &) = delete;
	[[nodiscard]] bool active() const { return !saved_.empty(); }

private:
	std::vector<std::pair<std::string, std::string>> saved_;
};

// A refusal (the verifier's, or a missing hook) is a failure with libbpf's message; the
// capabilities it needs (root, BTF) were checked before any test case ran.
Tagger load_tagger(const TaggerOptions &o)
{
	auto t = Tagger::load(o);
	REQUIRE_MESSAGE(t.ok(), "the kernel refused the BPF tagger: "
					<< (t.ok() ? "" : t.error().message())
					<< " (the verifier log, if any, is above)");
	return std::move(t).value();
}

// A cgroup2 hierarchy mounted on a TempDir of its own: unmounted by unmount() or at the
// end (also when a check fails first), its directory removed only once unmounted.
struct Cgroup2Mount {
	test::TempDir dir;
	bool mounted = false;
	void unmount()
	{
		if (mounted && ::system(("umount " + dir.path).c_str()) == 0)
			mounted = false;
	}
	~Cgroup2Mount()
	{
		unmount();
		if (mounted)
			dir.path.clear();  // never rm -rf a live cgroup2 hierarchy
	}
};

uint64_t dir_ino(const std::string &path)
{
	struct stat st {};
	REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0,
			"stat " << path << ": " << std::strerror(errno));
	return st.st_ino;
}

// Directory rules cover their subtree (the nearest rule wins); every created file records
// its writer: the named writer of its directory subtree, else of its cgroup, else its cgroup.
// The expected cgroup id is the test's own, read from /proc/self/cgroup and the cgroup2 mount.
void check_subtrees_and_writers(Tagger &t, const std::string &disk, const std::string &mnt,
				uint32_t dev, const ActiveSources &src, EventLog &log,
				const std::string &ruled, uint8_t rule_cls)
{
	// The disk is watched with request records (check_filesystem): each carries its file's
	// writer. (Re-watching with other flags would not reach path disks learned by name.)
	(void)disk;
	const std::string deep = ruled + "/a/b/c";
	REQUIRE(::mkdir((ruled + "/a").c_str(), 0755) == 0);
	REQUIRE(::mkdir((ruled + "/a/b").c_str(), 0755) == 0);
	REQUIRE(::mkdir(deep.c_str(), 0755) == 0);
	const std::string inner = ruled + "/a/long";
	REQUIRE(::mkdir(inner.c_str(), 0755) == 0);
	REQUIRE(t.add_dir_rule(inner, KVFDP_CLASS_LONG).ok());
	const std::string team = mnt + "/team";
	REQUIRE(::mkdir(team.c_str(), 0755) == 0);
	REQUIRE(::mkdir((team + "/x").c_str(), 0755) == 0);
	constexpr uint32_t kTeam = KVFDP_WRITER_NAMED | 1, kMine = KVFDP_WRITER_NAMED | 2;
	REQUIRE(t.add_writer_dir(team, kTeam).ok());

	// Where no cgroup2 hierarchy is mounted, mount one for the check (the ids are the same;
	// /proc/self/cgroup shows its "0::" line only once cgroup2 was mounted somewhere).
	auto mount = kvfdp::cgroup2_mount();
	std::string root;
	std::optional<Cgroup2Mount> own;
	if (mount.ok()) {
		root = *mount;
	} else {
		own.emplace();
		root = own->dir.path;
		REQUIRE_MESSAGE(::system(("mount -t cgroup2 none " + root).c_str()) == 0,
				"mount cgroup2");
		own->mounted = true;
	}
	auto self = kvfdp::self_cgroup_path();
	REQUIRE_MESSAGE(self.ok(), (self.ok() ? "" : self.error().message()));
	auto my_id = kvfdp::cgroup_id_of(root, *self);
	REQUIRE_MESSAGE(my_id.ok(), (my_id.ok() ? "" : my_id.error().message()));
	auto back = kvfdp::cgroup_path_of(root, *my_id);
	REQUIRE(back.ok());
	CHECK(*back == *self);

	// A child in a cgroup of its own creates a file: the event names that cgroup.
	const std::string child_cg = "/kvfdp-test-" + std::to_string(::getpid());
	REQUIRE(::mkdir((root + child_cg).c_str(), 0755) == 0);
	auto child_id = kvfdp::cgroup_id_of(root, child_cg);
	REQUIRE(child_id.ok());
	const std::string child_file = mnt + "/from_child";
	pid_t kid = ::fork();
	REQUIRE(kid >= 0);
	if (kid == 0) {
		int pfd = ::open((root + child_cg + "/cgroup.procs").c_str(), O_WRONLY);
		bool moved = pfd >= 0 && ::write(pfd, "0", 1) == 1;
		int fd = moved ? ::open(child_file.c_str(), O_CREAT | O_WRONLY, 0644) : -1;
		::_exit(fd >= 0 && ::write(fd, "x", 1) == 1 && ::fsync(fd) == 0 ? 0 : 1);
	}
	int kst = 0;
	REQUIRE(::waitpid(kid, &kst, 0) == kid);
	REQUIRE_MESSAGE((WIFEXITED(kst) && WEXITSTATUS(kst) == 0),
			"the child could not join " << child_cg);
	CHECK(::rmdir((root + child_cg).c_str()) == 0);
	const uint64_t child_ino = dir_ino(child_file);

	Written deep_file = write_file(deep + "/f", 0, kMiB / 4, false);
	Written long_file = write_file(inner + "/f", 0, kMiB / 4, false);
	Written team_file = write_file(team + "/x/f", 0, kMiB / 4, false);
	Written plain_file = write_file(mnt + "/plain", 0, kMiB / 4, false);
	REQUIRE(t.add_writer_cgroup(*my_id, kMine).ok());
	Written mine_file = write_file(mnt + "/mine", 0, kMiB / 4, false);
	Written mine_team = write_file(team + "/mine", 0, kMiB / 4, false);
	REQUIRE(t.remove_writer_cgroup(*my_id).ok());
	::sync();
	// The request records of the files' writes, read before anything else drains the rings.
	std::map<uint64_t, std::set<uint32_t>> rec_writers;
	{
		const EventCallback ecb = [&log](const kvfdp_event &e) {
			log.all.push_back(e);
			log.files.on_event(e);
		};
		const RecordCallback rcb = [&](const kvfdp_rq_record &r) {
			if (r.ino && r.op == 1 /* REQ_OP_WRITE */)
				rec_writers[r.ino].insert(r.writer);
		};
		auto all_seen = [&] {
			for (const Written *w : {&team_file, &plain_file, &mine_file, &mine_team})
				if (!rec_writers.count(w->ino))
					return false;
			return true;
		};
		t.drain(ecb, rcb);
		for (int waited = 0; !all_seen() && waited < kPollBudgetMs; waited += 50)
			t.poll(50, ecb, rcb);
	}
	if (own)  // (after the child's cgroup is gone)
		own->unmount();

	CHECK(t.inode_policy(dev, deep_file.ino) == rule_cls);  // three levels below the rule
	CHECK(t.inode_policy(dev, long_file.ino) == KVFDP_CLASS_LONG);  // the nearer rule wins
	CHECK(t.inode_policy(dev, team_file.ino) == -1);
	const uint32_t by_cgroup = kvfdp_writer_of_cgroup(*my_id);
	CHECK(t.inode_writer(dev, deep_file.ino) == by_cgroup);
	CHECK(t.inode_writer(dev, team_file.ino) == kTeam);
	CHECK(t.inode_writer(dev, plain_file.ino) == by_cgroup);
	CHECK(t.inode_writer(dev, mine_file.ino) == kMine);
	CHECK(t.inode_writer(dev, mine_team.ino) == kTeam);  // the directory wins over the cgroup
	REQUIRE_MESSAGE(src.create_events, "create events are not active: " << src.notes);
	const std::vector<Written> made = {deep_file,  long_file, team_file,
					   plain_file, mine_file, mine_team};
	CHECK(log.wait_for(t, [&] {
		for (const auto &w : made)
			if (!log.find(KVFDP_EV_CREATE, dev, w.ino))
				return false;
		return true;
	}));
	CHECK(log.wait_for(t,
			   [&] { return log.find(KVFDP_EV_CREATE, dev, child_ino) != nullptr; }));
	if (const kvfdp_event *e = log.find(KVFDP_EV_CREATE, dev, child_ino)) {
		CHECK_MESSAGE(e->cgroup_id == *child_id,
			      "child's cgroup " << e->cgroup_id << ", want " << *child_id);
		CHECK(e->writer == kvfdp_writer_of_cgroup(*child_id));
		CHECK(e->cgroup_id != *my_id);
	}
	REQUIRE(::unlink(child_file.c_str()) == 0);
	const uint64_t ruled_ino = dir_ino(ruled), inner_ino = dir_ino(inner),
		       team_ino = dir_ino(team);
	struct Want {
		const Written *w;
		uint32_t writer;
		uint64_t subtree;
		uint32_t cls;
	};
	for (const Want &x : {Want{&deep_file, by_cgroup, ruled_ino, rule_cls},
			      Want{&long_file, by_cgroup, inner_ino, KVFDP_CLASS_LONG},
			      Want{&team_file, kTeam, team_ino, KVFDP_NO_CLASS},
			      Want{&plain_file, by_cgroup, 0, KVFDP_NO_CLASS},
			      Want{&mine_file, kMine, 0, KVFDP_NO_CLASS},
			      Want{&mine_team, kTeam, team_ino, KVFDP_NO_CLASS}}) {
		const kvfdp_event *e = log.find(KVFDP_EV_CREATE, dev, x.w->ino);
		if (!e)
			continue;
		CHECK_MESSAGE(e->cgroup_id == *my_id, x.w->path << ": cgroup " << e->cgroup_id);
		CHECK_MESSAGE(e->writer == x.writer, x.w->path << ": writer " << e->writer);
		CHECK_MESSAGE(e->subtree_ino == x.subtree,
			      x.w->path << ": subtree " << e->subtree_ino);
		CHECK_MESSAGE(e->value == x.cls, x.w->path << ": class " << e->value);
		if (const FileRecord *r = log.files.find_live(dev, x.w->ino)) {
			CHECK(r->writer == x.writer);
			CHECK(r->cgroup_id == *my_id);
		}
	}
	// The tag slots of these files' requests carry their writer.
	SlotReader &r = t.slots();
	int carried = 0;
	for (uint32_t q = 0; q < r.queues(); q++)
		for (uint32_t tag = 0; tag < r.depth(); tag++) {
			const volatile kvfdp_tag_slot *s = r.slot(q, tag);
			if (!s || s->seq == 0)
				continue;
			for (const Want &x :
			     {Want{&team_file, kTeam, 0, 0}, Want{&plain_file, by_cgroup, 0, 0},
			      Want{&mine_file, kMine, 0, 0}, Want{&mine_team, kTeam, 0, 0}})
				if (s->ino == x.w->ino && s->dev == dev) {
					CHECK_MESSAGE(s->writer == x.writer,
						      x.w->path << ": slot writer " << s->writer);
					carried++;
				}
		}
	MESSAGE(carried << " tag slot(s) still held a writer file's request");
	// Every write request of those files carried its writer.
	for (const Want &x : {Want{&team_file, kTeam, 0, 0}, Want{&plain_file, by_cgroup, 0, 0},
			      Want{&mine_file, kMine, 0, 0}, Want{&mine_team, kTeam, 0, 0}}) {
		auto it = rec_writers.find(x.w->ino);
		REQUIRE_MESSAGE(it != rec_writers.end(), x.w->path << ": no request record");
		CHECK_MESSAGE(it->second == std::set<uint32_t>{x.writer},
			      x.w->path << ": records carry " << it->second.size()
					<< " writer(s), first " << *it->second.begin());
	}
	REQUIRE(t.remove_writer_dir(team).ok());
	for (const auto &w : made)
		REQUIRE(::unlink(w.path.c_str()) == 0);
	CHECK(log.wait_for(t, [&] {
		for (const auto &w : made)
			if (!log.find(KVFDP_EV_UNLINK, dev, w.ino))
				return false;
		return true;
	}));
	CHECK(t.inode_writer(dev, team_file.ino) == 0);  // dropped at its last unlink
}

void check_filesystem(const std::string &fstype)
{
	test::ScratchFs fs(fstype);
	REQUIRE_MESSAGE(fs.ok(),
			"cannot make the " << fstype << " scratch filesystem: " << fs.why());
	auto disk_devt = disk_dev(fs.disk());
	REQUIRE(disk_devt.ok());
	std::vector<RequestDisk> rq_disks = request_disks(*disk_devt);
	REQUIRE(!rq_disks.empty());
	bool named_paths = false;  // hidden path disks the tagger must learn by name
	for (const auto &p : rq_disks)
		named_paths |= p.via != "itself" && p.devt == 0;
	MESSAGE(fstype << ": requests of " << describe(rq_disks));
	auto [queues, depth] = mq_geometry(rq_disks);
	TaggerOptions opts;
	opts.queues = queues;
	opts.depth = depth;
	opts.record_ring_bytes = 1u << 20;  // request records, for the writer check
	if (static_cast<uint64_t>(queues) * depth > KVFDP_MAX_SLOTS)
		opts.queues = KVFDP_MAX_SLOTS / depth;
	Tagger t = load_tagger(opts);
	const ActiveSources &src = t.sources();
	MESSAGE(fstype << " on " << fs.disk() << ": active sources: " << src.describe()
		       << (src.notes.empty() ? "" : " (" + src.notes + ")"));
	REQUIRE(t.watch_disk(fs.disk(), KVFDP_DISK_SLOTS | KVFDP_DISK_RECORD).ok());
	auto fsdev = path_fs_dev(fs.mnt());
	REQUIRE(fsdev.ok());
	uint32_t dev = *fsdev;

	std::string ruled = fs.mnt() + "/ruled";
	REQUIRE(::mkdir(ruled.c_str(), 0755) == 0);
	constexpr uint8_t kRuleClass = KVFDP_CLASS_MEDIUM;
	REQUIRE(t.add_dir_rule(ruled, kRuleClass).ok());

	std::vector<Written> files;
	uint64_t expected[KVFDP_NR_CLASSES] = {};
	for (uint8_t h = KVFDP_CLASS_NONE; h <= KVFDP_CLASS_EXTREME; h++) {
		for (bool direct : {false, true}) {
			std::string p =
				fs.mnt() + "/h" + std::to_string(h) + (direct ? "_dio" : "_buf");
			files.push_back(write_file(p, h, kMiB, direct));
			expected[h] += kMiB;
		}
	}
	// O_DIRECT through bio splits: 256 KiB bios on a 64 KiB request limit. The split-off
	// front parts complete into their parent, which names the iomap DIO.
	{
		SmallRequests small(rq_disks, 64);
		REQUIRE_MESSAGE(small.active(),
				"cannot lower max_sectors_kb of " << describe(rq_disks));
		files.push_back(
			write_file(fs.mnt() + "/h3_dio_split", KVFDP_CLASS_MEDIUM, kMiB, true));
		expected[KVFDP_CLASS_MEDIUM] += kMiB;
	}
	Written rule_file = write_file(ruled + "/by_rule", 0, kMiB, false);
	rule_file.cls = kRuleClass;
	files.push_back(rule_file);
	expected[kRuleClass] += kMiB;
	::sync();

	// Per-class counters: every hinted byte, and the rule file's, in its class.
	auto c = t.counters(fs.disk());
	REQUIRE(c.ok());
	for (int k = KVFDP_CLASS_NONE; k < KVFDP_NR_CLASSES; k++)
		CHECK_MESSAGE(c->write[k].bytes == expected[k],
			      fstype << " class " << k << ": " << c->write[k].bytes
				     << " bytes tagged, " << expected[k] << " written");
	if (named_paths)
		CHECK_MESSAGE(t.stats()[KVFDP_STAT_DISK_LEARNED] >= 1,
			      "no hidden path disk of " << fs.disk() << " was learned by name");
	MESSAGE(fstype << " requests by source: default " << c->sources[KVFDP_SRC_DEFAULT]
		       << ", bio-hint " << c->sources[KVFDP_SRC_BIO_HINT] << ", inode-policy "
		       << c->sources[KVFDP_SRC_INODE_POLICY] << ", inode-hint "
		       << c->sources[KVFDP_SRC_INODE_HINT] << "; class 0 bytes "
		       << c->write[0].bytes);
	// The rule file has no hint: only the policy map can have classified it.
	CHECK(c->sources[KVFDP_SRC_INODE_POLICY] > 0);
	CHECK(t.inode_policy(dev, rule_file.ino) == kRuleClass);

	// Per-file bytes from the inodes the requests carried.
	for (const auto &w : files) {
		if (w.direct && !src.dio_inode)
			continue;
		CHECK_MESSAGE(t.inode_bytes(dev, w.ino) == w.bytes,
			      w.path << ": " << t.inode_bytes(dev, w.ino) << " bytes attributed");
	}

	// Tag slots: the kernel wrote them; the reader accepts a slot once, then calls it stale.
	{
		SlotReader &r = t.slots();
		int fresh = 0, classified = 0;
		for (uint32_t q = 0; q < r.queues(); q++)
			for (uint32_t tag = 0; tag < r.depth(); tag++) {
				const volatile kvfdp_tag_slot *s = r.slot(q, tag);
				if (!s || s->seq == 0)
					continue;
				TagInfo info;
				uint64_t sector = s->sector;
				uint32_t sectors = s->sectors;
				if (r.take(q, tag, sector, sectors, &info) != SlotMatch::kOk)
					continue;
				fresh++;
				classified += info.cls != 0;
				CHECK(r.take(q, tag, sector, sectors, &info) == SlotMatch::kStale);
			}
		CHECK(fresh > 0);
		MESSAGE(fstype << ": " << fresh << " written slots, " << classified
			       << " with a class");
	}

	// Lifetime events.
	EventLog log;
	if (src.hint_events) {
		bool all_hints = log.wait_for(t, [&] {
			for (const auto &w : files)
				if (w.cls && &w != &files.back() &&
				    !log.find(KVFDP_EV_HINT, dev, w.ino))
					return false;
			return true;
		});
		CHECK(all_hints);
		for (const auto &w : files)
			if (const kvfdp_event *e = log.find(KVFDP_EV_HINT, dev, w.ino)) {
				CHECK(e->value == w.cls);
				CHECK(e->hook == hook_of(src.hint_hook));
			}
		check_refused_hints(t, fs.mnt(), dev, log);
	} else {
		MESSAGE("hint events are not active here: " << src.notes);
	}
	if (src.create_events) {
		bool all_created = log.wait_for(t, [&] {
			for (const auto &w : files)
				if (!log.find(KVFDP_EV_CREATE, dev, w.ino))
					return false;
			return true;
		});
		CHECK(all_created);
		if (const kvfdp_event *e = log.find(KVFDP_EV_CREATE, dev, rule_file.ino)) {
			CHECK(e->value == kRuleClass);
			CHECK(e->hook == hook_of(src.create_hook));
		}
		if (const FileRecord *r = log.files.find_live(dev, rule_file.ino))
			CHECK(r->cls == kRuleClass);
	}

	check_subtrees_and_writers(t, fs.disk(), fs.mnt(), dev, src, log, ruled, kRuleClass);

	// A file's measured lifetime lies between what userspace saw on either side.
	REQUIRE_MESSAGE(!src.unlink_hook.empty(), "no unlink hook attached: " << src.notes);
	std::string life = ruled + "/short_lived";
	uint64_t t0 = now_ns();
	int fd = ::open(life.c_str(), O_CREAT | O_WRONLY, 0644);
	uint64_t t1 = now_ns();
	REQUIRE(fd >= 0);
	struct stat st {};
	REQUIRE(::fstat(fd, &st) == 0);
	REQUIRE(::write(fd, "x", 1) == 1);
	REQUIRE(::fsync(fd) == 0);
	::close(fd);
	uint64_t t2 = now_ns();
	REQUIRE(::unlink(life.c_str()) == 0);
	uint64_t t3 = now_ns();
	for (const auto &w : files)
		REQUIRE(::unlink(w.path.c_str()) == 0);
	bool all_unlinked = log.wait_for(t, [&] {
		for (const auto &w : files)
			if (!log.find(KVFDP_EV_UNLINK, dev, w.ino))
				return false;
		return log.find(KVFDP_EV_UNLINK, dev, st.st_ino) != nullptr;
	});
	CHECK(all_unlinked);
	for (const auto &w : files) {
		const kvfdp_event *e = log.find(KVFDP_EV_UNLINK, dev, w.ino);
		if (!e)
			continue;
		CHECK(e->value <= 1);  // the last link (0: seen after it went)
		if (!w.direct || src.dio_inode)
			CHECK(e->bytes == w.bytes);
	}
	if (src.create_events) {
		const FileRecord *r = log.files.find_dead(dev, st.st_ino);
		REQUIRE(r != nullptr);
		uint64_t measured = r->lifetime_ns();
		CHECK_MESSAGE(measured >= t2 - t1, "lifetime " << measured << " ns < " << t2 - t1);
		CHECK_MESSAGE(measured <= t3 - t0, "lifetime " << measured << " ns > " << t3 - t0);
		CHECK(r->cls == kRuleClass);
		CHECK(log.files.histogram(kRuleClass).count() >= 1);
		MESSAGE(fstype << ": short_lived measured " << measured / 1000 << " us, real "
			       << (t2 - t1) / 1000 << ".." << (t3 - t0) / 1000 << " us");
	}
	CHECK(t.inode_policy(dev, rule_file.ino) == -1);  // dropped at its last unlink

	// `kvfdp record` on the same disk: the trace's per-class totals match the writes.
	std::FILE *csv = std::tmpfile();
	REQUIRE(csv != nullptr);
	std::atomic<bool> stop{false};
	std::mutex mu;
	std::condition_variable cv;
	bool ready = false;
	Result<RecordSummary> rec = make_error(std::errc::interrupted, "not run");
	std::thread recorder([&] {
		RecordOptions ro;
		ro.disk = fs.disk();
		rec = record_trace(ro, csv, stop, [&] {
			std::lock_guard<std::mutex> g(mu);
			ready = true;
			cv.notify_all();
		});
		std::lock_guard<std::mutex> g(mu);
		ready = true;  // also when it failed before attaching
		cv.notify_all();
	});
	{
		std::unique_lock<std::mutex> g(mu);
		cv.wait(g, [&] { return ready; });
	}
	std::vector<Written> rec_files;
	rec_files.push_back(
		write_file(fs.mnt() + "/rec_short", KVFDP_CLASS_SHORT, kMiB / 2, false));
	rec_files.push_back(write_file(fs.mnt() + "/rec_long", KVFDP_CLASS_LONG, kMiB / 2, true));
	::sync();
	stop = true;
	recorder.join();
	REQUIRE_MESSAGE(rec.ok(), (rec.ok() ? "" : rec.error().message()));
	std::rewind(csv);
	char line[256];
	REQUIRE(std::fgets(line, sizeof(line), csv) != nullptr);
	CHECK(std::string(line) == kRecordHeader);
	uint64_t csv_bytes[KVFDP_NR_CLASSES] = {};
	uint64_t rows = 0;
	while (std::fgets(line, sizeof(line), csv)) {
		unsigned long long tus, slba, nlb;
		char op;
		unsigned cls;
		REQUIRE(std::sscanf(line, "%llu,%c,%llu,%llu,%u", &tus, &op, &slba, &nlb, &cls) ==
			5);
		REQUIRE((op == 'W' || op == 'D'));
		REQUIRE(cls < KVFDP_NR_CLASSES);
		if (op == 'W')
			csv_bytes[cls] += nlb * 4096;
		if (std::getenv("KVFDP_TEST_VERBOSE"))
			MESSAGE("row " << line);
		rows++;
	}
	std::fclose(csv);
	CHECK(rows == rec->rows);
	CHECK(rec->dropped == 0);
	CHECK(csv_bytes[KVFDP_CLASS_SHORT] == kMiB / 2);
	CHECK(csv_bytes[KVFDP_CLASS_LONG] == kMiB / 2);
	MESSAGE(fstype << ": record wrote " << rows << " rows; class 2 " << csv_bytes[2]
		       << " bytes, class 4 " << csv_bytes[4] << " bytes");
	for (const auto &w : rec_files)
		::unlink(w.path.c_str());

	// Unwatching drops the disk with its path disks (learned or still named): the tagger
	// sees none of the requests that follow.
	REQUIRE(t.unwatch_disk(fs.disk()).ok());
	CHECK_FALSE(t.counters(fs.disk()).ok());
	CHECK_FALSE(t.unwatch_disk(fs.disk()).ok());
	uint64_t issued = t.stats()[KVFDP_STAT_ISSUED];
	Written after = write_file(fs.mnt() + "/after_unwatch", KVFDP_CLASS_SHORT, kMiB / 4, true);
	::sync();
	CHECK(t.stats()[KVFDP_STAT_ISSUED] == issued);
	::unlink(after.path.c_str());
}

// Capabilities, decided before any check: root, BTF and a scratch disk (loop, or
// KVFDP_BPF_TEST_DISK).
const test::Requires need_root("root", test::probe_root("loading BPF programs"));
const test::Requires need_btf("btf", test::probe_btf());
const test::Requires need_disk("loop", test::probe_scratch_disk());

}  // namespace

TEST_CASE("bpf: tagger classifies, attributes and reports lifetimes on ext4")
{
	check_filesystem("ext4");
}

TEST_CASE("bpf: tagger classifies, attributes and reports lifetimes on xfs")
{
	check_filesystem("xfs");
}
