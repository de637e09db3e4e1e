// Golden tests of kvfdp's human and JSON output against the FDP SSD model after a fixed
// workload (deterministic: fixed model shape and writes, --width 100, a fake /proc+/sys tree).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_test_util.hpp"
#include "cli/command_context.hpp"

using namespace kvfdp::cli;
using namespace kvfdp::cli::test;

namespace {

namespace fs = std::filesystem;

// A fake root with the files the kernel probe reads.
std::string fake_root()
{
	static std::string root;
	if (!root.empty())
		return root;
	root = fs::temp_directory_path() / ("kvfdp-cli-root-" + std::to_string(::getpid()));
	auto put = [](const fs::path &p, const std::string &s) {
		fs::create_directories(p.parent_path());
		std::ofstream(p) << s << "\n";
	};
	put(fs::path(root) / "proc/sys/kernel/osrelease", "6.12.0-test-amd64");
	put(fs::path(root) / "proc/sys/kernel/io_uring_disabled", "0");
	put(fs::path(root) / "sys/kernel/btf/vmlinux", "");
	put(fs::path(root) / "sys/kernel/security/lsm", "lockdown,capability,bpf");
	fs::create_directories(fs::path(root) / "sys/module/ublk_drv");
	return root;
}

// Runs a subcommand against the worked model, 100 columns wide.
Ran on_model(std::vector<std::string> args)
{
	args.insert(args.end(),
		    {"--backend", "model", "--width", "100", "--probe-root", fake_root()});
	return run_cli(args, [](CommandContext &ctx) {
		ctx.device_factory = [] { return make_worked_model(); };
	});
}

void check_golden(const std::string &name, const std::vector<std::string> &args)
{
	Ran r = on_model(args);
	INFO(name << " stderr: " << r.err);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(golden_diff(name, r.out) == "");
}

}  // namespace

TEST_CASE("cli: ruh table and JSON against the model match the goldens")
{
	check_golden("ruh_model.txt", {"ruh"});
	check_golden("ruh_model.json", {"ruh", "-o", "json"});
}

TEST_CASE("cli: ruh JSON carries nvme-cli's keys and per-handle facts that agree")
{
	Ran r = on_model({"ruh", "-o", "json"});
	REQUIRE(r.rc == 0);
	auto j = nlohmann::json::parse(r.out);
	REQUIRE(j["nruhsd"] == 4);
	REQUIRE(j["ruhss"].size() == 4);
	for (const auto &h : j["ruhss"]) {
		CHECK(h.contains("pid"));
		CHECK(h.contains("ruhid"));
		CHECK(h.contains("earutr"));
		CHECK(h["ruamw_bytes"].get<uint64_t>() == h["ruamw"].get<uint64_t>() * 4096);
	}
	// The default map with 4 handles: not_set,none -> 0; short,medium -> 1; long -> 2; extreme -> 3.
	CHECK(j["ruhss"][0]["classes"] == nlohmann::json({"not_set", "none"}));
	CHECK(j["ruhss"][1]["classes"] == nlohmann::json({"short", "medium"}));
	CHECK(j["ruhss"][3]["classes"] == nlohmann::json({"extreme"}));
}

TEST_CASE("cli: stats against the model reports a WAF above 1 after rewrites")
{
	check_golden("stats_model.txt", {"stats"});
	check_golden("stats_model.json", {"stats", "-o", "json"});
	Ran r = on_model({"stats", "-o", "json"});
	auto j = nlohmann::json::parse(r.out);
	REQUIRE(j["lifetime"]["waf"].is_number());
	CHECK(j["lifetime"]["waf"].get<double>() > 1.0);
	CHECK(j["mbe"].get<uint64_t>() > 0);
	CHECK(j["hbmw"].get<uint64_t>() == (64u << 20) + 2u * (48u << 20) + 4096);
}

TEST_CASE("cli: configs and events against the model match the goldens")
{
	check_golden("configs_model.txt", {"configs"});
	check_golden("configs_model.json", {"configs", "-o", "json"});
	check_golden("events_model.txt", {"events"});
	check_golden("events_model.json", {"events", "-o", "json"});
	Ran r = on_model({"events", "-o", "json", "--host"});
	auto j = nlohmann::json::parse(r.out);
	REQUIRE(j["nevents"].get<int>() >= 1);
	CHECK(j["events"][0]["name"] == "invalid-pid");
}

TEST_CASE("cli: status on the model with a fake kernel tree matches the goldens")
{
	check_golden("status_model.txt", {"status"});
	check_golden("status_model.json", {"status", "-o", "json"});
}

TEST_CASE("cli: metrics on the model match the golden exposition")
{
	check_golden("metrics_model.prom", {"metrics"});
}
