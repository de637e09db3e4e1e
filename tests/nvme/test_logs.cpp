// Parsers and encoders of RUH Status, FDP logs and Identify, on hand-built bytes.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "nvme/logs.hpp"

using namespace kvfdp::nvme;

namespace {
void put16(std::vector<uint8_t> &b, size_t off, uint16_t v)
{
	b[off] = v & 0xFF;
	b[off + 1] = v >> 8;
}
void put32(std::vector<uint8_t> &b, size_t off, uint32_t v)
{
	for (int i = 0; i < 4; ++i)
		b[off + i] = (v >> (8 * i)) & 0xFF;
}
void put64(std::vector<uint8_t> &b, size_t off, uint64_t v)
{
	for (int i = 0; i < 8; ++i)
		b[off + i] = (v >> (8 * i)) & 0xFF;
}
}  // namespace

TEST_CASE("nvme: RUH status parses nruhsd at offset 14 and 32-byte descriptors")
{
	std::vector<uint8_t> b(16 + 2 * 32, 0);
	put16(b, 14, 2);
	put16(b, 16 + 0, 0x0000);
	put16(b, 16 + 2, 0);
	put32(b, 16 + 4, 77);
	put64(b, 16 + 8, 256);
	put16(b, 48 + 0, 0x1005);  // rg 1, handle 5
	put16(b, 48 + 2, 5);
	put64(b, 48 + 8, 0x1234567890ull);
	auto r = parse_ruh_status(b);
	REQUIRE(r.ok());
	CHECK(r->nruhsd == 2);
	REQUIRE(r->descs.size() == 2);
	CHECK(r->descs[0].earutr == 77u);
	CHECK(r->descs[0].ruamw == 256u);
	CHECK(r->descs[1].pid == 0x1005);
	CHECK(r->descs[1].ruhid == 5);
	CHECK(r->descs[1].ruamw == 0x1234567890ull);
	auto n = parse_ruh_status_count(std::span<const uint8_t>(b.data(), 16));
	REQUIRE(n.ok());
	CHECK(*n == 2);
	CHECK(ruh_status_size(8) == 272u);
	CHECK(encode_ruh_status(r->descs) == b);
}

TEST_CASE("nvme: RUH status shorter than its header claims is an error")
{
	std::vector<uint8_t> b(16 + 32, 0);
	put16(b, 14, 2);
	auto r = parse_ruh_status(b);
	REQUIRE(!r.ok());
	CHECK(r.error().message().find("too short") != std::string::npos);
	CHECK(!parse_ruh_status_count(std::span<const uint8_t>(b.data(), 15)).ok());
}

TEST_CASE("nvme: FDP configurations walk descriptors by their own size")
{
	// Two configurations: the first with 2 vendor bytes (dsze 64 + 4*2 + 8), so a
	// sizeof-based walk would land in the wrong place.
	size_t d0 = 64 + 2 * 4 + 8, d1 = 64 + 3 * 4;
	std::vector<uint8_t> b(16 + d0 + d1, 0);
	put16(b, 0, 1);  // n = 1: two configurations (0-based)
	b[2] = 0;
	put32(b, 4, static_cast<uint32_t>(b.size()));
	size_t o = 16;
	put16(b, o, static_cast<uint16_t>(d0));
	b[o + 2] = 0x80 | 0x02;  // valid, rgif 2
	b[o + 3] = 8;
	put32(b, o + 4, 4);
	put16(b, o + 8, 2);
	put16(b, o + 10, 127);
	put32(b, o + 12, 1);
	put64(b, o + 16, 1u << 20);
	put32(b, o + 24, 3600);
	b[o + 64] = 1;
	b[o + 68] = 2;
	o += d0;
	put16(b, o, static_cast<uint16_t>(d1));
	b[o + 2] = 0x10;  // not valid, vwc
	put32(b, o + 4, 1);
	put16(b, o + 8, 3);
	put64(b, o + 16, 64ull << 20);
	b[o + 64] = 1;
	b[o + 68] = 1;
	b[o + 72] = 2;
	auto r = parse_fdp_configs(b);
	REQUIRE(r.ok());
	REQUIRE(r->configs.size() == 2);
	const auto &c0 = r->configs[0];
	CHECK(c0.valid);
	CHECK(!c0.vwc);
	CHECK(c0.rgif == 2);
	CHECK(c0.nrg == 4u);
	CHECK(c0.nruh == 2);
	CHECK(c0.maxpids == 127);
	CHECK(c0.nnss == 1u);
	CHECK(c0.runs == (1u << 20));
	CHECK(c0.erutl == 3600u);
	CHECK(c0.ruht == std::vector<uint8_t>{1, 2});
	const auto &c1 = r->configs[1];
	CHECK(!c1.valid);
	CHECK(c1.vwc);
	CHECK(c1.nruh == 3);
	CHECK(c1.runs == (64ull << 20));
	CHECK(c1.ruht == std::vector<uint8_t>{1, 1, 2});

	// Re-encoding drops the vendor bytes; parsing that gives the same configurations.
	auto again = parse_fdp_configs(encode_fdp_configs(*r));
	REQUIRE(again.ok());
	REQUIRE(again->configs.size() == 2);
	CHECK(again->configs[0].ruht == c0.ruht);
	CHECK(again->configs[1].runs == c1.runs);
	CHECK(again->configs[0].fdpa == c0.fdpa);
}

TEST_CASE("nvme: FDP configuration with a size past the log is rejected")
{
	std::vector<uint8_t> b(16 + 64, 0);
	put16(b, 16, 200);
	auto r = parse_fdp_configs(b);
	CHECK(!r.ok());
	std::vector<uint8_t> tiny(16 + 64, 0);
	put16(tiny, 16, 64);
	put16(tiny, 16 + 8, 4);  // 4 handles cannot fit in 64 bytes
	CHECK(!parse_fdp_configs(tiny).ok());
}

TEST_CASE("nvme: RUH usage lists one ruha per handle")
{
	std::vector<uint8_t> b(8 + 3 * 8, 0);
	put16(b, 0, 3);
	b[8] = 1;
	b[16] = 0;
	b[24] = 2;
	auto r = parse_ruh_usage(b);
	REQUIRE(r.ok());
	CHECK(*r == std::vector<uint8_t>{1, 0, 2});
	CHECK(encode_ruh_usage(*r) == b);
	b.resize(20);
	CHECK(!parse_ruh_usage(b).ok());
}

TEST_CASE("nvme: FDP statistics read 128-bit little-endian counters")
{
	std::vector<uint8_t> b(64, 0);
	put64(b, 0, 4096 * 10);  // hbmw
	put64(b, 16, 0xFFFFFFFFFFFFFFFFull);
	b[24] = 1;          // mbmw = 2^64 + 2^64 - 1
	b[32 + 15] = 0x80;  // mbe = 2^127
	auto r = parse_fdp_stats(b);
	REQUIRE(r.ok());
	CHECK(r->hbmw == 40960u);
	u128 want_mbmw = (u128{1} << 65) - 1;
	CHECK(r->mbmw == want_mbmw);
	CHECK(r->mbe == (u128{1} << 127));
	CHECK(to_double(r->mbe) == doctest::Approx(1.7014118346046923e38));
	CHECK(encode_fdp_stats(*r) == b);
	FdpStats a{1000, 1000, 0}, z{3000, 4000, 0};
	CHECK(waf(a, z) == doctest::Approx(1.5));
	CHECK(waf(z, z) == 0.0);
	CHECK(!parse_fdp_stats(std::span<const uint8_t>(b.data(), 40)).ok());
}

TEST_CASE("nvme: FDP events parse the counted 64-byte events")
{
	FdpEvent e{};
	e.type = kFdpEventInvalidPid;
	e.flags = kFdpEventFlagPiv | kFdpEventFlagNsidv;
	e.pid = 0x77;
	e.nsid = 1;
	e.rgid = 0;
	e.ruhid = 3;
	FdpEvent evs[2] = {e, e};
	evs[1].type = kFdpEventMediaReallocated;
	auto bytes = encode_fdp_events(evs);
	CHECK(bytes.size() == 4096u);
	CHECK(bytes[0] == 2);
	CHECK(bytes[64] == kFdpEventInvalidPid);
	CHECK(bytes[64 + 2] == 0x77);
	CHECK(bytes[64 + 12] == 1);  // nsid
	CHECK(bytes[64 + 34] == 3);  // ruhid
	auto r = parse_fdp_events(bytes);
	REQUIRE(r.ok());
	REQUIRE(r->size() == 2);
	CHECK((*r)[0].pid == 0x77);
	CHECK((*r)[1].type == kFdpEventMediaReallocated);
	CHECK(std::string(fdp_event_name((*r)[0].type)) == "invalid-pid");
	bytes[0] = 64;
	CHECK(!parse_fdp_events(bytes).ok());
}

TEST_CASE("nvme: identify controller reads MDTS, CTRATT bit 19, ONCS and VWC")
{
	std::vector<uint8_t> b(4096, 0);
	b[77] = 7;
	put32(b, 96, (1u << 19) | 0x10);
	put16(b, 520, 0x0C);
	b[525] = 1;
	auto r = parse_id_ctrl(b);
	REQUIRE(r.ok());
	CHECK(r->mdts == 7);
	CHECK(r->fdp_supported());
	CHECK(r->volatile_cache());
	CHECK((r->oncs & kOncsDsm) != 0);
	CHECK(r->max_transfer() == 512u * 1024);
	put32(b, 96, 0x10);
	CHECK(!parse_id_ctrl(b)->fdp_supported());
	b[77] = 0;
	CHECK(parse_id_ctrl(b)->max_transfer() == 0u);
}

TEST_CASE("nvme: identify namespace reads NSZE, FLBAS, the LBA format and ENDGID")
{
	std::vector<uint8_t> b(4096, 0);
	put64(b, 0, 262144);
	put64(b, 8, 262144);
	b[25] = 1;     // two formats
	b[26] = 0x01;  // format 1 in use
	put16(b, 102, 1);
	b[128 + 2] = 9;       // format 0: 512
	b[128 + 4 + 2] = 12;  // format 1: 4096
	auto r = parse_id_ns(b);
	REQUIRE(r.ok());
	CHECK(r->nsze == 262144u);
	CHECK(r->endgid == 1);
	CHECK(r->format_index() == 1);
	CHECK(r->lba_size() == 4096u);
	b[26] = 0x00;
	CHECK(parse_id_ns(b)->lba_size() == 512u);
	CHECK(!parse_id_ns(std::span<const uint8_t>(b.data(), 300)).ok());
}

TEST_CASE("nvme: get features FDP dword 0 gives enable bit and config index")
{
	CHECK(fdp_feature_enabled(0x0301));
	CHECK(fdp_feature_config_index(0x0301) == 3);
	CHECK(!fdp_feature_enabled(0x0300));
}
