// Writer identities resolved for the tagger's raw ids, and the [[writer]] entries put into it.
#include "bpf/user/identity.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "bpf/user/devnum.hpp"
#include "bpf/user/tagger.hpp"
#include "common/writer_identity.hpp"

namespace kvfdp::bpf {

std::string mount_root_of(uint32_t s_dev, const std::string &mountinfo)
{
	std::ifstream in(mountinfo);
	std::string line;
	const std::string want =
		std::to_string(s_dev >> 20) + ":" + std::to_string(s_dev & 0xfffff);
	while (std::getline(in, line)) {
		// "36 35 8:1 / /mnt/kv rw,... - ext4 /dev/sda1 rw": major:minor, root, mount point.
		std::istringstream f(line);
		std::string id, parent, devno, root, mnt;
		f >> id >> parent >> devno >> root >> mnt;
		if (devno == want && root == "/")
			return mnt;
	}
	return "";
}

namespace {

// Checks that a [[writer]] pattern's dir is a directory now and puts it into the tagger's
// identity directories: its stat, or an error whose message is the warning (the spec is
// skipped).
Result<struct stat> add_pattern_dir(Tagger &tagger, const std::string &dir)
{
	struct stat st {};
	if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
		return guidance_error(
			std::errc::not_a_directory,
			"dir " + dir + " is not a directory now; skipped (create it and reload)");
	if (auto r = tagger.add_ident_dir(dir, KVFDP_IDENT_DIR); !r)
		return Error{r.error().code, r.error().message() + "; skipped", true};
	return st;
}

// Whether a cgroup pattern matches any of these cgroup paths.
bool any_cgroup_matches(const std::string &pattern, const std::vector<std::string> &paths)
{
	for (const std::string &p : paths)
		if (cgroup_pattern_matches(pattern, p))
			return true;
	return false;
}

// Puts a [[writer]] spec without a pattern into the tagger: its writer directory, else its
// cgroup (found under the cgroup2 mount root, "" when none is mounted).
Result<void> add_exact_writer(Tagger &tagger, const WriterSpec &w, const std::string &root)
{
	if (!w.dir.empty())
		return tagger.add_writer_dir(w.dir, w.writer);
	if (root.empty())
		return make_error(std::errc::no_such_file_or_directory,
				  "no cgroup2 hierarchy is mounted");
	auto id = cgroup_id_of(root, w.cgroup);
	if (!id)
		return std::move(id).error();
	return tagger.add_writer_cgroup(*id, w.writer);
}

}  // namespace

IdentityResolver::IdentityResolver(Tagger &tagger, size_t names)
    : tagger_(tagger), cgroups_(names), names_(names), dirs_(names)
{
}

std::vector<std::string> IdentityResolver::configure(const std::vector<WriterSpec> &specs,
						     const std::string &watch_dir)
{
	std::vector<std::string> warnings;
	auto warn = [&](const WriterSpec &w, const std::string &what) {
		warnings.push_back("writer " + w.label + " (line " + std::to_string(w.line) +
				   "): " + what);
	};
	std::string root;
	if (auto r = cgroup2_mount())
		root = *r;
	std::vector<std::string> cgroup_paths;  // read once, for the patterns' check
	bool listed = false;
	std::vector<Rule> rules;

	tagger_.clear_writers();
	tagger_.clear_identities();
	tagger_.clear_ident_dirs();
	// Provisional identities stay (guesses the resolver checks); named ids follow the entries'
	// order in the config, so those go.
	const size_t dir_idents_removed = tagger_.clear_named_dir_idents();
	if (!watch_dir.empty())
		if (auto r = tagger_.add_ident_dir(watch_dir, KVFDP_IDENT_ROOT); !r)
			warnings.push_back(
				"watch_dir " + watch_dir + ": " + r.error().message() +
				"; writer directories are the filesystem root's children");
	for (const WriterSpec &w : specs) {
		if (!w.cgroup_pattern.empty()) {
			Rule rule{w.cgroup_pattern, w.dir, false, 0, 0, w.writer};
			if (!w.dir.empty()) {
				auto st = add_pattern_dir(tagger_, w.dir);
				if (!st) {
					warn(w, st.error().message());
					continue;
				}
				rule.has_dir = true;
				rule.dev = kernel_dev(st->st_dev);
				rule.dir_ino = st->st_ino;
			}
			if (!listed && !root.empty()) {
				cgroup_paths = cgroup_paths_under(root);
				listed = true;
			}
			if (!any_cgroup_matches(w.cgroup_pattern, cgroup_paths))
				warn(w,
				     "cgroup_pattern " + w.cgroup_pattern +
					     " matches no cgroup now; it applies to cgroups created later");
			rules.push_back(std::move(rule));
			continue;
		}
		if (auto r = add_exact_writer(tagger_, w, root); !r)
			warn(w, r.error().message() + "; skipped");
	}
	std::lock_guard g(mu_);
	counts_.dir_idents_removed += dir_idents_removed;
	rules_ = std::move(rules);
	watch_dir_ = watch_dir;
	dirs_.clear();
	return warnings;
}

std::string IdentityResolver::dir_name(uint32_t dev, uint64_t ino)
{
	if (const std::string *n = dirs_.find(DirKey{dev, ino}))
		return *n;
	// A [[writer]] pattern's own directory, wherever it is: its base name.
	for (const Rule &r : rules_)
		if (r.has_dir && r.dev == dev && r.dir_ino == ino)
			return r.dir.substr(r.dir.rfind('/') + 1);
	std::vector<std::string> parents;
	if (!watch_dir_.empty())
		if (auto d = path_fs_dev(watch_dir_); d && *d == dev)
			parents.push_back(watch_dir_);
	if (std::string m = mount_root_of(dev); !m.empty())
		parents.push_back(m);
	std::string name;
	for (const std::string &p : parents) {
		DIR *d = ::opendir(p.c_str());
		if (!d)
			continue;
		while (dirent *e = ::readdir(d))
			if (e->d_ino == ino && e->d_name[0] != '.') {
				name = e->d_name;
				break;
			}
		::closedir(d);
		if (!name.empty())
			break;
	}
	if (!name.empty())
		dirs_.put(DirKey{dev, ino}, name);
	return name;
}

uint32_t IdentityResolver::on_create(const kvfdp_event &e)
{
	if (e.type != KVFDP_EV_CREATE || !e.cgroup_id)
		return e.writer;
	// A provisional id (the writer directory's last identity) is checked like a raw id.
	const bool provisional = (e.flags & KVFDP_EVF_PROVISIONAL) != 0;
	if (!provisional && (e.writer & KVFDP_WRITER_NAMED))
		return e.writer;
	const bool ident = !provisional && (e.writer & KVFDP_WRITER_IDENT) != 0;
	std::lock_guard g(mu_);
	if (ident && names_.find(e.writer))
		return e.writer;
	if (!ident && !provisional && !kvfdp_writer_is_raw(e.writer))
		return e.writer;
	const std::string path = cgroups_.resolve(e.cgroup_id, e.pid);
	if (path.empty()) {
		counts_.unresolved += ident ? 0 : 1;
		return e.writer;
	}
	uint32_t id = 0;
	for (const Rule &r : rules_)
		if (cgroup_pattern_matches(r.pattern, path) &&
		    (!r.has_dir || (r.dev == e.dev && r.dir_ino == e.writer_dir_ino))) {
			id = r.writer;
			break;
		}
	const bool by_pattern = id != 0;
	if (!id) {
		std::string dir;
		if (e.writer_dir_ino) {
			dir = dir_name(e.dev, e.writer_dir_ino);
			if (dir.empty()) {
				counts_.unresolved += ident ? 0 : 1;
				return e.writer;
			}
		}
		const std::string s = writer_identity(path, dir);
		id = kvfdp_writer_of_identity(identity_hash(s));
		names_.put(id, s);
	}
	if (ident)  // the map already held it (a pinned set kept it): only its name was missing
		return e.writer;
	if (!tagger_.set_identity(e.cgroup_id, e.dev, e.writer_dir_ino, id))
		return e.writer;
	counts_.resolved++;
	counts_.by_pattern += by_pattern ? 1 : 0;
	// The directory's provisional id for the next new cgroup there: this one.
	if (auto added = tagger_.set_dir_ident(e.dev, e.writer_dir_ino, id); added && *added)
		counts_.dir_idents_added++;
	if (provisional && id == e.writer) {  // the guess was right: nothing to rewrite
		counts_.provisional_right++;
		return id;
	}
	counts_.provisional_wrong += provisional ? 1 : 0;
	const uint64_t early = tagger_.inode_bytes(e.dev, e.ino);
	if (tagger_.set_inode_writer(e.dev, e.ino, id)) {
		counts_.rewritten++;
		counts_.early_bytes += early;
	}
	return id;
}

std::string IdentityResolver::name_of(uint32_t writer)
{
	std::lock_guard g(mu_);
	const std::string *s = names_.peek(writer);
	return s ? *s : std::string();
}

IdentityStats IdentityResolver::stats()
{
	std::lock_guard g(mu_);
	IdentityStats s = counts_;
	s.names = names_.size();
	s.names_capacity = names_.capacity();
	s.name_evictions = names_.evictions();
	s.dirs = dirs_.size();
	s.dirs_capacity = dirs_.capacity();
	s.dir_evictions = dirs_.evictions();
	s.cgroups = cgroups_.stats();
	return s;
}

}  // namespace kvfdp::bpf
