/* insn_count: a QEMU TCG plugin that counts the guest's executed instructions per vCPU, split into
 * kernel and user mode, and records the counts at markers the guest executes (docs/vm.md, *Counting
 * guest instructions*).
 *
 * Counting: one inline per-vCPU scoreboard add per executed instruction (no helper call). The
 * kernel/user split is by the instruction's virtual address: on x86-64 the kernel's code lives in
 * the upper half (vaddr >= 0xffff800000000000), user code in the lower half. The plugin API of
 * QEMU 10.0 does not expose the privilege level, and an address split is exact for code addresses
 * (the vDSO is user code in the lower half).
 *
 * Markers: the 8-byte no-op `nopl 0x4b5646XX(%rax,%rax,1)` (0f 1f 84 00 XX 46 56 4b: "FVK" in its
 * displacement) with XX = 01 (begin) or 02 (end). It changes nothing in the guest; compilers never
 * emit that displacement. tools/qemu-plugin/insn_mark.c issues it. When a vCPU executes one, the
 * plugin appends a line with every vCPU's counts so far to the output file, flushed at once, so the
 * marks that arrived are on disk whatever happens to the guest afterwards:
 *
 *   mark SEQ begin|end VCPU kernel=K user=U k0=.. u0=.. k1=.. u1=..
 *
 * K and U are the sums over the vCPUs. At exit a line `exit vcpus=N kernel=K user=U` follows.
 *
 * Profile (profile=PREFIX): while a begin/end bracket is open, every executed translation block adds
 * its instruction count to the block's start address (a conditional callback, off outside brackets);
 * at each end mark the cumulative counts so far go to PREFIX-SEQ.txt as `VADDR INSNS` lines, so one
 * bracket's profile is the difference of two files. A block cut short (an exception mid-block) counts
 * whole: the profile is approximate where the marks' counts are exact. tools/bench/insn-profile.py
 * names the addresses with the guest's /proc/kallsyms.
 *
 * Arguments: out=FILE (default stderr), profile=PREFIX (default off).
 */
#include <qemu-plugin.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_BASE 0xffff800000000000ULL

/* one scoreboard entry per vCPU */
typedef struct {
	uint64_t kernel;
	uint64_t user;
} Counts;

static struct qemu_plugin_scoreboard *board;
static qemu_plugin_u64 kernel_count;
static qemu_plugin_u64 user_count;
static FILE *out;
static uint64_t mark_seq;

/* the profile: one record per translation (a block translated again gets another), kept in a list */
typedef struct TbProf {
	uint64_t vaddr;
	uint64_t n_insns;
	uint64_t execs;
	struct TbProf *next;
} TbProf;
static const char *profile_prefix;
static struct qemu_plugin_scoreboard *armed_board; /* per vCPU: 1 inside a bracket */
static qemu_plugin_u64 armed;
static TbProf *tb_profs;
static GMutex tb_profs_lock;

static const unsigned char MARK_HEAD[4] = {0x0f, 0x1f, 0x84, 0x00};
static const unsigned char MARK_TAIL[3] = {0x46, 0x56, 0x4b};
enum { MARK_BEGIN = 1, MARK_END = 2 };

static void write_counts(const char *head)
{
	int n = qemu_plugin_num_vcpus();
	char line[1024];
	uint64_t k = qemu_plugin_u64_sum(kernel_count);
	uint64_t u = qemu_plugin_u64_sum(user_count);
	int len = snprintf(line, sizeof line, "%s kernel=%" PRIu64 " user=%" PRIu64, head, k, u);
	for (int i = 0; i < n && len > 0 && (size_t)len < sizeof line; i++) {
		len += snprintf(line + len, sizeof line - (size_t)len,
				" k%d=%" PRIu64 " u%d=%" PRIu64, i,
				qemu_plugin_u64_get(kernel_count, (unsigned)i), i,
				qemu_plugin_u64_get(user_count, (unsigned)i));
	}
	fprintf(out, "%s\n", line);
	fflush(out);
}

/* PREFIX-SEQ.txt: the cumulative instructions per block start address */
static void write_profile(uint64_t seq)
{
	char path[4096];
	snprintf(path, sizeof path, "%s-%" PRIu64 ".txt", profile_prefix, seq);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "insn_count: cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	g_mutex_lock(&tb_profs_lock);
	for (const TbProf *p = tb_profs; p; p = p->next) {
		uint64_t n = __atomic_load_n(&p->execs, __ATOMIC_RELAXED);
		if (n)
			fprintf(f, "%" PRIx64 " %" PRIu64 "\n", p->vaddr, n * p->n_insns);
	}
	g_mutex_unlock(&tb_profs_lock);
	fclose(f);
}

static void set_armed(uint64_t v)
{
	for (int i = 0; i < qemu_plugin_num_vcpus(); i++)
		qemu_plugin_u64_set(armed, (unsigned)i, v);
}

/* Runs on the vCPU that executed a marker; the marks of both vCPUs are serialised by the file. */
static void on_mark(unsigned int vcpu, void *udata)
{
	uintptr_t op = (uintptr_t)udata;
	char head[96];
	flockfile(out);
	uint64_t seq = ++mark_seq;
	snprintf(head, sizeof head, "mark %" PRIu64 " %s %u", seq,
		 op == MARK_BEGIN ? "begin" : "end", vcpu);
	write_counts(head);
	funlockfile(out);
	if (profile_prefix) {
		set_armed(op == MARK_BEGIN);
		if (op == MARK_END)
			write_profile(seq);
	}
}

static void on_tb_exec(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	__atomic_fetch_add(&((TbProf *)udata)->execs, 1, __ATOMIC_RELAXED);
}

static uintptr_t marker_of(const struct qemu_plugin_insn *insn)
{
	unsigned char b[8];
	if (qemu_plugin_insn_size(insn) != sizeof b ||
	    qemu_plugin_insn_data(insn, b, sizeof b) != sizeof b) {
		return 0;
	}
	if (memcmp(b, MARK_HEAD, sizeof MARK_HEAD) != 0 ||
	    memcmp(b + 5, MARK_TAIL, sizeof MARK_TAIL) != 0) {
		return 0;
	}
	return (b[4] == MARK_BEGIN || b[4] == MARK_END) ? b[4] : 0;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	if (profile_prefix) {
		TbProf *p = g_new0(TbProf, 1);
		p->vaddr = qemu_plugin_tb_vaddr(tb);
		p->n_insns = n;
		g_mutex_lock(&tb_profs_lock);
		p->next = tb_profs;
		tb_profs = p;
		g_mutex_unlock(&tb_profs_lock);
		qemu_plugin_register_vcpu_tb_exec_cond_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS,
							  QEMU_PLUGIN_COND_EQ, armed, 1, p);
	}
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		qemu_plugin_u64 entry =
			qemu_plugin_insn_vaddr(insn) >= KERNEL_BASE ? kernel_count : user_count;
		qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
			insn, QEMU_PLUGIN_INLINE_ADD_U64, entry, 1);
		uintptr_t op = marker_of(insn);
		if (op) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark,
							       QEMU_PLUGIN_CB_NO_REGS, (void *)op);
		}
	}
}

static void on_plugin_exit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	char head[64];
	snprintf(head, sizeof head, "exit vcpus=%d", qemu_plugin_num_vcpus());
	flockfile(out);
	write_counts(head);
	funlockfile(out);
	if (out != stderr) {
		fclose(out);
	}
	qemu_plugin_scoreboard_free(board);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv)
{
	if (!info->system_emulation || strcmp(info->target_name, "x86_64") != 0) {
		fprintf(stderr,
			"insn_count: needs qemu-system-x86_64 (the kernel/user split is x86-64's), not %s%s\n",
			info->target_name, info->system_emulation ? "" : " user mode");
		return -1;
	}
	out = stderr;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0) {
			out = fopen(argv[i] + 4, "w");
			if (!out) {
				fprintf(stderr, "insn_count: cannot write %s: %s\n", argv[i] + 4,
					strerror(errno));
				return -1;
			}
		} else if (strncmp(argv[i], "profile=", 8) == 0 && argv[i][8]) {
			profile_prefix = argv[i] + 8;
		} else {
			fprintf(stderr,
				"insn_count: unknown argument '%s' (it takes out=FILE, profile=PREFIX)\n",
				argv[i]);
			return -1;
		}
	}
	board = qemu_plugin_scoreboard_new(sizeof(Counts));
	kernel_count = (qemu_plugin_u64){board, offsetof(Counts, kernel)};
	user_count = (qemu_plugin_u64){board, offsetof(Counts, user)};
	if (profile_prefix) {
		armed_board = qemu_plugin_scoreboard_new(sizeof(uint64_t));
		armed = (qemu_plugin_u64){armed_board, 0};
	}
	fprintf(out, "start insn_count kernel_base=0x%llx\n", KERNEL_BASE);
	fflush(out);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
	return 0;
}
