// Skip helpers for capability-gated tests, and the guard that turns a skip after a failed
// check into a failure.
#include "tests/support/skip.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace kvfdp::test {

namespace {

std::atomic<int> g_failures{0};
std::atomic<int> g_decorator_skips{0};  // cases left out by a skip decorator (case_requires)

// The capabilities case_requires found missing: "SKIP: <cap>: <reason>" lines.
std::vector<std::string> &case_skips()
{
	static std::vector<std::string> v;
	return v;
}

// Counts failures as doctest reports them (listeners see every failed assertion).
struct FailureCounter : doctest::IReporter {
	explicit FailureCounter(const doctest::ContextOptions &) {}
	void report_query(const doctest::QueryData &) override {}
	void test_run_start() override {}
	void test_run_end(const doctest::TestRunStats &) override {}
	void test_case_start(const doctest::TestCaseData &) override {}
	void test_case_reenter(const doctest::TestCaseData &) override {}
	void test_case_end(const doctest::CurrentTestCaseStats &) override {}
	void test_case_exception(const doctest::TestCaseException &) override { g_failures++; }
	void subcase_start(const doctest::SubcaseSignature &) override {}
	void subcase_end() override {}
	void log_assert(const doctest::AssertData &a) override
	{
		if (a.m_failed && !(a.m_at & doctest::assertType::is_warn))
			g_failures++;
	}
	void log_message(const doctest::MessageData &) override {}
	void test_case_skipped(const doctest::TestCaseData &tc) override
	{
		if (tc.m_skip)
			g_decorator_skips++;
	}
};
DOCTEST_REGISTER_LISTENER("kvfdp-failure-counter", 1, FailureCounter);

std::vector<std::pair<std::string, std::function<std::string()>>> &requirements()
{
	static std::vector<std::pair<std::string, std::function<std::string()>>> r;
	return r;
}

}  // namespace

int failures_so_far()
{
	return g_failures.load();
}

void skip(const char *capability, const std::string &reason)
{
	std::fflush(stdout);
	if (int n = failures_so_far(); n > 0) {
		std::fprintf(
			stderr,
			"FAIL: %d failed check(s) before a skip (%s: %s): reporting the failure, not a skip\n",
			n, capability, reason.c_str());
		std::fflush(stderr);
		std::_Exit(1);
	}
	std::fprintf(stderr, "SKIP: %s: %s\n", capability, reason.c_str());
	std::fflush(stderr);
	std::_Exit(77);
}

void skip(const char *reason)
{
	skip("unspecified", reason);
}

void require_root(const char *what)
{
	if (::geteuid() != 0)
		skip("root", std::string(what) + " needs root");
}

Requires::Requires(const char *capability, std::function<std::string()> probe)
{
	requirements().emplace_back(capability, std::move(probe));
}

std::function<std::string()> probe_root(const char *what)
{
	return [what] {
		return ::geteuid() == 0 ? std::string() : std::string(what) + " needs root";
	};
}

std::function<std::string()> probe_btf()
{
	return [] {
		return ::access("/sys/kernel/btf/vmlinux", R_OK) == 0
			       ? std::string()
			       : std::string(
					 "this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF)");
	};
}

std::function<std::string()> probe_loop()
{
	return [] {
		if (std::system("command -v losetup >/dev/null 2>&1") != 0)
			return std::string(
				"losetup is not installed (util-linux; tools/setup.sh installs it)");
		struct stat st {};
		if (::stat("/dev/loop-control", &st) != 0) {
			(void)!std::system("modprobe loop >/dev/null 2>&1");
			if (::stat("/dev/loop-control", &st) != 0)
				return std::string(
					"no loop driver: /dev/loop-control is missing after modprobe loop");
		}
		return std::string();
	};
}

std::function<std::string()> probe_gpu()
{
	return probe_gpus(1);
}

std::function<std::string()> probe_gpus(int n)
{
	return [n]() -> std::string {
		int found = 0;
		std::error_code ec;
		for (const auto &d :
		     std::filesystem::directory_iterator("/sys/bus/pci/devices", ec)) {
			std::ifstream v(d.path() / "vendor"), c(d.path() / "class");
			std::string vendor, cls;
			if ((v >> vendor) && (c >> cls) && vendor == "0x10de" &&
			    cls.rfind("0x03", 0) == 0)
				found++;
		}
		if (found >= n)
			return "";
		if (found == 0)
			return "no NVIDIA GPU on this machine's PCI bus";
		return "needs " + std::to_string(n) + " NVIDIA GPUs, this machine's PCI bus has " +
		       std::to_string(found);
	};
}

doctest::skip case_requires(const char *capability, const std::function<std::string()> &probe)
{
	std::string why = probe();
	if (why.empty())
		return doctest::skip(false);
	case_skips().push_back(std::string("SKIP: ") + capability + ": " + why);
	return doctest::skip(true);
}

int finish_run(int rc)
{
	if (rc != 0 || g_decorator_skips.load() == 0 || case_skips().empty())
		return rc;
	std::fflush(stdout);
	for (const std::string &l : case_skips())
		std::fprintf(stderr, "%s\n", l.c_str());
	std::fflush(stderr);
	return 77;
}

void check_requirements()
{
	for (const auto &[cap, probe] : requirements())
		if (std::string why = probe(); !why.empty())
			skip(cap.c_str(), why);
}

}  // namespace kvfdp::test
