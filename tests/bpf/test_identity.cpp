// Writer identity and the bounded per-inode maps, with the tagger loaded into the running kernel
// on a scratch ext4 disk (or KVFDP_BPF_TEST_DISK): a "pod" (a cgroup named as the kubelet's
// systemd driver names one) writing under its engine directory gets the identity id, files
// and requests alike; after it dies, a pod with a new UID and container id gets the same id
// from its first file on, from BPF (the directory's provisional id) before the resolver runs;
// another workload's first file there gets it too and is corrected by the resolver;
// a [[writer]] cgroup_pattern with a directory gives its named id; a create + rename storm
// larger than the inode maps does not stop a directory rule applying to new files.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "bpf/tagger.h"
#include "bpf/user/devnum.hpp"
#include "bpf/user/disks.hpp"
#include "bpf/user/files.hpp"
#include "bpf/user/identity.hpp"
#include "bpf/user/tagger.hpp"
#include "common/cgroups.hpp"
#include "common/writer_identity.hpp"
#include "tests/bpf/test_disk.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_files.hpp"

using namespace kvfdp;
using namespace kvfdp::bpf;

namespace {

constexpr int kPollBudgetMs = 20000;  // upper bound on waiting for an event (not a sleep)

uint64_t ino_of(const std::string &path)
{
	struct stat st {};
	REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0,
			"stat " << path << ": " << std::strerror(errno));
	return st.st_ino;
}

// The cgroup2 hierarchy: the host's, or one mounted for the test (unmounted at the end).
struct Cgroup2 {
	std::string root;
	std::optional<test::TempDir> own;
	Cgroup2()
	{
		if (auto m = cgroup2_mount()) {
			root = *m;
			return;
		}
		own.emplace();
		root = own->path;
		REQUIRE_MESSAGE(test::run_cmd("mount -t cgroup2 none " + root) == 0,
				"mount cgroup2");
	}
	~Cgroup2()
	{
		if (own && test::run_cmd("umount " + own->path) != 0)
			own->path.clear();  // never rm -rf a live cgroup2 hierarchy
	}
};

// A process in its own cgroup (created, with its parents, under root): it creates each file
// it is told on its pipe, writes 64 KiB to it and fsyncs, answering 'y' (or 'n') each time,
// and exits when told "".
class Pod {
public:
	Pod(const std::string &root, const std::string &cgroup) : root_(root), cgroup_(cgroup)
	{
		std::string at = root;
		size_t i = 1;
		while (i <= cgroup.size()) {
			const size_t end = std::min(cgroup.find('/', i), cgroup.size());
			at += "/" + cgroup.substr(i, end - i);
			if (::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST)
				FAIL("mkdir " << at << ": " << std::strerror(errno));
			made_.push_back(at);
			i = end + 1;
		}
		int to[2], from[2];
		REQUIRE(::pipe(to) == 0);
		REQUIRE(::pipe(from) == 0);
		pid_ = ::fork();
		REQUIRE(pid_ >= 0);
		if (pid_ == 0) {
			::close(to[1]);
			::close(from[0]);
			serve(to[0], from[1]);
		}
		::close(to[0]);
		::close(from[1]);
		to_ = to[1];
		from_ = from[0];
		char c = 0;
		REQUIRE_MESSAGE((::read(from_, &c, 1) == 1 && c == 'y'),
				"the pod could not join " << cgroup);
	}
	~Pod() { die(); }
	Pod(const Pod &) = delete;
	Pod &operator=(const Pod &) = delete;

	// Has the pod create and write path; true when it did.
	bool write(const std::string &path)
	{
		const uint32_t n = static_cast<uint32_t>(path.size());
		if (::write(to_, &n, sizeof(n)) != sizeof(n) ||
		    ::write(to_, path.data(), n) != static_cast<ssize_t>(n))
			return false;
		char c = 0;
		return ::read(from_, &c, 1) == 1 && c == 'y';
	}
	[[nodiscard]] uint64_t cgroup_id() const
	{
		auto id = cgroup_id_of(root_, cgroup_);
		return id ? *id : 0;
	}
	// Ends the process (its cgroups stay until die()).
	void stop()
	{
		if (pid_ > 0) {
			const uint32_t zero = 0;
			(void)!::write(to_, &zero, sizeof(zero));
			int st = 0;
			::waitpid(pid_, &st, 0);
			::close(to_);
			::close(from_);
			pid_ = -1;
		}
	}
	// Ends the process and removes its cgroups (innermost first).
	void die()
	{
		stop();
		for (auto it = made_.rbegin(); it != made_.rend(); ++it)
			::rmdir(it->c_str());
		made_.clear();
	}

private:
	[[noreturn]] void serve(int in, int out)
	{
		const std::string procs = root_ + cgroup_ + "/cgroup.procs";
		const int pfd = ::open(procs.c_str(), O_WRONLY);
		const bool moved = pfd >= 0 && ::write(pfd, "0", 1) == 1;
		(void)!::write(out, moved ? "y" : "n", 1);
		static char buf[64 * 1024];
		std::memset(buf, 0x6b, sizeof(buf));
		for (;;) {
			uint32_t n = 0;
			if (::read(in, &n, sizeof(n)) != sizeof(n) || n == 0 || n > 4096)
				::_exit(0);
			std::string path(n, '\0');
			if (::read(in, path.data(), n) != static_cast<ssize_t>(n))
				::_exit(1);
			const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
			const bool ok = fd >= 0 && ::write(fd, buf, sizeof(buf)) == sizeof(buf) &&
					::fsync(fd) == 0;
			if (fd >= 0)
				::close(fd);
			(void)!::write(out, ok ? "y" : "n", 1);
		}
	}

	std::string root_, cgroup_;
	std::vector<std::string> made_;
	pid_t pid_ = -1;
	int to_ = -1, from_ = -1;
};

// The tagger's events, with the resolver applied as kvfdpd's event thread applies it.
struct Events {
	Events(Tagger &tagger, IdentityResolver &resolver) : t(tagger), r(resolver) {}

	Tagger &t;
	IdentityResolver &r;
	FileTable files{16, 4096};
	std::map<uint64_t, kvfdp_event> creates;  // by inode: the event as the tagger sent it
	std::map<uint64_t, uint32_t> resolved;    // by inode: the writer after the resolver
	std::map<uint64_t, std::set<uint32_t>> record_writers;  // by inode, from request records

	void fold(const kvfdp_event &e)
	{
		const uint32_t w = r.on_create(e);
		kvfdp_event c = e;
		c.writer = w;
		files.on_event(c);
		if (e.type == KVFDP_EV_CREATE) {
			creates[e.ino] = e;
			resolved[e.ino] = w;
		}
	}
	void drain()
	{
		EventCallback ev = [this](const kvfdp_event &e) { fold(e); };
		RecordCallback rec = [this](const kvfdp_rq_record &x) {
			if (x.op == 1 && x.ino)
				record_writers[x.ino].insert(x.writer);
		};
		t.drain(ev, rec);
	}
	// Waits (bounded) for the CREATE of ino.
	bool wait_create(uint64_t ino)
	{
		EventCallback ev = [this](const kvfdp_event &e) { fold(e); };
		RecordCallback rec = [this](const kvfdp_rq_record &x) {
			if (x.op == 1 && x.ino)
				record_writers[x.ino].insert(x.writer);
		};
		t.drain(ev, rec);
		for (int waited = 0; !creates.count(ino) && waited < kPollBudgetMs; waited += 50)
			t.poll(50, ev, rec);
		return creates.count(ino) != 0;
	}
};

std::string hex64(char c)
{
	return std::string(64, c);
}

// A pod's cgroup as the kubelet's systemd driver names it, under a test slice.
std::string pod_cgroup(const std::string &slice, const std::string &uid, const std::string &cid)
{
	return slice + "/kubepods-burstable-pod" + uid + ".slice/cri-containerd-" + cid + ".scope";
}

}  // namespace

TEST_CASE("bpf: a restarted pod keeps its writer identity; a rename storm keeps rules applying")
{
	test::ScratchFs fs("ext4");
	REQUIRE_MESSAGE(fs.ok(), fs.why());
	auto rq_disks = request_disks(*disk_dev(fs.disk()));
	auto [queues, depth] = mq_geometry(rq_disks);
	TaggerOptions opts;
	opts.queues = queues;
	opts.depth = depth;
	if (static_cast<uint64_t>(queues) * depth > KVFDP_MAX_SLOTS)
		opts.queues = KVFDP_MAX_SLOTS / depth;
	opts.record_ring_bytes = 1u << 20;
	auto loaded = Tagger::load(opts);
	REQUIRE_MESSAGE(loaded.ok(), "the kernel refused the BPF tagger: "
					     << (loaded.ok() ? "" : loaded.error().message()));
	Tagger &t = *loaded;
	MESSAGE("active sources: "
		<< t.sources().describe()
		<< (t.sources().notes.empty() ? "" : " (" + t.sources().notes + ")"));
	REQUIRE(t.watch_disk(fs.disk(), KVFDP_DISK_SLOTS | KVFDP_DISK_RECORD).ok());
	const uint32_t dev = *path_fs_dev(fs.mnt());
	Cgroup2 cg;
	const std::string slice = "/kvfdp-test-" + std::to_string(::getpid()) + ".slice";

	const std::string engine = fs.mnt() + "/engine", staging = fs.mnt() + "/staging",
			  patterned = fs.mnt() + "/patterned", ruled = fs.mnt() + "/ruled";
	for (const std::string &d : {engine, engine + "/deep", staging, patterned, ruled})
		REQUIRE(::mkdir(d.c_str(), 0755) == 0);

	IdentityResolver r(t);
	constexpr uint32_t kPatterned = KVFDP_WRITER_NAMED | 1;
	WriterSpec spec;
	spec.label = "patterned";
	spec.cgroup_pattern = slice + "/named-*.scope";
	spec.dir = patterned;
	spec.writer = kPatterned;
	const std::vector<std::string> warnings = r.configure({spec}, "");
	// No cgroup matches the pattern yet: one warning line, and the rule still applies later.
	REQUIRE(warnings.size() == 1);
	CHECK_MESSAGE(warnings[0].find("matches no cgroup now") != std::string::npos, warnings[0]);
	Events ev{t, r};

	// Pod 1 writes under engine/ (and deeper): its files get the identity of its normalised
	// cgroup path and "engine".
	const std::string uid1 = "3f1c9b2e_8d4a_4c1e_9f2b_7a6d5c4b3a21";
	const std::string cg1 = pod_cgroup(slice, uid1, hex64('a'));
	const uint32_t want =
		kvfdp_writer_of_identity(identity_hash(writer_identity(cg1, "engine")));
	CHECK(want ==
	      kvfdp_writer_of_identity(identity_hash(
		      slice + "/kubepods-burstable-pod*.slice/cri-containerd-*.scope@engine")));
	uint64_t cg1_id = 0;
	{
		Pod pod1(cg.root, cg1);
		cg1_id = pod1.cgroup_id();
		REQUIRE(pod1.write(engine + "/a1"));
		const uint64_t a1 = ino_of(engine + "/a1");
		REQUIRE(ev.wait_create(a1));
		// The tagger saw a raw id; the resolver named the cgroup (from the live pod's
		// /proc/PID/cgroup) and gave the file its identity, in the map too.
		CHECK(kvfdp_writer_is_raw(ev.creates[a1].writer));
		CHECK(ev.creates[a1].writer == kvfdp_writer_of_cgroup(cg1_id));
		CHECK(ev.creates[a1].writer_dir_ino == ino_of(engine));
		CHECK(!(ev.creates[a1].flags & KVFDP_EVF_PROVISIONAL));  // engine/ had no id yet
		CHECK(ev.resolved[a1] == want);
		CHECK(t.inode_writer(dev, a1) == want);
		CHECK(t.identity(cg1_id, dev, ino_of(engine)) == want);
		CHECK(t.dir_ident(dev, ino_of(engine)) == want);  // engine/'s provisional id
		CHECK(r.name_of(want) == writer_identity(cg1, "engine"));
		// Its next files get the identity in BPF already, two levels down too.
		const uint64_t hits = t.stats()[KVFDP_STAT_IDENT_HIT];
		REQUIRE(pod1.write(engine + "/a2"));
		REQUIRE(pod1.write(engine + "/deep/a3"));
		const uint64_t a2 = ino_of(engine + "/a2"), a3 = ino_of(engine + "/deep/a3");
		REQUIRE(ev.wait_create(a2));
		REQUIRE(ev.wait_create(a3));
		CHECK(ev.creates[a2].writer == want);
		CHECK(ev.creates[a3].writer == want);
		CHECK(!(ev.creates[a2].flags &
			KVFDP_EVF_PROVISIONAL));  // writer_idents, not a guess
		CHECK(ev.creates[a3].writer_dir_ino == ino_of(engine));
		CHECK(t.stats()[KVFDP_STAT_IDENT_HIT] >= hits + 2);
		// Every write request of a2 (created after the map entry) carried the identity.
		ev.drain();
		REQUIRE(ev.record_writers.count(a2));
		CHECK(ev.record_writers[a2] == std::set<uint32_t>{want});
		// Under staging/ the same pod is another writer.
		REQUIRE(pod1.write(staging + "/s1"));
		const uint64_t s1 = ino_of(staging + "/s1");
		REQUIRE(ev.wait_create(s1));
		CHECK(ev.resolved[s1] ==
		      kvfdp_writer_of_identity(identity_hash(writer_identity(cg1, "staging"))));
		CHECK(ev.resolved[s1] != want);
		// A file in the filesystem's root has no directory part.
		REQUIRE(pod1.write(fs.mnt() + "/top"));
		const uint64_t top = ino_of(fs.mnt() + "/top");
		REQUIRE(ev.wait_create(top));
		CHECK(ev.creates[top].writer_dir_ino == 0);
		CHECK(ev.resolved[top] ==
		      kvfdp_writer_of_identity(identity_hash(normalise_cgroup_path(cg1))));
		CHECK(t.dir_ident(dev, 0) == ev.resolved[top]);  // the root's one entry
	}                                                        // pod 1 dies; its cgroups go

	// Pod 2: a new pod UID and container id, so a new cgroup (no writer_idents entry). Its
	// first file in engine/ gets engine/'s id from BPF at create, provisionally: its entry and
	// every request of its 64 KiB carry the identity before the resolver ran (the test folds
	// events only in wait_create/drain). The resolver confirms it after the pod exited but
	// before its cgroup went (by the cgroup's file handle): nothing is rewritten.
	const std::string cg2 =
		pod_cgroup(slice, "0b7e6d5c_4a3b_4c2d_8e1f_9a8b7c6d5e4f", hex64('b'));
	{
		Pod pod2(cg.root, cg2);
		const uint64_t cg2_id = pod2.cgroup_id();
		CHECK(cg2_id != cg1_id);
		const IdentityStats s0 = r.stats();
		const uint64_t provisional = t.stats()[KVFDP_STAT_IDENT_PROVISIONAL];
		REQUIRE(pod2.write(engine + "/b1"));  // created, written and fsynced
		const uint64_t b1 = ino_of(engine + "/b1");
		CHECK(!ev.creates.count(b1));  // not folded yet: no resolver has seen it
		CHECK(t.inode_writer(dev, b1) == want);
		CHECK(t.stats()[KVFDP_STAT_IDENT_PROVISIONAL] == provisional + 1);
		pod2.stop();
		REQUIRE(ev.wait_create(b1));
		CHECK((ev.creates[b1].flags & KVFDP_EVF_PROVISIONAL) != 0);
		CHECK(ev.creates[b1].writer == want);
		CHECK(ev.creates[b1].cgroup_id == cg2_id);  // the raw cgroup, for the resolver
		CHECK(ev.resolved[b1] == want);             // the same identity as pod 1's
		CHECK(t.inode_writer(dev, b1) == want);
		CHECK(t.identity(cg2_id, dev, ino_of(engine)) == want);
		const IdentityStats s1 = r.stats();
		CHECK(s1.cgroups.by_handle == s0.cgroups.by_handle + 1);
		CHECK(s1.provisional_right == s0.provisional_right + 1);
		CHECK(s1.rewritten == s0.rewritten);
		CHECK(s1.early_bytes == s0.early_bytes);
		ev.drain();
		REQUIRE(ev.record_writers.count(b1));
		CHECK(ev.record_writers[b1] == std::set<uint32_t>{want});
	}
	// The file handle names a cgroup directly (what the resolver does for pod 2 above).
	{
		const std::string cg3 =
			pod_cgroup(slice, "6c1e3a5b_7d9f_4b3d_8f7a_9c1e3b5d7f9a", hex64('c'));
		Pod pod3(cg.root, cg3);
		const uint64_t cg3_id = pod3.cgroup_id();
		auto by_handle = cgroup_path_by_handle(cg.root, cg3_id);
		REQUIRE_MESSAGE(by_handle.ok(), by_handle.error().message());
		CHECK(*by_handle == cg3);
	}

	// A [[writer]] cgroup_pattern with a directory: the named id there, an identity elsewhere.
	// Under engine/ it is another workload: its first file gets engine/'s id (pod 1's)
	// provisionally, which the resolver corrects, counting the bytes written under it.
	{
		Pod named(cg.root, slice + "/named-1.scope");
		const IdentityStats s0 = r.stats();
		REQUIRE(named.write(patterned + "/n1"));
		REQUIRE(named.write(engine + "/n2"));
		const uint64_t n1 = ino_of(patterned + "/n1"), n2 = ino_of(engine + "/n2");
		CHECK(t.inode_writer(dev, n2) == want);  // the guess, before the resolver
		REQUIRE(ev.wait_create(n1));
		REQUIRE(ev.wait_create(n2));
		CHECK(ev.creates[n1].writer_dir_ino == ino_of(patterned));
		CHECK(!(ev.creates[n1].flags & KVFDP_EVF_PROVISIONAL));  // patterned/ had no id
		CHECK(ev.resolved[n1] == kPatterned);
		CHECK(t.inode_writer(dev, n1) == kPatterned);
		CHECK(t.dir_ident(dev, ino_of(patterned)) == kPatterned);
		const uint32_t named_engine = kvfdp_writer_of_identity(
			identity_hash(writer_identity(slice + "/named-1.scope", "engine")));
		CHECK((ev.creates[n2].flags & KVFDP_EVF_PROVISIONAL) != 0);
		CHECK(ev.creates[n2].writer == want);
		CHECK(ev.resolved[n2] == named_engine);
		CHECK(t.inode_writer(dev, n2) == named_engine);
		CHECK(t.dir_ident(dev, ino_of(engine)) == named_engine);  // the latest there
		const IdentityStats s1 = r.stats();
		CHECK(s1.provisional_wrong == s0.provisional_wrong + 1);
		CHECK(s1.rewritten == s0.rewritten + 2);              // n1 (raw) and n2
		CHECK(s1.early_bytes >= s0.early_bytes + 2 * 65536);  // both were fsynced first
	}
	const IdentityStats st = r.stats();
	CHECK(st.resolved >= 5);
	CHECK(st.by_pattern == 1);
	CHECK(st.rewritten >= 5);
	CHECK(st.names <= st.names_capacity);
	CHECK(st.cgroups.by_pid >= 1);

	// A reload drops the directories' named ids (a [[writer]] number may name another entry
	// now) and keeps their identities (guesses, checked anyway).
	const uint32_t engine_id = t.dir_ident(dev, ino_of(engine));
	CHECK((engine_id & KVFDP_WRITER_IDENT) != 0);
	CHECK(r.configure({spec}, "").size() == 1);  // the pattern matches no cgroup again
	CHECK(t.dir_ident(dev, ino_of(patterned)) == 0);
	CHECK(t.dir_ident(dev, ino_of(engine)) == engine_id);
	CHECK(r.stats().dir_idents_removed == st.dir_idents_removed + 1);

	// A create + rename storm under a directory rule: each new file replaces the last. A
	// rename over a file is seen by kprobe/vfs_rename where it attaches (the replaced file's
	// entries go, as at an unlink).
	REQUIRE(t.add_dir_rule(ruled, KVFDP_CLASS_MEDIUM).ok());
	const TaggerStats before = t.stats();
	const std::string tmp = ruled + "/tmp", target = ruled + "/target";
	const int storm = 8192;
	for (int i = 0; i < storm; i++) {
		const int fd = ::open(tmp.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
		REQUIRE(fd >= 0);
		::close(fd);
		REQUIRE(::rename(tmp.c_str(), target.c_str()) == 0);
		if (i % 512 == 0)
			ev.drain();
	}
	ev.drain();
	TaggerStats after = t.stats();
	const uint64_t renames = after[KVFDP_STAT_RENAME_OVER] - before[KVFDP_STAT_RENAME_OVER];
	MESSAGE("rename storm: "
		<< storm << " files; inode_policy +"
		<< after[KVFDP_STAT_POLICY_ADDED] - before[KVFDP_STAT_POLICY_ADDED] << " -"
		<< after[KVFDP_STAT_POLICY_REMOVED] - before[KVFDP_STAT_POLICY_REMOVED]
		<< " (a reused inode number replaces its entry); renames over seen " << renames);
	if (!t.sources().rename_hook.empty()) {  // every rename but the first replaced a file
		CHECK(renames >= static_cast<uint64_t>(storm) - 1);
		CHECK(after[KVFDP_STAT_POLICY_REMOVED] - before[KVFDP_STAT_POLICY_REMOVED] >=
		      static_cast<uint64_t>(storm) - 1);
	}
	CHECK(ev.files.live_count() <= ev.files.max_live());
	CHECK(t.inode_policy(dev, ino_of(target)) == KVFDP_CLASS_MEDIUM);

	// Where no hook sees the replaced files (or inode numbers are not reused), their entries
	// stay: the map then fills with dead files' entries. Filled to its size that way, it
	// still takes a new file's rule: the least recently used entry goes, no insert fails.
	for (uint64_t i = 0; i < KVFDP_INODE_MAP_ENTRIES; i++)
		REQUIRE(t.add_inode_policy(dev, (1ull << 40) + i, KVFDP_CLASS_LONG).ok());
	const std::string fresh = ruled + "/after-storm";
	const int fd = ::open(fresh.c_str(), O_CREAT | O_WRONLY, 0644);
	REQUIRE(fd >= 0);
	::close(fd);
	after = t.stats();
	CHECK(t.inode_policy(dev, ino_of(fresh)) == KVFDP_CLASS_MEDIUM);
	CHECK(after[KVFDP_STAT_POLICY_FAILED] == before[KVFDP_STAT_POLICY_FAILED]);
}

namespace {
const test::Requires need_root("root", test::probe_root("loading BPF programs"));
const test::Requires need_btf("btf", test::probe_btf());
const test::Requires need_disk("loop", test::probe_scratch_disk());
}  // namespace
