// bench_daemon_engine: kvfdpd's user-space cost per request (IoEngine + the queue loop's
// dispatch and commit) against a null passthrough device on a loopback ring, no syscalls.
// Prints one JSON line: allocations per request in steady state and wall ns per request.
// --learned runs it with --placement learned (kvfdpd/daemon/learned.hpp): writes placed by
// (writer, class) (writer 0 here: the classes make 4 keys), every write overwriting an
// earlier one once the 1 GiB span wraps (--span BYTES wraps sooner), so each also counts the
// death of what it replaces.
// Instructions per request come from tools/bench/callgrind-per-io.sh, which runs this
// program under callgrind at two request counts.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/kvfdpd/bench_learned.hpp"
#include "tests/kvfdpd/bench_rig.hpp"
#include "model/twin/twin.hpp"

using namespace kvfdp;

namespace {

struct Options {
	uint64_t requests = 200000;
	uint32_t size = 128 * 1024;
	uint32_t max_transfer = 512 * 1024;
	uint8_t op = ublk::kOpWrite;
	bool tagged = true;
	bool zero_copy = false;
	bool learned = false;
	bool twin =
		false;  // the live WAF twin's ring (its thread not running: the push path alone)
	bool twin_drain = false;  // and then the twin's work on those records, timed apart
	uint64_t span = 0;        // bytes the requests cycle over (0: the whole namespace)
	uint64_t ns_bytes = 0;    // namespace size (0: the rig's 1 GiB)
};

int usage(const char *msg)
{
	std::fprintf(
		stderr,
		"bench_daemon_engine: %s\n"
		"usage: bench_daemon_engine [--requests N] [--size BYTES (4096-multiple, <= 524288)]\n"
		"                           [--op write|read] [--untagged] [--max-transfer BYTES]\n"
		"                           [--zero-copy] [--learned] [--span BYTES] [--namespace BYTES]\n"
		"                           [--twin] [--twin-drain]\n",
		msg);
	return 2;
}

bool parse_u64(const char *s, uint64_t &v)
{
	char *end = nullptr;
	errno = 0;
	const unsigned long long x = std::strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		return false;
	v = x;
	return true;
}

}  // namespace

int main(int argc, char **argv)
{
	Options o;
	for (int i = 1; i < argc; i++) {
		const std::string a = argv[i];
		uint64_t v = 0;
		const bool has_value = i + 1 < argc;
		if (a == "--untagged") {
			o.tagged = false;
		} else if (a == "--zero-copy") {
			o.zero_copy = true;
		} else if (a == "--learned") {
			o.learned = true;
		} else if (a == "--twin") {
			o.twin = true;
		} else if (a == "--twin-drain") {
			o.twin = o.twin_drain = true;
		} else if (a == "--op" && has_value) {
			const std::string op = argv[++i];
			if (op == "write")
				o.op = ublk::kOpWrite;
			else if (op == "read")
				o.op = ublk::kOpRead;
			else
				return usage("--op must be write or read");
		} else if ((a == "--requests" || a == "--size" || a == "--max-transfer" ||
			    a == "--span" || a == "--namespace") &&
			   has_value) {
			if (!parse_u64(argv[++i], v) || v == 0)
				return usage((a + " needs a positive integer").c_str());
			if (a == "--requests")
				o.requests = v;
			else if (a == "--span")
				o.span = v;
			else if (a == "--namespace")
				o.ns_bytes = v;
			else if (a == "--size")
				o.size = static_cast<uint32_t>(v > 0xffffffffu ? 0 : v);
			else
				o.max_transfer = static_cast<uint32_t>(v > 0xffffffffu ? 0 : v);
		} else {
			return usage(("unknown or incomplete option '" + a + "'").c_str());
		}
	}
	test::RigConfig rc;
	if (o.size == 0 || o.size % rc.lba_size || o.size > rc.io_buf_bytes)
		return usage("--size must be a multiple of 4096 up to 524288");
	if (o.max_transfer < rc.lba_size || o.max_transfer % rc.lba_size ||
	    o.max_transfer > rc.io_buf_bytes)
		return usage("--max-transfer must be a multiple of 4096 up to 524288");
	rc.max_transfer = o.max_transfer;
	if (o.ns_bytes) {
		// Learned placement's chunks grow with the namespace (capacity / 4 Mi above 16 GiB).
		if (o.ns_bytes % rc.lba_size || o.ns_bytes < rc.io_buf_bytes)
			return usage("--namespace must be a multiple of 4096 of at least 524288");
		rc.nlb = o.ns_bytes / rc.lba_size;
	}
	rc.zero_copy = o.zero_copy;
	std::unique_ptr<test::RigLearned> learned;
	if (o.learned) {
		learned = std::make_unique<test::RigLearned>(rc);
		rc.learned = learned->lp.get();
	}

	std::unique_ptr<twin::Twin> tw;
	if (o.twin) {  // a ring that holds 256 Ki records: each write is pushed, none dropped up to there
		twin::TwinOptions to;
		to.geometry = twin::TwinGeometry{rc.nlb, rc.lba_size, 1 << 20, rc.nruh, 0.07};
		to.ring_records =
			1u
			<< 18;  // the same for every --requests, so callgrind's two runs cancel it
		auto t = twin::Twin::create(to);
		if (!t)
			return usage(t.error().message().c_str());
		tw = std::move(*t);
		tw->add_rings(1);
		rc.twin = &tw->ring(0);
	}
	const uint32_t sectors = o.size >> 9;
	if (o.span && (o.span < o.size || o.span > rc.nlb * rc.lba_size))
		return usage("--span must be at least --size and at most the namespace");
	const uint64_t span = (o.span ? o.span >> 9 : rc.nlb * (rc.lba_size >> 9)) /
			      sectors;  // requests before wrapping
	auto gen = [&o, sectors, span](uint64_t i) {
		test::RigRequest r;
		r.op = o.op;
		r.sector = (i % span) * sectors;
		r.sectors = sectors;
		r.cls = o.tagged ? static_cast<uint8_t>(KVFDP_CLASS_SHORT + i % 4)
				 : static_cast<uint8_t>(KVFDP_NR_CLASSES);
		return r;
	};
	test::BenchRig<decltype(gen)> rig(rc, gen);
	// Warm-up: every tag used a few times, so lazily built state is in place.
	const uint64_t warm = 4u * rc.depth;
	if (!rig.serve(warm)) {
		std::fprintf(stderr,
			     "bench_daemon_engine: the queue loop stalled during warm-up\n");
		return 1;
	}
	if (learned)
		(void)learned->lp
			->recompute_now();  // off the data path, as the regroup thread does
	const uint64_t a0 = test::allocation_count();
	const auto t0 = std::chrono::steady_clock::now();
	const bool ok = rig.serve(o.requests);
	const auto t1 = std::chrono::steady_clock::now();
	const uint64_t allocs = test::allocation_count() - a0;
	if (!ok || rig.bad_results() || rig.lost() || rig.inflight()) {
		std::fprintf(
			stderr,
			"bench_daemon_engine: requests went wrong (stalled %d, bad results %llu, lost %llu)\n",
			!ok, static_cast<unsigned long long>(rig.bad_results()),
			static_cast<unsigned long long>(rig.lost()));
		return 1;
	}
	const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
	if (tw) {  // --twin-drain: the twin thread's work, timed apart (what the records cost it)
		const auto d0 = std::chrono::steady_clock::now();
		const uint64_t applied = o.twin_drain ? tw->drain() : 0;
		const double dns = std::chrono::duration<double, std::nano>(
					   std::chrono::steady_clock::now() - d0)
					   .count();
		const twin::TwinReport rep = tw->report();
		std::printf(
			"{\"bench\":\"daemon_engine_twin\",\"pushed\":%llu,\"records\":%llu,\"dropped\":%llu,\"twin_ns_per_record\":%.1f,"
			"\"twin_memory_bytes\":%llu,\"rate\":%.6f,\"waf_placed\":%.4f,\"waf_none\":%.4f}\n",
			static_cast<unsigned long long>(tw->ring(0).pushed()),
			static_cast<unsigned long long>(applied),
			static_cast<unsigned long long>(rep.dropped),
			applied ? dns / static_cast<double>(applied) : 0.0,
			static_cast<unsigned long long>(rep.memory_bytes), rep.rate, rep.waf_placed,
			rep.waf_none);
	}
	std::printf(
		"{\"bench\":\"daemon_engine\",\"op\":\"%s\",\"size\":%u,\"max_transfer\":%u,\"tagged\":%s,"
		"\"zero_copy\":%s,\"learned\":%s,\"depth\":%u,\"requests\":%llu,\"device_cmds_per_request\":%.3f,"
		"\"copied_bytes_per_request\":%.1f,\"allocations\":%llu,"
		"\"allocations_per_request\":%.6f,\"ns_per_request\":%.1f}\n",
		o.op == ublk::kOpWrite ? "write" : "read", o.size, o.max_transfer,
		o.tagged ? "true" : "false", o.zero_copy ? "true" : "false",
		o.learned ? "true" : "false", rc.depth, static_cast<unsigned long long>(o.requests),
		static_cast<double>(rig.device_cmds()) / static_cast<double>(rig.done()),
		static_cast<double>(rig.counters().copied_bytes.get()) /
			static_cast<double>(rig.done()),
		static_cast<unsigned long long>(allocs),
		static_cast<double>(allocs) / static_cast<double>(o.requests),
		ns / static_cast<double>(o.requests));
	return 0;
}
