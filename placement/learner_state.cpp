// The learner's soft state: save() writes the estimates to a file atomically, load() reads
// them back, checked (docs/placement.md "Soft state").
#include "placement/learner_internal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sstream>

#include "common/fnv.hpp"

namespace kvfdp::placement {

using namespace learner_detail;

namespace {

constexpr const char *kMagic = "kvfdp-learner";
// 1: no death-age histograms, 2: no class split, 3: no device identity and no last write,
// 4: no writer names, 5: no writer split (all still read)
constexpr int kVersion = 6;
// save()'s temporary files are named path + kTempInfix + a unique suffix.
constexpr const char *kTempInfix = ".tmp.";

}  // namespace

namespace {

// The directory path is in ("." for a bare name), and path's name in it.
std::pair<std::string, std::string> split_path(const std::string &path)
{
	const size_t slash = path.rfind('/');
	if (slash == std::string::npos)
		return {".", path};
	return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// A temporary file beside path with a name no other save uses (pid, a counter and random
// bits), created exclusively, never through a link, mode 0600. Retries a name taken.
Result<std::pair<int, std::string>> create_temp(const std::string &path)
{
	static std::atomic<uint64_t> counter{0};
	for (int tries = 0; tries < 16; tries++) {
		uint64_t rnd = 0;
		if (::getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
			rnd = static_cast<uint64_t>(::time(nullptr)) * 0x9E3779B97F4A7C15ull;
		char suffix[64];
		std::snprintf(suffix, sizeof(suffix), "%s%d.%llu.%08llx", kTempInfix,
			      static_cast<int>(::getpid()),
			      static_cast<unsigned long long>(counter.fetch_add(1)),
			      static_cast<unsigned long long>(rnd & 0xFFFFFFFF));
		const std::string tmp = path + suffix;
		const int fd = ::open(tmp.c_str(),
				      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return std::pair{fd, tmp};
		if (errno != EEXIST)
			return errno_error(errno, "write learned state " + tmp);
	}
	return errno_error(EEXIST, "write learned state " + path + kTempInfix + "*");
}

// Writes text to path so that a crash leaves the old file or the new one whole: a new
// temporary file, fsync'ed, renamed over path, then the directory fsync'ed so the rename
// itself is on disk.
Result<void> write_atomically(const std::string &path, const std::string &text)
{
	auto t = create_temp(path);
	if (!t)
		return std::move(t).error();
	const auto [fd, tmp] = *t;
	auto fail = [fd = fd, tmp = tmp](int e, const std::string &what) -> Result<void> {
		::close(fd);
		::unlink(tmp.c_str());
		return errno_error(e, what);
	};
	size_t off = 0;
	while (off < text.size()) {
		const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(errno, "write learned state " + tmp);
		}
		off += static_cast<size_t>(n);
	}
	if (::fsync(fd) != 0)
		return fail(errno, "write learned state " + tmp);
	if (::close(fd) != 0) {
		const int e = errno;
		::unlink(tmp.c_str());
		return errno_error(e, "write learned state " + tmp);
	}
	if (::rename(tmp.c_str(), path.c_str()) != 0) {
		const int e = errno;
		::unlink(tmp.c_str());
		return errno_error(e, "rename learned state to " + path);
	}
	const std::string dir = split_path(path).first;
	const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno_error(errno, "open " + dir + " to sync the learned state's rename");
	const int r = ::fsync(dfd);
	const int e = errno;
	::close(dfd);
	if (r != 0)
		return errno_error(e, "sync " + dir + " after renaming the learned state");
	return ok();
}

}  // namespace

void Learner::set_device_identity(std::string id)
{
	for (char &c : id)
		if (std::isspace(static_cast<unsigned char>(c)) ||
		    !std::isprint(static_cast<unsigned char>(c)))
			c = '_';
	std::lock_guard lock(mu_);
	device_ = std::move(id);
}

Result<void> Learner::save(const std::string &path) const
{
	std::ostringstream body;
	body.precision(17);
	{
		std::lock_guard lock(mu_);
		body << kMagic << ' ' << kVersion << '\n';
		body << "device " << (device_.empty() ? std::string("-") : device_) << '\n';
		body << "nruh " << cfg_.nruh << '\n';
		body << "clock " << clock_.load(std::memory_order_relaxed) << ' ' << last_clock_
		     << ' ' << write_rate_ << ' ' << used_lo_ << ' ' << used_hi_ << '\n';
		each_key([&](const Slot &s, uint64_t tag, const KeyState &st) {
			body << "key " << tag << ' ' << s.handle.load(std::memory_order_relaxed)
			     << ' ' << s.written.load(std::memory_order_relaxed) << ' '
			     << s.died.load(std::memory_order_relaxed) << ' '
			     << s.died_age.load(std::memory_order_relaxed) << ' ' << st.seen_written
			     << ' ' << st.seen_died << ' ' << st.seen_age << ' ' << st.share << ' '
			     << st.age_num << ' ' << st.age_den << ' ' << st.lifetime << ' '
			     << st.group << '\n';
			body << "ages";
			for (unsigned b = 0; b < kAgeBuckets; b++)
				body << ' ' << st.seen_ages[b] << ' ' << st.ages[b];
			body << '\n';
			body << "split " << st.first_write << ' '
			     << (st.class_given_up ? 1 : 0) + (st.writer_given_up ? 2 : 0) << '\n';
			body << "written " << st.last_write << '\n';
			// Length-prefixed: a cgroup path may hold spaces.
			body << "name " << st.name.size() << ' ' << st.name << '\n';
		});
	}
	std::string text = body.str();
	text += "end " + std::to_string(kvfdp::fnv1a(text)) + "\n";
	return write_atomically(path, text);
}

namespace {

// Removes the temporary files earlier saves to path left (a crash between create and
// rename): path + kTempInfix + anything, in path's directory.
void remove_stale_temps(const std::string &path)
{
	const auto [dir, name] = split_path(path);
	const std::string prefix = name + kTempInfix;
	DIR *d = ::opendir(dir.c_str());
	if (!d)
		return;
	while (const dirent *e = ::readdir(d))
		if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
			::unlinkat(::dirfd(d), e->d_name, 0);
	::closedir(d);
}

// One key line of a state file.
struct SavedKey {
	uint64_t tag, written, died, seen_w, seen_d;
	unsigned handle, group;
	long double age, seen_a;  // integers since version 2 (a long double holds them exactly)
	double share, num, den, life;
	std::array<uint32_t, kAgeBuckets> seen_ages{};
	std::array<double, kAgeBuckets> ages{};
	uint64_t first_write = 0;  // version 3; older files: written since clock 0
	unsigned given_up = 0;     // version 3: 1 the class part; version 6: 2 the writer part
	std::optional<uint64_t> last_write;  // version 4; older files: the saved clock
	std::string name;                    // version 5; older files: none
};

struct SavedState {
	int version = 0;
	std::string device;  // version 4; "" older files
	uint64_t clock = 0, last_clock = 0, used_lo = 0, used_hi = 0;
	double rate = 0;
	std::vector<SavedKey> keys;
};

// The body of the state file at path (up to its end line), checked: "" and missing = true
// when there is none, else why it is not usable (or "" with body set).
std::string read_checked(const std::string &path, std::string &body, bool &missing)
{
	missing = false;
	const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		missing = errno == ENOENT;
		return missing ? "" : std::string("cannot open (") + std::strerror(errno) + ")";
	}
	struct stat st {};
	if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
		::close(fd);
		return "not a regular file under 64 MiB";
	}
	std::string text(static_cast<size_t>(st.st_size), '\0');
	size_t off = 0;
	while (off < text.size()) {
		const ssize_t n = ::read(fd, text.data() + off, text.size() - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += static_cast<size_t>(n);
	}
	::close(fd);
	text.resize(off);
	const size_t end = text.rfind("end ");
	if (end == std::string::npos || text.back() != '\n')
		return "truncated (no end line)";
	body = text.substr(0, end);
	if (std::to_string(kvfdp::fnv1a(body)) != text.substr(end + 4, text.size() - end - 5))
		return "checksum mismatch (corrupt or edited)";
	return "";
}

// Parses a checked body saved for nruh handles into out: "" or why it is not usable.
std::string parse_state(const std::string &body, unsigned nruh, SavedState &out)
{
	std::istringstream in(body);
	std::string magic;
	int &version = out.version;
	if (!(in >> magic >> version) || magic != kMagic)
		return "not a kvfdp learner state file";
	if (version < 1 || version > kVersion)
		return "version " + std::to_string(version) + ", this kvfdpd reads 1 to " +
		       std::to_string(kVersion);
	std::string word;
	if (version >= 4 && (!(in >> word >> out.device) || word != "device"))
		return "no device line";
	if (out.device == "-")
		out.device.clear();
	unsigned saved_nruh = 0;
	if (!(in >> word >> saved_nruh) || word != "nruh")
		return "no nruh line";
	if (saved_nruh != nruh)
		return "saved for " + std::to_string(saved_nruh) + " handles, the device has " +
		       std::to_string(nruh);
	if (!(in >> word >> out.clock >> out.last_clock >> out.rate >> out.used_lo >>
	      out.used_hi) ||
	    word != "clock")
		return "no clock line";
	while (in >> word) {
		SavedKey r{};
		if (word != "key" ||
		    !(in >> r.tag >> r.handle >> r.written >> r.died >> r.age >> r.seen_w >>
		      r.seen_d >> r.seen_a >> r.share >> r.num >> r.den >> r.life >> r.group))
			return "malformed key line";
		if (version >= 2) {
			if (!(in >> word) || word != "ages")
				return "malformed ages line";
			for (unsigned b = 0; b < kAgeBuckets; b++)
				if (!(in >> r.seen_ages[b] >> r.ages[b]) || !(r.ages[b] >= 0))
					return "malformed ages line";
		}
		if (version >= 3 && (!(in >> word >> r.first_write >> r.given_up) ||
				     word != "split" || r.given_up > (version >= 6 ? 3u : 1u)))
			return "malformed split line";
		if (version >= 4) {
			uint64_t w = 0;
			if (!(in >> word >> w) || word != "written")
				return "malformed written line";
			r.last_write = w;
		}
		if (version >= 5) {
			size_t n = 0;
			if (!(in >> word >> n) || word != "name" || n > Learner::kMaxNameBytes ||
			    (n && in.get() != ' '))
				return "malformed name line";
			r.name.resize(n);
			if (n && !in.read(r.name.data(), static_cast<std::streamsize>(n)))
				return "malformed name line";
		}
		if (r.tag == 0 || r.handle >= std::max(nruh, 1u) ||
		    out.keys.size() >= Learner::kMaxKeys)
			return "key out of range";
		out.keys.push_back(r);
	}
	return "";
}

}  // namespace

Result<void> Learner::load(const std::string &path)
{
	auto discard = [&](const std::string &why) -> Result<void> {
		return guidance_error(std::errc::invalid_argument,
				      "learned state " + path + ": " + why);
	};
	remove_stale_temps(path);
	std::string body;
	bool missing = false;
	if (std::string why = read_checked(path, body, missing); missing || !why.empty())
		return missing ? ok() : discard(why);
	SavedState saved;
	if (std::string why = parse_state(body, cfg_.nruh, saved); !why.empty())
		return discard(why);
	const int version = saved.version;
	const std::vector<SavedKey> &recs = saved.keys;
	std::lock_guard lock(mu_);
	// A file of another device is not this one's state. One without an identity (versions
	// 1 to 3) is taken by the device that loads it, and its next save binds it.
	if (!device_.empty() && !saved.device.empty() && saved.device != device_)
		return discard("saved for device " + saved.device + ", this is " + device_);
	for (uint32_t i = 0; i < kSlots; i++) {
		slots_[i].tag.store(0, std::memory_order_relaxed);
		state_[i] = KeyState{};
	}
	for (size_t i = 0; i < size_t{kSlots} * kAgeBuckets; i++)
		ages_[i].store(0, std::memory_order_relaxed);
	keys_.store(0, std::memory_order_relaxed);
	for (const SavedKey &r : recs) {
		uint32_t i = slot_hash(r.tag);
		uint32_t n = 0;
		while (slots_[i].tag.load(std::memory_order_relaxed) != 0 && n++ < kMaxProbe)
			i = (i + 1) & (kSlots - 1);
		if (n >= kMaxProbe)
			continue;
		Slot &s = slots_[i];
		s.handle.store(static_cast<uint16_t>(r.handle), std::memory_order_relaxed);
		s.written.store(r.written, std::memory_order_relaxed);
		s.died.store(r.died, std::memory_order_relaxed);
		// Version 1 kept bytes x age as a double; the counter is now in 512 x 512 units.
		const long double unit = version >= 2 ? 1.0L : kAgeUnit;
		s.died_age.store(static_cast<uint64_t>(r.age / unit), std::memory_order_relaxed);
		for (unsigned b = 0; b < kAgeBuckets; b++)
			ages_[size_t{i} * kAgeBuckets + b].store(r.seen_ages[b],
								 std::memory_order_relaxed);
		s.tag.store(r.tag, std::memory_order_release);
		KeyState &ks = state_[i];
		ks.seen_written = r.seen_w;
		ks.seen_died = r.seen_d;
		ks.seen_age = static_cast<uint64_t>(r.seen_a / unit);
		ks.seen_ages = r.seen_ages;
		ks.ages = r.ages;
		ks.share = r.share;
		ks.age_num = r.num;
		ks.age_den = r.den;
		ks.lifetime = r.life;
		ks.group = r.group;
		ks.first_write = r.first_write;
		ks.class_given_up = (r.given_up & 1) != 0;
		ks.writer_given_up = (r.given_up & 2) != 0;
		ks.last_write = r.last_write ? *r.last_write : saved.clock;
		ks.name = r.name;
		keys_.fetch_add(1, std::memory_order_relaxed);
	}
	clock_.store(saved.clock, std::memory_order_relaxed);
	last_clock_ = saved.last_clock;
	write_rate_ = saved.rate;
	used_lo_ = saved.used_lo;
	used_hi_ = saved.used_hi;
	return ok();
}

}  // namespace kvfdp::placement