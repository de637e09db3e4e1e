// The real kvfdpd binary's start-time refusals: a bad command line exits 2 (never CLI11's
// own codes); a bad config, socket path, --ready-file or require_tagger with --no-tagger exits
// 1 before anything is made (no model --file, no socket, no ublk device), and a twin_memory
// too small for one RU exits 1 once the device is open. Each is one line on stderr and is
// refused before /dev/ublk-control is opened, so every case runs on any machine.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <string>
#include <tuple>
#include <utility>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "tests/support/temp_files.hpp"

using kvfdp::test::TempDir;
using kvfdp::test::write_file;

namespace {

struct Ran {
	int rc = -1;
	std::string err;
};

// Runs kvfdpd with args; its stderr captured, stdout discarded.
Ran kvfdpd(const std::vector<std::string> &args)
{
	TempDir d;
	const std::string errfile = d.path + "/stderr";
	const pid_t pid = ::fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		const int e =
			::open(errfile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		const int n = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (e < 0 || n < 0 || ::dup2(e, 2) < 0 || ::dup2(n, 1) < 0)
			::_exit(126);
		std::vector<char *> argv{const_cast<char *>(KVFDPD_BIN)};
		for (const auto &a : args)
			argv.push_back(const_cast<char *>(a.c_str()));
		argv.push_back(nullptr);
		::execv(KVFDPD_BIN, argv.data());
		::_exit(127);
	}
	int status = 0;
	REQUIRE(::waitpid(pid, &status, 0) == pid);
	Ran r;
	r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	const int fd = ::open(errfile.c_str(), O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	char buf[4096];
	ssize_t n;
	while ((n = ::read(fd, buf, sizeof(buf))) > 0)
		r.err.append(buf, static_cast<size_t>(n));
	::close(fd);
	return r;
}

bool one_line(const std::string &s)
{
	return !s.empty() && s.find('\n') == s.size() - 1;
}
bool exists(const std::string &p)
{
	struct stat st {};
	return ::lstat(p.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("kvfdpd: a bad command line exits 2 with one line, not CLI11's codes")
{
	const std::vector<std::vector<std::string>> cases = {
		{"--no-such-option"},   // CLI11: 109 (extras) / 105
		{"--depth", "many"},    // CLI11: 105 (conversion)
		{"--backend", "tape"},  // CLI11: 105 (validation)
		{"stray-positional"},   // CLI11: 109
		{"--config"},           // CLI11: 104-ish (argument missing)
		{"--depth", "0"},       // kvfdpd's own checks
		{"--keep", "--force-remove"},
		{"--attach"},  // without --dev-id
		{"--io-buf", "1000"},
	};
	for (const auto &args : cases) {
		Ran r = kvfdpd(args);
		INFO("kvfdpd " << args.front() << " ...: rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == 2);
		CHECK(one_line(r.err));
		CHECK(r.err.rfind("kvfdpd: error: ", 0) == 0);
	}
	CHECK(kvfdpd({"--help"}).rc == 0);
}

TEST_CASE("kvfdpd: a bad config is refused (exit 1) before the model backend creates its --file")
{
	TempDir d;
	const std::string img = d.path + "/model.img";
	const std::string sock = d.path + "/kvfdpd.sock";
	const std::string dir = d.path + "/conf.d";
	REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
	const std::string fifo = d.path + "/fifo.toml";
	REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
	write_file(d.path + "/range.toml", "[placement]\nshort = 9\n");  // the model has 8 handles
	write_file(d.path + "/typo.toml", "[plcement]\nshort = 1\n");
	const std::pair<std::string, std::string> cases[] = {
		{dir, "is a directory, not a regular file"},
		{fifo, "is a FIFO, not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{d.path + "/range.toml",
		 "placement.short: handle 9 out of range (device has 8 handles"},
		{d.path + "/typo.toml", "plcement: unknown table"},
		{d.path + "/missing.toml", "missing.toml"},
	};
	for (const auto &[config, says] : cases) {
		Ran r = kvfdpd({"--backend", "model", "--file", img, "--size", "64M", "--nruh", "8",
				"--no-tagger", "--socket", sock, "--config", config});
		INFO("--config " << config << ": rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == 1);
		CHECK(one_line(r.err));
		CHECK(r.err.find(says) != std::string::npos);
		CHECK_FALSE(exists(img));
		CHECK_FALSE(exists(sock));
	}
}

TEST_CASE("kvfdpd: a bad socket path or --ready-file is refused (exit 1) before anything is made")
{
	TempDir d;
	const std::string img = d.path + "/model.img";
	const std::string file = d.path + "/not-a-socket";
	write_file(file, "keep me");
	const std::pair<std::vector<std::string>, std::string> cases[] = {
		{{"--socket", file},
		 file + " exists and is not a socket; remove it or pass --socket"},
		{{"--socket", d.path + "/" + std::string(120, 's')}, "pass a shorter --socket"},
		{{"--socket", d.path + "/sock", "--ready-file", d.path + "/no-such-dir/ready"},
		 "--ready-file"},
	};
	for (const auto &[extra, says] : cases) {
		std::vector<std::string> args = {"--backend", "model", "--file",     img,
						 "--size",    "64M",   "--no-tagger"};
		args.insert(args.end(), extra.begin(), extra.end());
		Ran r = kvfdpd(args);
		INFO(extra.front() << " " << extra[1] << ": rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == 1);
		CHECK(one_line(r.err));
		CHECK(r.err.find(says) != std::string::npos);
		CHECK_FALSE(exists(img));
		CHECK_FALSE(exists(d.path + "/sock"));
	}
	struct stat st {};
	REQUIRE(::stat(file.c_str(), &st) == 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK(st.st_size == 7);
}

TEST_CASE(
	"kvfdpd: --metrics-listen on a port in use exits 1, a malformed one 2, before anything is made")
{
	TempDir d;
	const std::string img = d.path + "/model.img";
	const std::string sock = d.path + "/kvfdpd.sock";
	// A port this test holds.
	const int held = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(held >= 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	REQUIRE(::bind(held, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
	REQUIRE(::listen(held, 1) == 0);
	socklen_t len = sizeof a;
	REQUIRE(::getsockname(held, reinterpret_cast<sockaddr *>(&a), &len) == 0);
	const std::string addr = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
	const std::tuple<std::string, int, std::string> cases[] = {
		{addr, 1, addr + ": address already in use"},
		{"nine", 2, "--metrics-listen 'nine': the port must be a number"},
		{"example.org:80", 2, "names are not resolved"},
	};
	for (const auto &[listen, rc, says] : cases) {
		Ran r = kvfdpd({"--backend", "model", "--file", img, "--size", "64M", "--no-tagger",
				"--socket", sock, "--metrics-listen", listen});
		INFO("--metrics-listen " << listen << ": rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == rc);
		CHECK(one_line(r.err));
		CHECK(r.err.find(says) != std::string::npos);
		CHECK_FALSE(exists(img));
		CHECK_FALSE(exists(sock));
	}
	// metrics_listen in the config stands in for the option: its port in use is refused the
	// same way, a malformed one names the file and line (exit 1, a config error); the option wins.
	const std::string cfg = d.path + "/kvfdp.toml";
	const std::string cfg_bad = d.path + "/bad.toml";
	write_file(cfg, "metrics_listen = \"" + addr + "\"\n[placement]\nshort = 1\n");
	write_file(cfg_bad, "# kvfdp\nmetrics_listen = \"nine\"\n");
	const std::tuple<std::vector<std::string>, int, std::string> cfg_cases[] = {
		{{"--config", cfg}, 1, addr + ": address already in use"},
		{{"--config", cfg_bad},
		 1,
		 "bad.toml:2: metrics_listen: --metrics-listen 'nine': the port must be a number"},
		{{"--config", cfg, "--metrics-listen", "nine"}, 2, "--metrics-listen 'nine'"},
	};
	for (const auto &[extra, rc, says] : cfg_cases) {
		std::vector<std::string> args{"--backend", "model",       "--file",   img, "--size",
					      "64M",       "--no-tagger", "--socket", sock};
		args.insert(args.end(), extra.begin(), extra.end());
		Ran r = kvfdpd(args);
		INFO(extra.back() << ": rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == rc);
		CHECK(one_line(r.err));
		CHECK(r.err.find(says) != std::string::npos);
		CHECK_FALSE(exists(img));
	}
	::close(held);
}

TEST_CASE(
	"kvfdpd: stripe members refused in one line naming the member (exit 1), before any ublk device")
{
	TempDir d;
	const std::string a = d.path + "/a.img", b = d.path + "/b.img",
			  sock = d.path + "/kvfdpd.sock";
	write_file(d.path + "/dup.toml", "[device]\npaths = [\"" + a + "\", \"" + a + "\"]\n");
	write_file(d.path + "/big.toml", "[device]\nstripe_size = \"2G\"\n");
	const std::pair<std::vector<std::string>, std::string> cases[] = {
		{{"--backend", "model", "--file", a, "--file", a},
		 "stripe member 1 (" + a + ") is the same namespace as member 0 (" + a +
			 "): give each namespace once"},
		{{"--backend", "model", "--config", d.path + "/dup.toml"},
		 "stripe member 1 (" + a + ") is the same namespace"},
		{{"--backend", "file", "--file", a, "--file", b},
		 "stripe member 0 (" + a +
			 ") has no FDP enabled: every stripe member must be an FDP namespace"},
		{{"--backend", "model", "--file", a, "--stripe-size", "1M"},
		 "--stripe-size is for a stripe"},
		// [device] stripe_size applies to a stripe named on the command line too.
		{{"--backend", "model", "--file", a, "--file", b, "--config", d.path + "/big.toml"},
		 "stripe size 2147483648 is not"},
		// ... and a single namespace ignores it: the start goes on to the next check.
		{{"--backend", "model", "--file", a, "--config", d.path + "/big.toml",
		  "--ready-file", "/nonexistent-kvfdp/ready"},
		 "--ready-file /nonexistent-kvfdp/ready"},
		{{"--backend", "model", "--file", a, "--file", b, "--stripe-size", "6000"},
		 "stripe size 6000 is not a multiple"},
		{{"--device", d.path + "/ng98n1", "--device", d.path + "/ng99n1"},
		 "stripe member 0 (" + d.path + "/ng98n1): "},
	};
	for (const auto &[extra, says] : cases) {
		std::vector<std::string> args = {"--size", "64M", "--no-tagger", "--socket", sock};
		args.insert(args.end(), extra.begin(), extra.end());
		Ran r = kvfdpd(args);
		INFO(extra[1] << " ...: rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == 1);
		CHECK(one_line(r.err));
		CHECK(r.err.find(says) != std::string::npos);
		CHECK_FALSE(exists(sock));
	}
}

TEST_CASE(
	"kvfdpd: require_tagger or --require-tagger with the tagger off exits 1 with one line, before anything is made")
{
	TempDir d;
	const std::string img = d.path + "/model.img", sock = d.path + "/kvfdpd.sock";
	const std::string on = d.path + "/on.toml", off = d.path + "/off.toml";
	write_file(on, "require_tagger = true\n[placement]\nshort = 1\n");
	write_file(off, "require_tagger = false\n");
	const std::pair<std::vector<std::string>, std::string> cases[] = {
		{{"--require-tagger"},
		 "the BPF tagger is required (--require-tagger) but not active (disabled with --no-tagger): fix what that "
		 "names (docs/deploy.md, When placement does not happen), or drop --require-tagger to serve with every write on the "
		 "default handle"},
		{{"--config", on},
		 "the BPF tagger is required (" + on +
			 ":1) but not active (disabled with --no-tagger)"},
		{{"--config", on, "--require-tagger"},
		 "required (--require-tagger)"},  // the option is named first
		// false asks for nothing: the start goes on to the next check.
		{{"--config", off, "--ready-file", "/nonexistent-kvfdp/ready"},
		 "--ready-file /nonexistent-kvfdp/ready"},
	};
	for (const auto &[extra, says] : cases) {
		std::vector<std::string> args = {"--backend",   "model",    "--file",
						 img,           "--size",   "64M",
						 "--no-tagger", "--socket", sock};
		args.insert(args.end(), extra.begin(), extra.end());
		Ran r = kvfdpd(args);
		INFO(extra.front()
		     << " " << extra.back() << ": rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == 1);
		CHECK(one_line(r.err));
		CHECK(r.err.find(says) != std::string::npos);
		CHECK_FALSE(exists(img));
		CHECK_FALSE(exists(sock));
	}
}

TEST_CASE(
	"kvfdpd: sizes read as the config reads them: 512K, 512KB and 512KiB are one 524288-byte stripe unit")
{
	TempDir d;
	const std::string a = d.path + "/a.img", b = d.path + "/b.img",
			  sock = d.path + "/kvfdpd.sock";
	// Two 384 KiB models: any stripe of 512 KiB is refused naming the size kvfdpd read.
	const std::vector<std::string> stripe = {
		"--no-tagger", "--socket",  sock,     "--backend", "model",
		"--file",      a,           "--file", b,           "--capacity",
		"384K",        "--ru-size", "4K",     "--op",      "0.5"};
	for (const std::string s : {"512K", "512KB", "512KiB", "512kb", "0.5MiB", "524288"}) {
		const std::string toml = d.path + "/stripe.toml";
		write_file(toml, "[device]\nstripe_size = \"" + s + "\"\n");
		std::vector<std::string> flag = stripe, config = stripe;
		flag.insert(flag.end(), {"--stripe-size", s});
		config.insert(config.end(), {"--config", toml});
		for (const auto &args : {flag, config}) {
			::unlink(a.c_str());
			::unlink(b.c_str());
			Ran r = kvfdpd(args);
			INFO(args[args.size() - 2] << " " << s << ": rc " << r.rc
						   << ", stderr: " << r.err);
			CHECK(r.rc == 1);
			CHECK(one_line(r.err));
			CHECK(r.err.find(
				      "holds 393216 bytes, less than one stripe unit (524288)") !=
			      std::string::npos);
		}
	}
	// A bad size: exit 2 with parse_size's line as an option, exit 1 naming the key in a config.
	Ran r = kvfdpd({"--stripe-size", "512XB"});
	CHECK(r.rc == 2);
	CHECK(one_line(r.err));
	CHECK(r.err.find("--stripe-size: bad size '512XB' (unknown suffix)") != std::string::npos);
	r = kvfdpd({"--io-buf", "1.5Q"});
	CHECK(r.rc == 2);
	CHECK(r.err.find("--io-buf: bad size '1.5Q'") != std::string::npos);
	write_file(d.path + "/bad.toml", "[device]\nstripe_size = \"512XB\"\n");
	r = kvfdpd({"--no-tagger", "--socket", sock, "--backend", "model", "--file", a, "--file", b,
		    "--config", d.path + "/bad.toml"});
	CHECK(r.rc == 1);
	CHECK(r.err.find("bad.toml:2: device.stripe_size: must be a size") != std::string::npos);
}

TEST_CASE(
	"kvfdpd: the model's shape is --capacity / --handles, with the old --size / --nruh as aliases")
{
	TempDir d;
	const std::string img = d.path + "/model.img", sock = d.path + "/kvfdpd.sock";
	write_file(d.path + "/range.toml", "[placement]\nshort = 9\n");
	const std::pair<std::string, std::string> names[] = {{"--capacity", "--handles"},
							     {"--size", "--nruh"}};
	for (const auto &[capacity, handles] : names) {
		// The handle count reaches the config check, which names it.
		Ran r = kvfdpd({"--backend", "model", "--file", img, capacity, "64M", handles, "4",
				"--no-tagger", "--socket", sock, "--config",
				d.path + "/range.toml"});
		INFO(capacity << " " << handles << ": rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == 1);
		CHECK(r.err.find("handle 9 out of range (device has 4 handles") !=
		      std::string::npos);
		// The capacity reaches the stripe check, which names it.
		r = kvfdpd({"--backend", "model", "--file", img, "--file", d.path + "/b.img",
			    capacity, "384KiB", "--ru-size", "4K", "--op", "0.5", "--stripe-size",
			    "1M", "--no-tagger", "--socket", sock});
		CHECK(r.rc == 1);
		CHECK(r.err.find("holds 393216 bytes") != std::string::npos);
		::unlink(img.c_str());
		::unlink((d.path + "/b.img").c_str());
	}
	// One name of each, not both.
	for (const auto &args : {std::vector<std::string>{"--capacity", "1M", "--size", "1M"},
				 std::vector<std::string>{"--handles", "8", "--nruh", "8"}}) {
		Ran r = kvfdpd(args);
		INFO(args[0] << " and " << args[2] << ": " << r.err);
		CHECK(r.rc == 2);
		CHECK(one_line(r.err));
		CHECK(r.err.find(args[0] + " excludes " + args[2]) != std::string::npos);
	}
}

TEST_CASE("kvfdpd: twin_memory in the config is --twin-memory where the command line gives none")
{
	TempDir d;
	const std::string img = d.path + "/model.img";
	const std::string sock = d.path + "/kvfdpd.sock";
	const std::string cfg = d.path + "/kvfdp.toml";
	write_file(cfg, "twin_memory = \"2K\"\n[placement]\nshort = 1\n");
	// A given bound too small for one RU stops the start (the twin is planned before
	// /dev/ublk-control is opened, so this runs on any machine); the option wins over the key.
	// The line names where the bound came from, and what to raise: the key, or the option.
	struct Case {
		std::vector<std::string> extra;
		std::string says, raise, not_says;
	};
	const Case cases[] = {
		{{"--config", cfg},
		 cfg + ":1: twin_memory: twin: a memory bound of 2.0 KiB is too small for one reclaim unit",
		 "raise twin_memory to at least",
		 "--twin-memory"},
		{{"--config", cfg, "--twin-memory", "4K"},
		 "twin: a memory bound of 4.0 KiB is too small for one reclaim unit",
		 "raise --twin-memory to at least",
		 "twin_memory"},
	};
	for (const auto &[extra, says, raise, not_says] : cases) {
		std::vector<std::string> args{"--backend", "model",       "--file",   img, "--size",
					      "64M",       "--no-tagger", "--socket", sock};
		args.insert(args.end(), extra.begin(), extra.end());
		Ran r = kvfdpd(args);
		INFO(extra.back() << ": rc " << r.rc << ", stderr: " << r.err);
		CHECK(r.rc == 1);
		CHECK(one_line(r.err));
		CHECK(r.err.find(says) != std::string::npos);
		CHECK(r.err.find(raise) != std::string::npos);
		CHECK(r.err.find(not_says) == std::string::npos);
		CHECK_FALSE(exists(sock));
	}
}
