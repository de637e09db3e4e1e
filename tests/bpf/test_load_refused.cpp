// A load the running kernel refuses, read back through load_log.hpp (root, BTF): broken_core's
// program reads a field no kernel's struct bio has, so the error is one line naming the
// program and the field, with libbpf's CO-RE message; a map the kernel will not create is
// named too. The parsing alone is test_bpf_load_log (unit).
#include <doctest/doctest.h>

#include <string>

#include "bpf/broken_core.skel.h"
#include "bpf/user/load_log.hpp"
#include "tests/support/skip.hpp"

using namespace kvfdp::bpf;

static const kvfdp::test::Requires need_root("root",
					     kvfdp::test::probe_root("loading BPF programs"));
static const kvfdp::test::Requires need_btf("btf", kvfdp::test::probe_btf());

TEST_CASE(
	"bpf load refused: a CO-RE read of a field the kernel lacks names the program and the field")
{
	broken_core *skel = broken_core::open();
	REQUIRE(skel != nullptr);
	auto r = load_object(skel->obj, "broken_core: load");
	REQUIRE_FALSE(r);
	const std::string msg = r.error().message();
	INFO(msg);
	CHECK(msg.find('\n') == std::string::npos);
	CHECK(msg.rfind(
		      "broken_core: load: Invalid argument: program kvfdp_broken_rq_issue: this kernel's BTF has no "
		      "struct bio.no_such_field (CO-RE relocation byte_off); libbpf: ",
		      0) == 0);
	CHECK(msg.find("failed to resolve CO-RE relocation <byte_off>") != std::string::npos);
	CHECK(msg.find("struct bio___kvfdp_missing.no_such_field") !=
	      std::string::npos);  // libbpf's own words
	broken_core::destroy(skel);

	// The verifier log is captured too (load_object writes it to the log).
	skel = broken_core::open();
	REQUIRE(skel != nullptr);
	LoadFailure f;
	{
		LibbpfCapture cap;
		REQUIRE(bpf_object__load(skel->obj) != 0);
		f = parse_libbpf_output(cap.text());
	}
	broken_core::destroy(skel);
	CHECK(f.program == "kvfdp_broken_rq_issue");
	CHECK(f.missing == "struct bio.no_such_field");
	CHECK(f.verifier_log.find("<invalid CO-RE relocation>") != std::string::npos);
}

TEST_CASE("bpf load refused: a map the kernel will not create is named")
{
	broken_core *skel = broken_core::open();
	REQUIRE(skel != nullptr);
	REQUIRE(bpf_map__set_max_entries(skel->maps.counts, 0) ==
		0);  // an array of no entries: EINVAL
	auto r = load_object(skel->obj, "broken_core: load");
	broken_core::destroy(skel);
	REQUIRE_FALSE(r);
	const std::string msg = r.error().message();
	INFO(msg);
	CHECK(msg.find('\n') == std::string::npos);
	CHECK(msg.rfind("broken_core: load: Invalid argument: map counts; libbpf: ", 0) == 0);
	CHECK(msg.find("map 'counts': failed to create: Invalid argument(-22)") !=
	      std::string::npos);
}
