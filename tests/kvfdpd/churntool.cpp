// kvfdp-churn-vmtool: guest-side helper of the daemon_churn VM scenario: writers that come
// and go in cgroups of their own, a create + rename storm, a control-socket connection flood,
// and running a command as another uid. Each loop is bounded by its count; nothing sleeps.
#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

int usage()
{
	std::fprintf(
		stderr,
		"usage: kvfdp-churn-vmtool writers CGROUP_PARENT FIRST COUNT DIR KIB [--fsync]\n"
		"           COUNT writers, one after another: writer i is the cgroup\n"
		"           CGROUP_PARENT/job-i.service (made, joined, left and removed), writes\n"
		"           DIR/job-i (KIB, O_DIRECT; --fsync: then fsync), then deletes it\n"
		"       kvfdp-churn-vmtool renames DIR COUNT\n"
		"           COUNT times: DIR/tmp (a new inode, 4 KiB written) renamed over DIR/target\n"
		"       kvfdp-churn-vmtool flood SOCK COUNT\n"
		"           opens COUNT connections to SOCK at once, each sends half a request; prints\n"
		"           how many the server kept open, then closes them\n"
		"       kvfdp-churn-vmtool as-uid UID GID CMD [ARG...]\n"
		"           runs CMD with uid UID, gid GID and no supplementary groups\n");
	return 2;
}

double now_s()
{
	timespec t{};
	clock_gettime(CLOCK_MONOTONIC, &t);
	return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

bool write_all(int fd, const void *buf, size_t n)
{
	const char *p = static_cast<const char *>(buf);
	while (n) {
		const ssize_t w = ::write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= static_cast<size_t>(w);
	}
	return true;
}

bool write_text(const std::string &path, const std::string &text)
{
	const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	const bool ok = write_all(fd, text.data(), text.size());
	::close(fd);
	return ok;
}

// The calling process joins the cgroup at path (a directory of the cgroup2 mount).
bool join(const std::string &cgroup)
{
	return write_text(cgroup + "/cgroup.procs", std::to_string(::getpid()));
}

int fail(const char *what, const std::string &arg)
{
	std::fprintf(stderr, "kvfdp-churn-vmtool: %s %s: %s\n", what, arg.c_str(),
		     std::strerror(errno));
	return 1;
}

int cmd_writers(int argc, char **argv)
{
	if (argc != 7 && !(argc == 8 && std::strcmp(argv[7], "--fsync") == 0))
		return usage();
	const bool sync = argc == 8;
	const std::string parent = argv[2];
	const unsigned long first = std::strtoul(argv[3], nullptr, 10);
	const unsigned long count = std::strtoul(argv[4], nullptr, 10);
	const std::string dir = argv[5];
	const size_t bytes = std::strtoul(argv[6], nullptr, 10) * 1024;
	if (!bytes || bytes % 4096)
		return usage();
	std::string home;  // the cgroup to return to
	{
		FILE *f = std::fopen("/proc/self/cgroup", "r");
		char line[4096];
		while (f && std::fgets(line, sizeof(line), f))
			if (std::strncmp(line, "0::", 3) == 0) {
				home = line + 3;
				if (!home.empty() && home.back() == '\n')
					home.pop_back();
			}
		if (f)
			std::fclose(f);
	}
	const std::string back = "/sys/fs/cgroup" + (home == "/" ? std::string() : home);
	void *buf = nullptr;
	if (posix_memalign(&buf, 4096, bytes) != 0)
		return fail("allocate", std::to_string(bytes));
	std::memset(buf, 0x5a, bytes);
	const double t0 = now_s();
	for (unsigned long i = first; i < first + count; i++) {
		const std::string name = "job-" + std::to_string(i);
		const std::string cg = parent + "/" + name + ".service";
		const std::string path = dir + "/" + name;
		if (::mkdir(cg.c_str(), 0755) != 0 && errno != EEXIST)
			return fail("mkdir", cg);
		if (!join(cg))
			return fail("join", cg);
		const int fd = ::open(path.c_str(),
				      O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644);
		if (fd < 0)
			return fail("create", path);
		std::memcpy(buf, &i, sizeof(i));
		if (!write_all(fd, buf, bytes) || (sync && ::fsync(fd) != 0))
			return fail("write", path);
		::close(fd);
		if (::unlink(path.c_str()) != 0)
			return fail("unlink", path);
		if (!join(back))
			return fail("join", back);
		if (::rmdir(cg.c_str()) != 0)
			return fail("rmdir", cg);
	}
	std::free(buf);
	std::printf("{\"writers\": %lu, \"seconds\": %.3f}\n", count, now_s() - t0);
	return 0;
}

int cmd_renames(int argc, char **argv)
{
	if (argc != 4)
		return usage();
	const std::string dir = argv[2];
	const unsigned long count = std::strtoul(argv[3], nullptr, 10);
	const std::string tmp = dir + "/tmp", target = dir + "/target";
	char block[4096];
	std::memset(block, 0x33, sizeof(block));
	const double t0 = now_s();
	for (unsigned long i = 0; i < count; i++) {
		const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return fail("create", tmp);
		const bool ok = write_all(fd, block, sizeof(block));
		::close(fd);
		if (!ok)
			return fail("write", tmp);
		if (::rename(tmp.c_str(), target.c_str()) != 0)
			return fail("rename", tmp);
	}
	std::printf("{\"renames\": %lu, \"seconds\": %.3f}\n", count, now_s() - t0);
	return 0;
}

int cmd_flood(int argc, char **argv)
{
	if (argc != 4)
		return usage();
	const std::string sock = argv[2];
	const unsigned long count = std::strtoul(argv[3], nullptr, 10);
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	if (sock.size() >= sizeof(a.sun_path))
		return usage();
	std::memcpy(a.sun_path, sock.c_str(), sock.size());
	std::vector<int> fds;
	unsigned long refused = 0;
	for (unsigned long i = 0; i < count; i++) {
		const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return fail("socket", sock);
		if (::connect(fd, reinterpret_cast<const sockaddr *>(&a), sizeof(a)) != 0) {
			refused++;
			::close(fd);
			continue;
		}
		static constexpr std::string_view kHalf = "{\"cmd\": \"sta";
		static_cast<void>(::send(fd, kHalf.data(), kHalf.size(), MSG_NOSIGNAL));
		fds.push_back(fd);
	}
	// The server answers a connection it will not keep with one line and closes it: a read
	// that is not EAGAIN tells a closed (or answered) connection from one still held open.
	unsigned long open = 0;
	for (int fd : fds) {
		char c;
		const ssize_t r = ::recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			open++;
	}
	for (int fd : fds)
		::close(fd);
	std::printf("{\"connections\": %lu, \"connected\": %zu, \"held_open\": %lu, "
		    "\"connect_refused\": %lu}\n",
		    count, fds.size(), open, refused);
	return 0;
}

int cmd_as_uid(int argc, char **argv)
{
	if (argc < 5)
		return usage();
	const uid_t uid = static_cast<uid_t>(std::strtoul(argv[2], nullptr, 10));
	const gid_t gid = static_cast<gid_t>(std::strtoul(argv[3], nullptr, 10));
	if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)
		return fail("drop to uid", argv[2]);
	::execvp(argv[4], argv + 4);
	return fail("exec", argv[4]);
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	static const std::pair<std::string_view, int (*)(int, char **)> kCommands[] = {
		{"writers", cmd_writers},
		{"renames", cmd_renames},
		{"flood", cmd_flood},
		{"as-uid", cmd_as_uid},
	};
	for (const auto &[name, run] : kCommands)
		if (argv[1] == name)
			return run(argc, argv);
	return usage();
}
