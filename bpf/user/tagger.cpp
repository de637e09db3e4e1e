// The tagger loader: open, load in fallback tiers, attach, pin and reopen, and read out (its
// kernel probes are kernel_support.cpp's; its watched disks are tagger_disks.cpp's, its rule,
// identity and policy maps tagger_maps.cpp's).
#include "bpf/user/tagger.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "bpf/tagger.skel.h"
#include "bpf/user/devnum.hpp"
#include "bpf/user/disks.hpp"
#include "bpf/user/load_log.hpp"
#include "bpf/user/pins.hpp"
#include "bpf/user/tagger_impl.hpp"
#include "common/log.hpp"

namespace kvfdp::bpf {

namespace {

int on_ring_event(void *ctx, void *data, size_t size)
{
	auto *impl = static_cast<Tagger::Impl *>(ctx);
	if (size >= sizeof(kvfdp_event) && impl->on_event && *impl->on_event)
		(*impl->on_event)(*static_cast<const kvfdp_event *>(data));
	return 0;
}

int on_ring_record(void *ctx, void *data, size_t size)
{
	auto *impl = static_cast<Tagger::Impl *>(ctx);
	if (size >= sizeof(kvfdp_rq_record) && impl->on_record && *impl->on_record)
		(*impl->on_record)(*static_cast<const kvfdp_rq_record *>(data));
	return 0;
}

bool power_of_two(uint32_t v)
{
	return v && !(v & (v - 1));
}

// The pin file of a map ("map_tagger_bss" for "tagger.bss").
std::string map_pin_name(const bpf_map *m)
{
	std::string n = std::string("map_") + bpf_map__name(m);
	for (char &c : n)
		if (c == '.' || c == '/')
			c = '_';
	return n;
}

uint64_t build_hash()
{
	size_t sz = 0;
	const void *elf = tagger::elf_bytes(&sz);
	return object_hash(elf, sz);
}

// The meta of a set loaded with o (the sources are filled in by pin()).
PinMeta meta_for(const TaggerOptions &o, uint64_t build)
{
	PinMeta m{};
	std::memcpy(m.magic, "kvfdp-1", 8);
	m.build = build;
	m.queues = o.queues;
	m.depth = o.depth;
	m.record_ring_bytes = o.record_ring_bytes;
	m.default_class = o.default_class;
	m.all_filesystems = o.all_filesystems;
	m.allow_lsm = o.allow_lsm;
	m.allow_kprobe = o.allow_kprobe;
	m.allow_fentry = o.allow_fentry;
	return m;
}

// Whether a pinned meta was written for these options by this build (sources aside).
bool same_set(const PinMeta &a, const PinMeta &b)
{
	return std::memcmp(a.magic, b.magic, sizeof(a.magic)) == 0 && a.build == b.build &&
	       a.queues == b.queues && a.depth == b.depth &&
	       a.record_ring_bytes == b.record_ring_bytes && a.default_class == b.default_class &&
	       a.all_filesystems == b.all_filesystems && a.allow_lsm == b.allow_lsm &&
	       a.allow_kprobe == b.allow_kprobe && a.allow_fentry == b.allow_fentry;
}

void copy_str(char *dst, size_t cap, const std::string &src)
{
	const size_t n = std::min(cap - 1, src.size());
	std::memcpy(dst, src.data(), n);
	dst[n] = 0;
}

std::string str_of(const char *src, size_t cap)
{
	return std::string(src, strnlen(src, cap));
}

void add_note(std::string &notes, const std::string &what)
{
	if (!notes.empty())
		notes += "; ";
	notes += what;
}

// Attaches prog into *link; returns 0 or -errno.
int attach(bpf_program *prog, bpf_link **link)
{
	bpf_link *l = bpf_program__attach(prog);
	long err = libbpf_get_error(l);
	if (err) {
		*link = nullptr;
		return static_cast<int>(err);
	}
	*link = l;
	return 0;
}

// What load() refuses before anything is opened.
Result<void> check_options(const TaggerOptions &o)
{
	if (o.queues == 0 || o.depth == 0 ||
	    static_cast<uint64_t>(o.queues) * o.depth > KVFDP_MAX_SLOTS)
		return make_error(std::errc::invalid_argument,
				  "tagger: queues * depth must be 1.." +
					  std::to_string(KVFDP_MAX_SLOTS));
	if (o.default_class >= KVFDP_NR_CLASSES)
		return make_error(std::errc::invalid_argument,
				  "tagger: default class must be 0..5");
	if (o.record_ring_bytes &&
	    (!power_of_two(o.record_ring_bytes) || o.record_ring_bytes < 4096))
		return make_error(std::errc::invalid_argument,
				  "tagger: record ring size must be a power of two >= 4096");
	if (::geteuid() != 0)
		return guidance_error(std::errc::operation_not_permitted,
				      "loading the BPF tagger needs root (run with sudo)");
	return ok();
}

// The hooks one load tries: lsm/inode_unlink, and the fentry/fexit programs of the hint and
// create events.
struct LoadTier {
	bool lsm;
	bool fentry;
};

// The tiers, first choice first: with what the kernel seems to offer, then without lsm, then
// without fentry/fexit either (some hosts refuse lsm and fentry programs even for root).
std::vector<LoadTier> load_tiers(const TaggerOptions &o, const Features &f)
{
	const bool lsm = o.allow_lsm && f.bpf_lsm;
	const bool fentry = o.allow_fentry && (f.fexit_fcntl || f.fentry_file_open);
	std::vector<LoadTier> tiers{{lsm, fentry}};
	if (lsm)
		tiers.push_back({false, fentry});
	if (fentry)
		tiers.push_back({false, false});
	return tiers;
}

// What a refused tier turns off, for the note ("lsm/inode_unlink", "fentry/fexit", both).
std::string tier_hooks(const LoadTier &t)
{
	if (t.lsm && t.fentry)
		return "lsm/inode_unlink and fentry/fexit";
	return t.lsm ? "lsm/inode_unlink" : "fentry/fexit";
}

// Opens, configures and loads the skeleton, and attaches tp_btf/block_rq_issue: with
// lsm/inode_unlink where BPF LSM is active and with the fentry/fexit programs where their
// functions are in BTF, else without them (load_tiers). Everything else loads everywhere. A
// refused tier is noted in notes.
Result<tagger *> load_programs(const TaggerOptions &o, const Features &f, int32_t xfs_off,
			       std::string &notes)
{
	const uint32_t nslots = o.queues * o.depth;
	int last_err = 0;
	for (const LoadTier &tier : load_tiers(o, f)) {
		// libbpf's messages of this try: a refusal names the program or map, and the BTF type
		// or field a CO-RE relocation found missing (load_log.hpp).
		LibbpfCapture cap;
		tagger *skel = tagger::open();
		if (!skel)
			return refusal(cap, "tagger: open the BPF object", -errno);
		skel->rodata->nr_slots = nslots;
		skel->rodata->queue_depth = o.depth;
		skel->rodata->default_class = o.default_class;
		skel->rodata->dio_end_io = f.dio_end_io;
		skel->rodata->chain_end_io = f.chain_end_io;
		skel->rodata->all_filesystems = o.all_filesystems ? 1 : 0;
		skel->rodata->xfs_vnode_off = xfs_off > 0 ? static_cast<uint32_t>(xfs_off) : 0;
		bpf_map__set_max_entries(skel->maps.slots, nslots);
		if (o.record_ring_bytes)
			bpf_map__set_max_entries(skel->maps.requests, o.record_ring_bytes);
		bpf_program__set_autoload(skel->progs.kvfdp_lsm_unlink, tier.lsm);
		bpf_program__set_autoload(skel->progs.kvfdp_fcntl_fexit,
					  tier.fentry && f.fexit_fcntl);
		bpf_program__set_autoload(skel->progs.kvfdp_file_open,
					  tier.fentry && f.fentry_file_open);
		bpf_program__set_autoload(skel->progs.kvfdp_kprobe_unlink, o.allow_kprobe);
		bpf_program__set_autoload(skel->progs.kvfdp_kprobe_rename, o.allow_kprobe);
		int err = tagger::load(skel);
		if (err) {
			last_err = err;
			tagger::destroy(skel);
			if (tier.lsm || tier.fentry) {
				const std::string prog = parse_libbpf_output(cap.text()).program;
				add_note(notes,
					 tier_hooks(tier) + " refused at load (" +
						 (prog.empty() ? "" : "program " + prog + ": ") +
						 std::strerror(-err) + ")");
				continue;
			}
			return refusal(cap, "tagger: load the BPF programs", err);
		}
		err = attach(skel->progs.kvfdp_rq_issue, &skel->links.kvfdp_rq_issue);
		if (err) {
			tagger::destroy(skel);
			return refusal(cap, "tagger: attach tp_btf/block_rq_issue", err);
		}
		return skel;
	}
	return errno_error(last_err, "tagger: load the BPF programs");
}

// Unlink: lsm, else kprobe, else the ext4 / xfs tracepoints. Sets src.unlink_hook.
void attach_unlink(tagger *skel, const TaggerOptions &o, int32_t xfs_off, ActiveSources &src,
		   std::string &notes)
{
	if (bpf_program__autoload(skel->progs.kvfdp_lsm_unlink)) {
		int err = attach(skel->progs.kvfdp_lsm_unlink, &skel->links.kvfdp_lsm_unlink);
		if (err == 0)
			src.unlink_hook = "lsm/inode_unlink";
		else
			add_note(notes, std::string("lsm/inode_unlink refused at attach (") +
						std::strerror(-err) + ")");
	}
	if (src.unlink_hook.empty() && o.allow_kprobe) {
		int err = attach(skel->progs.kvfdp_kprobe_unlink, &skel->links.kvfdp_kprobe_unlink);
		if (err == 0)
			src.unlink_hook = "kprobe/vfs_unlink";
		else
			add_note(notes, std::string("kprobe/vfs_unlink refused at attach (") +
						std::strerror(-err) + ")");
	}
	if (src.unlink_hook.empty()) {
		if (attach(skel->progs.kvfdp_ext4_unlink, &skel->links.kvfdp_ext4_unlink) == 0)
			src.unlink_hook = "raw_tp/ext4_unlink_enter";
		if (xfs_off > 0 &&
		    attach(skel->progs.kvfdp_xfs_iunlink, &skel->links.kvfdp_xfs_iunlink) == 0)
			src.unlink_hook += std::string(src.unlink_hook.empty() ? "" : "+") +
					   "raw_tp/xfs_iunlink";
		else
			add_note(notes,
				 "xfs unlinks unseen (xfs not loaded or no BTF for xfs_inode)");
	}
	if (src.unlink_hook.empty())
		add_note(notes, "no unlink hook: unlink events are off");
	// A rename onto an existing file drops its link: seen only through the kprobe (the lsm
	// hook cannot tell RENAME_EXCHANGE, which replaces nothing).
	if (o.allow_kprobe) {
		int err = attach(skel->progs.kvfdp_kprobe_rename, &skel->links.kvfdp_kprobe_rename);
		if (err == 0)
			src.rename_hook = "kprobe/vfs_rename";
		else
			add_note(notes,
				 std::string("kprobe/vfs_rename refused at attach (") +
					 std::strerror(-err) +
					 "): a file replaced by a rename stays in the inode maps "
					 "until they evict it");
	}
}

// Attaches prog (an fentry/fexit program, hook its name) where it loaded; a refused attach is
// a note. Whether it is attached.
bool attach_trampoline(bpf_program *prog, bpf_link **link, const char *hook, std::string &notes)
{
	if (!bpf_program__autoload(prog))
		return false;
	const int err = attach(prog, link);
	if (err != 0)
		add_note(notes,
			 std::string(hook) + " refused at attach (" + std::strerror(-err) + ")");
	return err == 0;
}

// Whether the syscall tracepoints can stand in for a trampoline; when not, a note says which
// events are off.
bool tracepoints_usable(const Features &f, const char *events, std::string &notes)
{
	if (!f.syscall_tracepoints)
		add_note(notes, std::string("no syscall tracepoints (tracefs missing or "
					    "CONFIG_FTRACE_SYSCALLS off): ") +
					events + " are off");
	return f.syscall_tracepoints;
}

// The hook of the hint events: fexit on fcntl's syscall wrapper where it loaded and attaches,
// else the fcntl tracepoints. Only one is attached: a syscall tracepoint, attached, switches on
// syscall tracing for every task on the machine.
void attach_hint_events(tagger *skel, const Features &f, ActiveSources &src, std::string &notes)
{
	if (attach_trampoline(skel->progs.kvfdp_fcntl_fexit, &skel->links.kvfdp_fcntl_fexit,
			      "fexit/__x64_sys_fcntl", notes)) {
		src.hint_events = true;
		src.hint_hook = "fexit/__x64_sys_fcntl";
		return;
	}
	if (!tracepoints_usable(f, "hint events", notes))
		return;
	bool enter = attach(skel->progs.kvfdp_fcntl_enter, &skel->links.kvfdp_fcntl_enter) == 0;
	bool exit = attach(skel->progs.kvfdp_fcntl_exit, &skel->links.kvfdp_fcntl_exit) == 0;
	src.hint_events = enter && exit;
	if (src.hint_events)
		src.hint_hook = "tracepoint/syscalls";
	else
		add_note(notes, "fcntl tracepoints did not attach");
}

// The hook of the create events: fentry on security_file_open where it loaded and attaches,
// else the open/creat exit tracepoints, each one optional.
void attach_create_events(tagger *skel, const Features &f, ActiveSources &src, std::string &notes)
{
	if (attach_trampoline(skel->progs.kvfdp_file_open, &skel->links.kvfdp_file_open,
			      "fentry/security_file_open", notes)) {
		src.create_events = true;
		src.create_hook = "fentry/security_file_open";
		return;
	}
	if (!tracepoints_usable(f, "create events", notes))
		return;
	int creates = 0;
	creates += attach(skel->progs.kvfdp_openat_exit, &skel->links.kvfdp_openat_exit) == 0;
	creates += attach(skel->progs.kvfdp_openat2_exit, &skel->links.kvfdp_openat2_exit) == 0;
	creates += attach(skel->progs.kvfdp_open_exit, &skel->links.kvfdp_open_exit) == 0;
	creates += attach(skel->progs.kvfdp_creat_exit, &skel->links.kvfdp_creat_exit) == 0;
	src.create_events = creates > 0;
	if (src.create_events)
		src.create_hook = "tracepoint/syscalls";
	if (creates < 4)
		add_note(notes, std::to_string(4 - creates) +
					" of 4 open/creat exit tracepoints did not attach");
}

}  // namespace

std::string ActiveSources::describe() const
{
	std::string s;
	auto add = [&s](bool on, const std::string &name) {
		if (!on)
			return;
		if (!s.empty())
			s += ' ';
		s += name;
	};
	add(bio_hint, "bio-hint(" + bio_hint_field + ")");
	add(page_inode, "page-inode");
	add(dio_inode, "dio-inode");
	add(hint_events, "hint-events(" + hint_hook + ")");
	add(create_events, "create-events(" + create_hook + ")");
	s += s.empty() ? "" : " ";
	s += "unlink=" + (unlink_hook.empty() ? std::string("none") : unlink_hook);
	s += " rename=" + (rename_hook.empty() ? std::string("none") : rename_hook);
	return s;
}

Tagger::Tagger() : impl_(std::make_unique<Impl>()) {}
Tagger::Tagger(Tagger &&) noexcept = default;
Tagger &Tagger::operator=(Tagger &&) noexcept = default;
Tagger::~Tagger() = default;

Result<Tagger> Tagger::load(const TaggerOptions &o)
{
	KVFDP_TRY(check_options(o));
	install_libbpf_print();
	const uint64_t build = build_hash();
	// A pinned set of this build and these options is re-opened as it is (no probes, no
	// load: a restart costs a few bpf(2) calls); another is replaced.
	if (!o.pin_dir.empty() && ::access(o.pin_dir.c_str(), F_OK) == 0) {
		Tagger r;
		auto re = r.reopen(o, build);
		if (re && (re = r.map_and_rings(o))) {
			log::debug(log::kCatBpf, "tagger: re-opened the pinned set at %s: %s",
				   o.pin_dir.c_str(), r.sources_.describe().c_str());
			return r;
		}
		log::info("tagger: replacing the pinned set at %s (%s)", o.pin_dir.c_str(),
			  re.error().message().c_str());
		r = Tagger();  // drop its fds before the pins go
		if (auto rm = remove_pin_dir(o.pin_dir); !rm)
			return std::move(rm).error();
	}
	Tagger t;
	t.features_ = probe_features();
	const Features &f = t.features_;
	std::string notes = f.notes;
	const int32_t xfs_off = xfs_vnode_offset();
	auto skel = load_programs(o, f, xfs_off, notes);
	if (!skel)
		return std::move(skel).error();
	t.impl_->skel = *skel;
	attach_unlink(*skel, o, xfs_off, t.sources_, notes);
	attach_hint_events(*skel, f, t.sources_, notes);
	attach_create_events(*skel, f, t.sources_, notes);
	// Whether a write-hint field exists is decided by CO-RE at load; BTF is asked the same.
	t.sources_.bio_hint_field = write_hint_field();
	t.sources_.bio_hint = !t.sources_.bio_hint_field.empty();
	t.sources_.dio_inode = f.dio_end_io != 0;
	t.sources_.notes = notes;

	KVFDP_TRY(t.map_and_rings(o));
	if (!o.pin_dir.empty()) {
		if (auto p = t.pin(o, build); !p) {
			add_note(t.sources_.notes, "not pinned (" + p.error().message() +
							   "): a crash detaches the programs");
			log::warn("tagger: %s", p.error().message().c_str());
			(void)remove_pin_dir(o.pin_dir);
		}
	}
	log::debug(log::kCatBpf, "tagger: sources: %s", t.sources_.describe().c_str());
	return t;
}

Result<void> Tagger::map_and_rings(const TaggerOptions &o)
{
	const uint32_t nslots = o.queues * o.depth;
	// The slot array, mapped read-only.
	long page = ::sysconf(_SC_PAGESIZE);
	size_t len = static_cast<size_t>(nslots) * sizeof(kvfdp_tag_slot);
	len = (len + page - 1) / page * page;
	void *m = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, bpf_map__fd(impl_->skel->maps.slots),
			 0);
	if (m == MAP_FAILED)
		return errno_error(errno, "tagger: mmap the tag-slot array");
	impl_->slots_map = m;
	impl_->slots_len = len;
	reader_ = std::make_unique<SlotReader>(static_cast<const volatile kvfdp_tag_slot *>(m),
					       o.queues, o.depth);

	impl_->rb = ring_buffer__new(bpf_map__fd(impl_->skel->maps.events), on_ring_event,
				     impl_.get(), nullptr);
	if (!impl_->rb)
		return errno_error(errno, "tagger: open the events ring buffer");
	if (o.record_ring_bytes &&
	    ring_buffer__add(impl_->rb, bpf_map__fd(impl_->skel->maps.requests), on_ring_record,
			     impl_.get()) != 0)
		return errno_error(errno, "tagger: open the requests ring buffer");
	impl_->ncpus = libbpf_num_possible_cpus();
	if (impl_->ncpus < 1)
		impl_->ncpus = 1;
	return ok();
}

Result<void> Tagger::reopen(const TaggerOptions &o, uint64_t build)
{
	auto meta = read_meta(o.pin_dir);
	if (!meta)
		return std::move(meta).error();
	if (!same_set(*meta, meta_for(o, build)))
		return make_error(std::errc::invalid_argument,
				  "it comes from another kvfdpd build or other tagger options");
	const int link = open_pinned(o.pin_dir + "/link_kvfdp_rq_issue");
	if (link < 0)
		return make_error(std::errc::no_such_file_or_directory,
				  "its block_rq_issue link is missing");
	bpf_link_info li{};
	uint32_t li_len = sizeof(li);
	if (bpf_obj_get_info_by_fd(link, &li, &li_len) == 0)
		impl_->reopened_issue_prog = bpf_prog_get_fd_by_id(li.prog_id);
	::close(link);
	tagger *skel = tagger::open();
	if (!skel)
		return errno_error(errno, "tagger: open the BPF object");
	impl_->skel = skel;
	bpf_map *m = nullptr;
	bpf_object__for_each_map(m, skel->obj)
	{
		const std::string path = o.pin_dir + "/" + map_pin_name(m);
		const int fd = open_pinned(path);
		if (fd < 0)
			return errno_error(-fd, path);
		const int err = bpf_map__reuse_fd(m, fd);
		::close(fd);
		if (err)
			return errno_error(-err, "reuse " + path);
	}
	// Not loaded: the maps' fds are the pinned ones; .bss (written by watch_disk) is mapped
	// where the skeleton points, as a load would.
	if (skel->bss) {
		const size_t sz = bpf_map__value_size(skel->maps.bss);
		const long page = ::sysconf(_SC_PAGESIZE);
		const size_t len = (sz + page - 1) / page * page;
		if (::mmap(skel->bss, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			   bpf_map__fd(skel->maps.bss), 0) == MAP_FAILED)
			return errno_error(errno, "tagger: mmap the pinned .bss");
	}
	sources_.bio_hint = meta->bio_hint;
	sources_.bio_hint_field = str_of(meta->bio_hint_field, sizeof(meta->bio_hint_field));
	sources_.page_inode = true;
	sources_.dio_inode = meta->dio_inode;
	sources_.hint_events = meta->hint_events;
	sources_.create_events = meta->create_events;
	sources_.hint_hook = str_of(meta->hint_hook, sizeof(meta->hint_hook));
	sources_.create_hook = str_of(meta->create_hook, sizeof(meta->create_hook));
	sources_.unlink_hook = str_of(meta->unlink_hook, sizeof(meta->unlink_hook));
	sources_.rename_hook = str_of(meta->rename_hook, sizeof(meta->rename_hook));
	sources_.notes = str_of(meta->notes, sizeof(meta->notes));
	impl_->pinned_at = o.pin_dir;
	impl_->reopened = true;
	return ok();
}

Result<void> Tagger::pin(const TaggerOptions &o, uint64_t build)
{
	const std::string &dir = o.pin_dir;
	KVFDP_TRY(make_pin_dir(dir));
	bpf_map *m = nullptr;
	bpf_object__for_each_map(m, impl_->skel->obj)
		KVFDP_TRY(pin_fd(bpf_map__fd(m), dir + "/" + map_pin_name(m)));
	for (size_t i = 0; i < Impl::kLinks; i++)
		if (bpf_link *l = impl_->links()[i])
			KVFDP_TRY(pin_fd(bpf_link__fd(l),
					 dir + "/link_" + bpf_program__name(impl_->progs()[i])));
	PinMeta meta = meta_for(o, build);
	meta.bio_hint = sources_.bio_hint;
	copy_str(meta.bio_hint_field, sizeof(meta.bio_hint_field), sources_.bio_hint_field);
	meta.dio_inode = sources_.dio_inode;
	meta.hint_events = sources_.hint_events;
	meta.create_events = sources_.create_events;
	copy_str(meta.hint_hook, sizeof(meta.hint_hook), sources_.hint_hook);
	copy_str(meta.create_hook, sizeof(meta.create_hook), sources_.create_hook);
	copy_str(meta.unlink_hook, sizeof(meta.unlink_hook), sources_.unlink_hook);
	copy_str(meta.rename_hook, sizeof(meta.rename_hook), sources_.rename_hook);
	copy_str(meta.notes, sizeof(meta.notes), sources_.notes);
	KVFDP_TRY(pin_meta(dir, meta));  // last: a set without meta is incomplete
	impl_->pinned_at = dir;
	return ok();
}

const std::string &Tagger::pinned_at() const
{
	return impl_->pinned_at;
}
bool Tagger::reopened() const
{
	return impl_->reopened;
}

Result<void> Tagger::unpin()
{
	if (impl_->pinned_at.empty())
		return ok();
	const std::string dir = impl_->pinned_at;
	impl_->pinned_at.clear();
	return remove_pin_dir(dir);
}

TaggerStats Tagger::stats() const
{
	TaggerStats out{};
	std::vector<uint64_t> v(impl_->ncpus);
	for (uint32_t i = 0; i < KVFDP_NR_STATS; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.stats), &i, v.data()) != 0)
			continue;
		for (uint64_t x : v)
			out[i] += x;
	}
	return out;
}

uint64_t Tagger::missed_runs() const
{
	int fd = impl_->reopened_issue_prog;
	if (fd < 0 && impl_->skel)
		fd = bpf_program__fd(impl_->skel->progs.kvfdp_rq_issue);
	bpf_prog_info info{};
	uint32_t len = sizeof(info);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
		return 0;
	return info.recursion_misses;
}

uint64_t Tagger::inode_bytes(uint32_t dev, uint64_t ino) const
{
	kvfdp_inode_key k{dev, 0, ino};
	uint64_t v = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.inode_bytes), &k, &v) != 0)
		return 0;
	return v;
}

int Tagger::poll(int timeout_ms, const EventCallback &on_event, const RecordCallback &on_record)
{
	impl_->on_event = &on_event;
	impl_->on_record = &on_record;
	int n = ring_buffer__poll(impl_->rb, timeout_ms);
	impl_->on_event = nullptr;
	impl_->on_record = nullptr;
	return n;
}

int Tagger::drain(const EventCallback &on_event, const RecordCallback &on_record)
{
	impl_->on_event = &on_event;
	impl_->on_record = &on_record;
	int n = ring_buffer__consume(impl_->rb);
	impl_->on_event = nullptr;
	impl_->on_record = nullptr;
	return n;
}

int Tagger::event_fd() const
{
	return ring_buffer__epoll_fd(impl_->rb);
}

}  // namespace kvfdp::bpf
