// Kernel feature probes, the pseudo-filesystem mounts the tagger needs, and its BTF probes.
#include "bpf/user/kernel_support.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
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

// The bit offset of member in struct type (BTF id) of b, or -1 when it has none.
int64_t member_bit_offset(const btf *b, int id, const char *member)
{
	const btf_type *bt = btf__type_by_id(b, id);
	const btf_member *m = btf_members(bt);
	for (int i = 0; i < btf_vlen(bt); i++, m++)
		if (std::strcmp(btf__name_by_offset(b, m->name_off), member) == 0)
			return btf_member_bit_offset(bt, i);
	return -1;
}

}  // namespace

int32_t xfs_vnode_offset()
{
	btf *vmlinux = btf__load_vmlinux_btf();
	if (libbpf_get_error(vmlinux))
		return -1;
	btf *mod = nullptr;
	btf *where = vmlinux;
	int id = btf__find_by_name_kind(vmlinux, "xfs_inode", BTF_KIND_STRUCT);
	if (id < 0) {
		mod = btf__load_module_btf("xfs", vmlinux);
		if (libbpf_get_error(mod)) {
			mod = nullptr;
		} else {
			where = mod;
			id = btf__find_by_name_kind(mod, "xfs_inode", BTF_KIND_STRUCT);
		}
	}
	int32_t off = -1;
	if (id >= 0)
		if (const int64_t bits = member_bit_offset(where, id, "i_vnode"); bits >= 0)
			off = static_cast<int32_t>(bits / 8);
	if (mod)
		btf__free(mod);
	btf__free(vmlinux);
	return off;
}

namespace {

// Whether vmlinux BTF has the functions the fentry/fexit programs attach to (a function
// inlined everywhere, or compiled out, has none: CONFIG_SECURITY=n has no security_file_open).
void trampoline_targets(Features &f)
{
	btf *vmlinux = btf__load_vmlinux_btf();
	if (libbpf_get_error(vmlinux)) {
		note(f, "no vmlinux BTF: hint and create events by syscall tracepoints");
		return;
	}
	f.fexit_fcntl = btf__find_by_name_kind(vmlinux, "__x64_sys_fcntl", BTF_KIND_FUNC) > 0;
	f.fentry_file_open =
		btf__find_by_name_kind(vmlinux, "security_file_open", BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	if (!f.fexit_fcntl)
		note(f, "no __x64_sys_fcntl in BTF: hint events by syscall tracepoints");
	if (!f.fentry_file_open)
		note(f, "no security_file_open in BTF: create events by syscall tracepoints");
}

}  // namespace

std::string write_hint_field()
{
	btf *vmlinux = btf__load_vmlinux_btf();
	if (libbpf_get_error(vmlinux))
		return "";
	auto has_member = [vmlinux](const char *type, const char *member) {
		const int id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_STRUCT);
		return id >= 0 && member_bit_offset(vmlinux, id, member) >= 0;
	};
	std::string field;
	if (has_member("bio", "bi_write_hint"))
		field = "bio.bi_write_hint";
	else if (has_member("request", "write_hint"))
		field = "request.write_hint";
	btf__free(vmlinux);
	return field;
}

Features probe_features()
{
	Features f;
	f.bpffs = is_bpffs("/sys/fs/bpf") ||
		  (try_mount("bpf", "/sys/fs/bpf") && is_bpffs("/sys/fs/bpf"));
	if (!f.bpffs)
		note(f, std::string("bpffs not mounted at /sys/fs/bpf (") + std::strerror(errno) +
				")");

	const char *syscalls = "/sys/kernel/tracing/events/syscalls";
	if (::access(syscalls, F_OK) != 0)
		try_mount("tracefs", "/sys/kernel/tracing");
	f.syscall_tracepoints = ::access(syscalls, F_OK) == 0;
	trampoline_targets(f);

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

}  // namespace kvfdp::bpf
