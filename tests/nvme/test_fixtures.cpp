// The parsers against bytes captured from QEMU 10.0.2's FDP NVMe (tests/nvme/fixtures/,
// see its README), each compared with nvme-cli 2.3's JSON decoding of the same state.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nvme/logs.hpp"

using namespace kvfdp::nvme;
using nlohmann::json;

namespace {
const char *const kDirs[] = {"lba4096", "lba512"};

std::vector<uint8_t> bytes(const std::string &dir, const std::string &name)
{
	std::ifstream f(std::string(KVFDP_NVME_FIXTURES) + "/" + dir + "/" + name,
			std::ios::binary);
	REQUIRE_MESSAGE(f.good(), "missing fixture " << dir << "/" << name);
	return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

json oracle(const std::string &dir, const std::string &name)
{
	std::ifstream f(std::string(KVFDP_NVME_FIXTURES) + "/" + dir + "/" + name);
	REQUIRE_MESSAGE(f.good(), "missing fixture " << dir << "/" << name);
	return json::parse(f);
}

u128 parse_u128(const std::string &s)
{
	u128 v = 0;
	for (char c : s)
		v = v * 10 + static_cast<unsigned>(c - '0');
	return v;
}
}  // namespace

TEST_CASE("nvme: QEMU RUH Status parses like nvme-cli reads it")
{
	for (const char *dir : kDirs) {
		CAPTURE(dir);
		auto b = bytes(dir, "ruh_status.bin");
		auto j = oracle(dir, "nvme_fdp_status.json");
		auto r = parse_ruh_status(b);
		REQUIRE(r.ok());
		CHECK(b.size() == ruh_status_size(r->nruhsd));  // exactly the reply, as QEMU wants
		REQUIRE(r->nruhsd == j["nruhsd"].get<unsigned>());
		REQUIRE(r->descs.size() == j["ruhss"].size());
		bool some_written = false;
		for (size_t i = 0; i < r->descs.size(); ++i) {
			const auto &e = j["ruhss"][i];
			CHECK(r->descs[i].pid == e["pid"].get<unsigned>());
			CHECK(r->descs[i].ruhid == e["ruhid"].get<unsigned>());
			CHECK(r->descs[i].earutr == e["earutr"].get<unsigned>());
			CHECK(r->descs[i].ruamw == e["ruamw"].get<uint64_t>());
			some_written = some_written || r->descs[i].ruamw != r->descs[0].ruamw ||
				       r->descs[i].ruamw < 256;
		}
		CHECK(some_written);  // captured after writes: not the initial state
		CHECK(encode_ruh_status(r->descs) == b);
	}
}

TEST_CASE("nvme: QEMU FDP configurations log parses like nvme-cli reads it")
{
	for (const char *dir : kDirs) {
		CAPTURE(dir);
		auto b = bytes(dir, "log_20.bin");
		auto j = oracle(dir, "nvme_fdp_configs.json");
		auto r = parse_fdp_configs(b);
		REQUIRE(r.ok());
		REQUIRE(r->configs.size() == j["n"].get<size_t>() + 1);
		const auto &c = r->configs[0];
		const auto &e = j["configs"][0];
		CHECK(c.fdpa == e["fdpa"].get<unsigned>());
		CHECK(c.valid);
		CHECK(c.nrg == e["nrg"].get<unsigned>());
		CHECK(c.nruh == e["nruh"].get<unsigned>());
		CHECK(c.nnss == e["nnss"].get<unsigned>());
		CHECK(c.runs == e["runs"].get<uint64_t>());
		CHECK(c.erutl == e["erutl"].get<unsigned>());
		CHECK(c.ruht.size() == c.nruh);
		for (uint8_t t : c.ruht)
			CHECK((t == kRuhtInitiallyIsolated || t == kRuhtPersistentlyIsolated));
		// Our encoding (no vendor bytes) parses back to the same configuration.
		auto again = parse_fdp_configs(encode_fdp_configs(*r));
		REQUIRE(again.ok());
		CHECK(again->configs[0].runs == c.runs);
		CHECK(again->configs[0].ruht == c.ruht);
	}
}

TEST_CASE("nvme: QEMU RUH usage log parses like nvme-cli reads it")
{
	for (const char *dir : kDirs) {
		CAPTURE(dir);
		auto r = parse_ruh_usage(bytes(dir, "log_21.bin"));
		auto j = oracle(dir, "nvme_fdp_usage.json");
		REQUIRE(r.ok());
		REQUIRE(r->size() == j["nruh"].get<size_t>());
		for (size_t i = 0; i < r->size(); ++i)
			CHECK((*r)[i] == j["ruhus"][i]["ruha"].get<unsigned>());
	}
}

TEST_CASE("nvme: QEMU FDP statistics parse like nvme-cli reads them")
{
	for (const char *dir : kDirs) {
		CAPTURE(dir);
		auto r = parse_fdp_stats(bytes(dir, "log_22.bin"));
		auto j = oracle(dir, "nvme_fdp_stats.json");
		REQUIRE(r.ok());
		CHECK(r->hbmw == parse_u128(j["hbmw"].get<std::string>()));
		CHECK(r->mbmw == parse_u128(j["mbmw"].get<std::string>()));
		CHECK(r->mbe == parse_u128(j["mbe"].get<std::string>()));
		CHECK(r->hbmw > 0);
		CHECK(r->mbe == 0);  // QEMU does no garbage collection
	}
}

TEST_CASE("nvme: QEMU FDP events log parses (4096 bytes, no host events)")
{
	for (const char *dir : kDirs) {
		CAPTURE(dir);
		auto b = bytes(dir, "log_23.bin");
		CHECK(b.size() == 4096u);
		auto r = parse_fdp_events(b);
		REQUIRE(r.ok());
		CHECK(r->empty());
	}
}

TEST_CASE("nvme: QEMU Identify replies parse like nvme-cli reads them")
{
	for (const char *dir : kDirs) {
		CAPTURE(dir);
		auto c = parse_id_ctrl(bytes(dir, "id_ctrl.bin"));
		auto jc = oracle(dir, "nvme_id_ctrl.json");
		REQUIRE(c.ok());
		CHECK(c->mdts == jc["mdts"].get<unsigned>());
		CHECK(c->ctratt == jc["ctratt"].get<unsigned>());
		CHECK(c->oncs == jc["oncs"].get<unsigned>());
		CHECK(c->vwc == jc["vwc"].get<unsigned>());
		CHECK(c->fdp_supported());
		CHECK(c->max_transfer() == 512u * 1024);  // QEMU's default MDTS 7

		auto n = parse_id_ns(bytes(dir, "id_ns.bin"));
		auto jn = oracle(dir, "nvme_id_ns.json");
		REQUIRE(n.ok());
		CHECK(n->nsze == jn["nsze"].get<uint64_t>());
		CHECK(n->flbas == jn["flbas"].get<unsigned>());
		CHECK(n->nlbaf == jn["nlbaf"].get<unsigned>());
		CHECK(n->endgid == jn["endgid"].get<unsigned>());
		CHECK(n->lbaf[n->format_index()].lbads ==
		      jn["lbafs"][n->format_index()]["ds"].get<unsigned>());
		CHECK(n->lba_size() == (std::string(dir) == "lba512" ? 512u : 4096u));
	}
}
