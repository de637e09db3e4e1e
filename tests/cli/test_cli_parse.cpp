// CLI parsing and bad input: each gets its exit code and a one-line error that says what to
// do next; nothing crashes. Also the pure helpers (sizes, classes, the default map, tables,
// WAF assessment, metric rendering).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "kvfdp_build.hpp"
#include "tests/cli/cli_test_util.hpp"
#include "cli/ruh_metrics.hpp"
#include "cli/table.hpp"
#include "cli/units.hpp"
#include "nvme/waf.hpp"

using namespace kvfdp::cli;
using namespace kvfdp::cli::test;

namespace {

bool one_line(const std::string &s)
{
	return !s.empty() && s.find('\n') == s.size() - 1;
}

const char *kNoSocket = "/tmp/kvfdp-cli-test-no-such.sock";

}  // namespace

TEST_CASE("cli: sizes take binary suffixes and reject others with a hint")
{
	CHECK(*parse_size("4096") == 4096);
	CHECK(*parse_size("64KiB") == 64u << 10);
	CHECK(*parse_size("1MiB") == 1u << 20);
	CHECK(*parse_size("8G") == 8ull << 30);
	CHECK(*parse_size("2TiB") == 2ull << 40);
	auto bad = parse_size("10XB");
	REQUIRE(!bad.ok());
	CHECK(bad.error().context.find("KiB, MiB, GiB or TiB") != std::string::npos);
	CHECK(!parse_size("").ok());
	CHECK(!parse_size("GiB").ok());
	CHECK(!parse_size("99999999999999999999").ok());
	CHECK(!parse_size("20000000TiB").ok());
}

TEST_CASE("cli: class names parse both ways")
{
	CHECK(*parse_class("LONG") == 4);
	CHECK(*parse_class("not_set") == 0);
	CHECK(*parse_class("5") == 5);
	CHECK(!parse_class("forever"));
	CHECK(class_name(3) == "medium");
}

TEST_CASE("cli: the default class map shares neighbours when handles are few")
{
	auto m8 = default_class_map(8);
	CHECK(m8 == std::array<int, 6>{0, 0, 1, 2, 3, 4});
	auto m3 = default_class_map(3);
	CHECK(m3 == std::array<int, 6>{0, 0, 1, 1, 2, 2});
	auto m2 = default_class_map(2);
	CHECK(m2 == std::array<int, 6>{0, 0, 1, 1, 1, 1});
	auto m1 = default_class_map(1);
	CHECK(m1 == std::array<int, 6>{0, 0, 0, 0, 0, 0});
	CHECK(classes_on_handle(m3, 2) == std::vector<int>{4, 5});
}

TEST_CASE("cli: tables fit the width by cutting flexible columns only")
{
	Table t({{"ID", Align::right}, {"PATH", Align::left, true}, {"BYTES", Align::right}});
	t.add_row({"1", "/mnt/kv/a/very/long/path/to/a/chunk/file.bin", "12"});
	std::ostringstream wide, narrow;
	t.render(wide, 200);
	t.render(narrow, 30);
	CHECK(wide.str().find("chunk/file.bin") != std::string::npos);
	std::istringstream lines(narrow.str());
	std::string line;
	while (std::getline(lines, line))
		CHECK(line.size() <= 30);
	CHECK(narrow.str().find("~") != std::string::npos);
	CHECK(narrow.str().find("12") != std::string::npos);
}

TEST_CASE("cli: key-value lines wrap long values after a comma, never cut them")
{
	KeyValues kv;
	kv.add("io",
	       "108 writes (12.05 MiB), 10 reads (40.00 KiB), 4 flushes, 3 discards (8.00 MiB), 0 errors");
	kv.add("fdp", "enabled");
	std::ostringstream out;
	kv.render(out, 50);
	const std::string s = out.str();
	CHECK(s.find('~') == std::string::npos);
	CHECK(s.find("0 errors") != std::string::npos);
	CHECK(s.find("(8.00 MiB)") != std::string::npos);
	std::istringstream lines(s);
	std::string line;
	int n = 0;
	while (std::getline(lines, line)) {
		CHECK(line.size() <= 50);
		if (n == 1)
			CHECK(line.rfind("     ", 0) ==
			      0);  // the continuation sits under the value
		n++;
	}
	CHECK(n >= 3);
}

TEST_CASE("cli: terminal width falls back to COLUMNS, then 80")
{
	CHECK(terminal_width(123, -1) == 123);
	::setenv("COLUMNS", "57", 1);
	CHECK(terminal_width(0, -1) == 57);
	::setenv("COLUMNS", "junk", 1);
	CHECK(terminal_width(0, -1) == 80);
	::unsetenv("COLUMNS");
	CHECK(terminal_width(0, -1) == 80);
}

TEST_CASE("cli: WAF is withheld, with the reason, when the counters cannot give one")
{
	kvfdp::nvme::FdpStats zero{}, a{}, b{};
	auto none = kvfdp::nvme::assess_waf(zero, zero, false);
	CHECK(!none.waf);
	CHECK(none.reason.find("no host writes") != std::string::npos);
	a.hbmw = 1000;
	a.mbmw = 1000;
	a.mbe = 0;
	b.hbmw = 3000;
	b.mbmw = 5000;
	b.mbe = 0;
	auto qemu = kvfdp::nvme::assess_waf(a, b, true);
	CHECK(!qemu.waf);
	CHECK(qemu.reason.find("MBE 0") != std::string::npos);
	auto real = kvfdp::nvme::assess_waf(a, b, false);
	REQUIRE(real.waf);
	CHECK(*real.waf == doctest::Approx(2.0));
	CHECK(real.reason.find("no media erase") != std::string::npos);
	b.mbe = 4096;
	auto gc = kvfdp::nvme::assess_waf(a, b, false);
	REQUIRE(gc.waf);
	CHECK(gc.reason.empty());
	auto back = kvfdp::nvme::assess_waf(b, a, false);
	CHECK(!back.waf);
	CHECK(back.reason.find("backwards") != std::string::npos);
}

TEST_CASE("cli: metric text escapes labels and skips families the daemon already sent")
{
	std::vector<kvfdp::proto::MetricFamily> f = {
		{"kvfdp_x", "help", "gauge", {{{{"path", "a\"b\\c"}}, "1"}}}};
	std::string text = kvfdp::proto::render_metrics(f);
	CHECK(text ==
	      "# HELP kvfdp_x help\n# TYPE kvfdp_x gauge\nkvfdp_x{path=\"a\\\"b\\\\c\"} 1\n");
	CHECK(kvfdp::proto::has_family(text, "kvfdp_x"));
	CHECK(!kvfdp::proto::has_family(text, "kvfdp_x_total"));
}

TEST_CASE("cli: usage errors exit 2")
{
	Ran r = run_cli({"frobnicate"});
	CHECK(r.rc == kvfdp::proto::kExitUsage);
	CHECK(r.err.find("frobnicate") != std::string::npos);
	CHECK(run_cli({}).rc == kvfdp::proto::kExitUsage);
	CHECK(run_cli({"ruh", "-o", "yaml"}).rc == kvfdp::proto::kExitUsage);
	CHECK(run_cli({"ruh", "--width", "5"}).rc == kvfdp::proto::kExitUsage);
	CHECK(run_cli({"ruh", "--backend", "tape"}).rc == kvfdp::proto::kExitUsage);
	CHECK(run_cli({"policy"}).rc == kvfdp::proto::kExitUsage);
	CHECK(run_cli({"policy", "check"}).rc == kvfdp::proto::kExitUsage);
	CHECK(run_cli({"--help"}).rc == kvfdp::proto::kExitOk);
}

TEST_CASE("cli: stats -n without -i is a usage error, not silently ignored")
{
	// Refused before any device or daemon is asked (the socket does not exist).
	for (auto args :
	     {std::vector<std::string>{"stats", "-n", "5", "--socket", kNoSocket},
	      std::vector<std::string>{"stats", "--count", "3", "--backend", "model"}}) {
		Ran r = run_cli(args);
		CHECK(r.rc == kvfdp::proto::kExitUsage);
		CHECK(one_line(r.err));
		CHECK(r.err.find("--count requires --interval") != std::string::npos);
		CHECK(r.out.empty());
	}
	// An interval of 0 would take no interval either.
	Ran z = run_cli({"stats", "-i", "0", "-n", "2", "--socket", kNoSocket});
	CHECK(z.rc == kvfdp::proto::kExitUsage);
	CHECK(one_line(z.err));
	CHECK(z.err.find("--interval") != std::string::npos);
}

TEST_CASE("cli: a bad size suffix names the option and the suffixes")
{
	Ran r = run_cli({"ruh", "--backend", "model", "--capacity", "10XB"});
	CHECK(r.rc == kvfdp::proto::kExitUsage);
	CHECK(one_line(r.err));
	CHECK(r.err.find("--capacity") != std::string::npos);
	CHECK(r.err.find("GiB") != std::string::npos);
}

TEST_CASE("cli: a bad class name lists the classes")
{
	Ran r = run_cli({"files", "--class", "forever", "--socket", kNoSocket});
	CHECK(r.rc == kvfdp::proto::kExitUsage);
	CHECK(one_line(r.err));
	CHECK(r.err.find("short, medium, long") != std::string::npos);
}

TEST_CASE("cli: a missing device exits 3 and says where to look")
{
	Ran r = run_cli({"ruh", "--device", "/dev/ng99n99"});
	CHECK(r.rc == kvfdp::proto::kExitNoDevice);
	CHECK(one_line(r.err));
	CHECK(r.err.find("/dev/ng99n99") != std::string::npos);
	CHECK(r.err.find("--backend model") != std::string::npos);
}

TEST_CASE("cli: no daemon exits 3 and suggests --device; status still reports")
{
	Ran r = run_cli({"ruh", "--socket", kNoSocket});
	CHECK(r.rc == kvfdp::proto::kExitNoDevice);
	CHECK(one_line(r.err));
	CHECK(r.err.find("is kvfdpd running? try --device") != std::string::npos);
	CHECK(run_cli({"files", "--socket", kNoSocket}).rc == kvfdp::proto::kExitNoDevice);
	CHECK(run_cli({"stats", "--socket", kNoSocket}).rc == kvfdp::proto::kExitNoDevice);
	// status without a daemon on the default socket reports the kernel probe and exits 0;
	// an explicitly named socket that is not there is an error.
	Ran s = run_cli({"status", "--socket", kNoSocket, "-o", "json"});
	CHECK(s.rc == kvfdp::proto::kExitNoDevice);
	Ran m = run_cli({"metrics", "--socket", kNoSocket});
	CHECK(m.rc == kvfdp::proto::kExitNoDevice);
	CHECK(m.out.find("kvfdp_daemon_up 0") != std::string::npos);
}

TEST_CASE("cli: files refuses a device: records live in kvfdpd")
{
	Ran r = run_cli({"files", "--backend", "model"});
	CHECK(r.rc == kvfdp::proto::kExitUsage);
	CHECK(r.err.find("kvfdpd") != std::string::npos);
}

TEST_CASE("cli: policy check refuses a directory, a FIFO and /dev/zero at once, with one line")
{
	namespace fs = std::filesystem;
	fs::path dir =
		fs::temp_directory_path() / ("kvfdp-cli-policy-type-" + std::to_string(::getpid()));
	fs::create_directories(dir / "a-dir.toml");
	REQUIRE(::mkfifo((dir / "fifo.toml").c_str(), 0644) == 0);  // no writer: a read would block
	const std::pair<std::string, const char *> cases[] = {
		{(dir / "a-dir.toml").string(), "is a directory, not a regular file"},
		{(dir / "fifo.toml").string(), "is a FIFO, not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"}};
	for (const auto &[file, says] : cases) {
		Ran r = run_cli({"policy", "check", file});
		CHECK(r.rc == kvfdp::proto::kExitUsage);
		CHECK(one_line(r.err));
		CHECK_MESSAGE(r.err.find(file + " " + says) != std::string::npos, r.err);
		CHECK(r.out.empty());
	}
	fs::remove_all(dir);
}

TEST_CASE("cli: policy check validates with kvfdpd's parser")
{
	namespace fs = std::filesystem;
	fs::path dir =
		fs::temp_directory_path() / ("kvfdp-cli-policy-" + std::to_string(::getpid()));
	fs::create_directories(dir);
	std::ofstream(dir / "good.toml")
		<< "[placement]\nlong = 3\n\n[[rule]]\npath = \"/mnt/kv/prefix\"\nclass = \"extreme\"\n";
	std::ofstream(dir / "bad.toml") << "[placement]\nforever = 3\n";
	std::ofstream(dir / "range.toml") << "[placement]\nlong = 7\n";
	Ran good = run_cli({"policy", "check", (dir / "good.toml").string()});
	CHECK(good.rc == kvfdp::proto::kExitOk);
	CHECK(good.out.find("valid") != std::string::npos);
	Ran bad = run_cli({"policy", "check", (dir / "bad.toml").string()});
	CHECK(bad.rc == kvfdp::proto::kExitUsage);
	CHECK(one_line(bad.err));
	CHECK(bad.err.find("placement.forever") != std::string::npos);
	// Handle 7 is fine for kvfdpd in general but not for a 4-handle model.
	CHECK(run_cli({"policy", "check", (dir / "range.toml").string()}).rc ==
	      kvfdp::proto::kExitOk);
	Ran range = run_cli({"policy", "check", (dir / "range.toml").string(), "--backend", "model",
			     "--handles", "4"});
	CHECK(range.rc == kvfdp::proto::kExitUsage);
	CHECK(range.err.find("out of range") != std::string::npos);
	Ran show = run_cli({"policy", "show", (dir / "good.toml").string(), "-o", "json"});
	CHECK(show.rc == kvfdp::proto::kExitOk);
	CHECK(show.out.find("\"extreme\"") != std::string::npos);
	CHECK(run_cli({"policy", "check", (dir / "nope.toml").string()}).rc ==
	      kvfdp::proto::kExitUsage);
	fs::remove_all(dir);
}

TEST_CASE("cli: --version prints what the version subcommand prints, with no subcommand needed")
{
	const Ran flag = run_cli({"--version"});
	CHECK(flag.rc == 0);
	CHECK(flag.out == std::string("kvfdp ") + KVFDP_VERSION + "\n");
	CHECK(flag.err.empty());
	const Ran sub = run_cli({"version"});
	CHECK(sub.rc == 0);
	CHECK(sub.out == flag.out);
	// Without either, a subcommand is still required (usage, exit 2).
	CHECK(run_cli({}).rc == 2);
}
