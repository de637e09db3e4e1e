// Kernel feature probes and the pseudo-filesystem mounts the tagger needs.
#include "bpf/user/features.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace kvfdp::bpf {
namespace {

constexpr long kBpfFsMagic = 0xcafe4a11;

bool is_bpffs(const char *path)
{
	struct statfs sfs {};
	return ::statfs(path, &sfs) == 0 && static_cast<long>(sfs.f_type) == kBpfFsMagic;
}

void note(Features &f, const std::string &what)
{
	if (!f.notes.empty())
		f.notes += "; ";
	f.notes += what;
}

bool try_mount(const char *fstype, const char *target)
{
	return ::mount(fstype, target, fstype, 0, nullptr) == 0 || errno == EBUSY;
}

// The addresses of iomap_dio_bio_end_io and bio_chain_endio (0 when hidden), in one pass.
void kallsyms_end_ios(Features &f)
{
	std::ifstream in("/proc/kallsyms");
	std::string line;
	while (std::getline(in, line) && !(f.dio_end_io && f.chain_end_io)) {
		std::istringstream ls(line);
		std::string addr, type, sym;
		if (!(ls >> addr >> type >> sym))
			continue;
		if (sym == "iomap_dio_bio_end_io")
			f.dio_end_io = std::strtoull(addr.c_str(), nullptr, 16);
		else if (sym == "bio_chain_endio")
			f.chain_end_io = std::strtoull(addr.c_str(), nullptr, 16);
	}
}

} // namespace

Features probe_features()
{
	Features f;
	f.bpffs = is_bpffs("/sys/fs/bpf") ||
		  (try_mount("bpf", "/sys/fs/bpf") && is_bpffs("/sys/fs/bpf"));
	if (!f.bpffs)
		note(f, std::string("bpffs not mounted at /sys/fs/bpf (") + std::strerror(errno) + ")");

	const char *syscalls = "/sys/kernel/tracing/events/syscalls";
	if (::access(syscalls, F_OK) != 0)
		try_mount("tracefs", "/sys/kernel/tracing");
	f.syscall_tracepoints = ::access(syscalls, F_OK) == 0;
	if (!f.syscall_tracepoints)
		note(f, "no syscall tracepoints (tracefs missing or CONFIG_FTRACE_SYSCALLS off): "
			"hint and create events are off");

	if (::access("/sys/kernel/security/lsm", F_OK) != 0)
		try_mount("securityfs", "/sys/kernel/security");
	std::ifstream lsm("/sys/kernel/security/lsm");
	std::string list;
	std::getline(lsm, list);
	f.bpf_lsm = ("," + list + ",").find(",bpf,") != std::string::npos;
	if (!f.bpf_lsm)
		note(f, "BPF LSM not active (lsm=" + list + ")");

	kallsyms_end_ios(f);
	if (!f.dio_end_io)
		note(f, "iomap_dio_bio_end_io not in /proc/kallsyms: O_DIRECT bytes are not "
			"attributed to inodes");
	else if (!f.chain_end_io)
		note(f, "bio_chain_endio not in /proc/kallsyms: O_DIRECT bios the block layer "
			"split are attributed only by their last part");
	return f;
}

} // namespace kvfdp::bpf
