// bpf/user/load_log.hpp without a kernel: libbpf's messages of a refused load read back into
// the program, map and missing BTF type or field, the one-line error, and the capture's bound.
// The same against the running kernel is test_bpf_load_refused (root, BTF).
#include <doctest/doctest.h>

#include <bpf/libbpf.h>
#include <cstdarg>
#include <string>

#include "bpf/user/load_log.hpp"

using namespace kvfdp::bpf;

namespace {

// What libbpf 1.1.2 prints when the verifier refuses tagger.bpf.c on 7.3 (the format strings
// of libbpf.c's bpf_object_load_prog and fixup_log_failed_core_relo; the log is cut short).
const char *kRefusedOn73 =
	"libbpf: prog 'kvfdp_rq_issue': BPF program load failed: Invalid argument\n"
	"libbpf: prog 'kvfdp_rq_issue': -- BEGIN PROG LOAD LOG --\n"
	"0: R1=ctx(off=0,imm=0) R10=fp0\n"
	"; int BPF_PROG(kvfdp_rq_issue, struct request *rq)\n"
	"0: (79) r6 = *(u64 *)(r1 +0)\n"
	"227: <invalid CO-RE relocation>\n"
	"failed to resolve CO-RE relocation <byte_off> [310] struct bio.bi_iter.bi_bvec_done (0:9:3 @ offset 44)\n"
	"processed 262 insns (limit 1000000) max_states_per_insn 0 total_states 18 peak_states 18 mark_read 8\n"
	"-- END PROG LOAD LOG --\n"
	"libbpf: prog 'kvfdp_rq_issue': failed to load: -22\n"
	"libbpf: failed to load object 'tagger_bpf'\n"
	"libbpf: failed to load BPF skeleton 'tagger_bpf': -22\n";

// Calls the installed libbpf print callback as libbpf would.
void print_as_libbpf(const char *fmt, ...)
{
	const libbpf_print_fn_t fn = libbpf_set_print(nullptr);
	libbpf_set_print(fn);
	REQUIRE((fn != nullptr));
	va_list ap;
	va_start(ap, fmt);
	fn(LIBBPF_WARN, fmt, ap);
	va_end(ap);
}

}  // namespace

TEST_CASE(
	"load_log: a CO-RE relocation failure names the kernel's type and field, ___flavour dropped")
{
	std::string kind;
	CHECK(core_missing(
		      "failed to resolve CO-RE relocation <byte_off> [310] struct bio.bi_iter.bi_bvec_done "
		      "(0:9:3 @ offset 44)",
		      &kind) == "struct bio.bi_iter.bi_bvec_done");
	CHECK(kind == "byte_off");
	CHECK(core_missing(
		      "failed to resolve CO-RE relocation <byte_off> [12] struct bio___kvfdp_missing.no_such_field "
		      "(0:0 @ offset 0)") == "struct bio.no_such_field");
	CHECK(core_missing(
		      "failed to resolve CO-RE relocation <type_exists> [7] struct bvec_iter___v73",
		      &kind) == "struct bvec_iter");
	CHECK(kind == "type_exists");
	CHECK(core_missing(
		      "failed to resolve CO-RE relocation <enumval_value> [9] enum rw_hint___x::WRITE_LIFE_SHORT = 2") ==
	      "enum rw_hint::WRITE_LIFE_SHORT");
	// An array step and a spec cut at libbpf's 256-byte buffer ("...").
	CHECK(core_missing(
		      "failed to resolve CO-RE relocation <byte_off> [5] struct bio.bi_io_vec[0].bv_pa...") ==
	      "struct bio.bi_io_vec[0].bv_pa");
	CHECK(core_missing("prog 'x': BPF program load failed: Invalid argument").empty());
	CHECK(core_missing("failed to resolve CO-RE relocation garbage").empty());
}

TEST_CASE(
	"load_log: 7.3's refusal of the tagger reads back as the program, the field and libbpf's lines")
{
	const LoadFailure f = parse_libbpf_output(kRefusedOn73);
	CHECK(f.program == "kvfdp_rq_issue");
	CHECK(f.map.empty());
	CHECK(f.missing == "struct bio.bi_iter.bi_bvec_done");
	CHECK(f.relocation == "byte_off");
	REQUIRE(f.lines.size() == 2);
	CHECK(f.lines[0] == "prog 'kvfdp_rq_issue': BPF program load failed: Invalid argument");
	CHECK(f.lines[1].rfind(
		      "failed to resolve CO-RE relocation <byte_off> [310] struct bio.bi_iter.bi_bvec_done",
		      0) == 0);
	// The verifier log, without libbpf's markers, whole.
	CHECK(f.verifier_log.rfind("0: R1=ctx(off=0,imm=0) R10=fp0\n", 0) == 0);
	CHECK(f.verifier_log.find("processed 262 insns") != std::string::npos);
	CHECK(f.verifier_log.find("END PROG LOAD LOG") == std::string::npos);

	const std::string line = describe_failure("tagger: load the BPF programs", f, -22);
	CHECK(line.find('\n') == std::string::npos);
	CHECK(line.rfind(
		      "tagger: load the BPF programs: Invalid argument: program kvfdp_rq_issue: this kernel's BTF has "
		      "no struct bio.bi_iter.bi_bvec_done (CO-RE relocation byte_off); libbpf: prog 'kvfdp_rq_issue': ",
		      0) == 0);
	CHECK(line.find("failed to load object") == std::string::npos);
	CHECK(line.find("failed to load BPF skeleton") == std::string::npos);
}

TEST_CASE(
	"load_log: a map the kernel refuses is named, libbpf's optional BPF token step is not; no message still gives the errno")
{
	const LoadFailure f = parse_libbpf_output(
		"libbpf: failed (-95) to create BPF token from '/sys/fs/bpf', skipping optional step...\n"
		"libbpf: map 'counts': failed to create: Invalid argument(-22)\n"
		"libbpf: failed to load object 'broken_core'\n");
	CHECK(f.map == "counts");
	CHECK(f.program.empty());
	CHECK(f.missing.empty());
	CHECK(describe_failure("x", f, -22) ==
	      "x: Invalid argument: map counts; libbpf: map 'counts': failed to create: Invalid argument(-22)");
	CHECK(describe_failure("tagger: load the BPF programs", parse_libbpf_output(""), -1) ==
	      "tagger: load the BPF programs: Operation not permitted");
	// At most kMaxLines lines, each cut to a readable length.
	std::string many;
	for (int i = 0; i < 20; i++)
		many += "libbpf: prog 'p': relo #" + std::to_string(i) + ": " +
			std::string(400, 'x') + "\n";
	const LoadFailure m = parse_libbpf_output(many);
	CHECK(m.lines.size() == LoadFailure::kMaxLines);
	CHECK(m.lines[0].size() < 310);
	CHECK(m.program == "p");
}

TEST_CASE(
	"load_log: the capture holds what libbpf prints, within its bound; a new capture starts empty")
{
	{
		LibbpfCapture cap;
		// A garbage object: libbpf warns while opening it (no kernel involved).
		static const char garbage[64] = "not an ELF file";
		bpf_object *obj = bpf_object__open_mem(garbage, sizeof(garbage), nullptr);
		CHECK(libbpf_get_error(obj) != 0);
		CHECK(cap.text().find("libbpf: ") != std::string::npos);
		CHECK(cap.dropped() == 0);
		print_as_libbpf("libbpf: prog '%s': BPF program load failed: %s\n", "p",
				"Invalid argument");
		CHECK(parse_libbpf_output(cap.text()).program == "p");
	}
	{
		LibbpfCapture cap;
		CHECK(cap.text().empty());  // a new capture starts empty
		// A verifier log bigger than the bound keeps its first line and its end.
		const std::string big =
			std::string(LibbpfCapture::kMaxBytes * 2, 'v') + "\nthe error at the end\n";
		print_as_libbpf(
			"libbpf: prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n",
			"p", big.c_str());
		const std::string t = cap.text();
		CHECK(t.size() <= LibbpfCapture::kMaxBytes);
		CHECK(cap.dropped() > LibbpfCapture::kMaxBytes);
		CHECK(t.rfind("libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\n", 0) == 0);
		const LoadFailure f = parse_libbpf_output(t);
		CHECK(f.program == "p");
		CHECK(f.verifier_log.find("the error at the end") != std::string::npos);
		CHECK(f.verifier_log.find(" bytes dropped ...]") != std::string::npos);
	}
}
