// Every field the NVMe command builders write, checked against the spec's bit layout.
#include <doctest/doctest.h>

#include <cstring>

#include "nvme/commands.hpp"

using namespace kvfdp::nvme;

TEST_CASE("nvme: UringCmd matches struct nvme_uring_cmd")
{
	CHECK(sizeof(UringCmd) == 72);
	CHECK(offsetof(UringCmd, nsid) == 4);
	CHECK(offsetof(UringCmd, metadata) == 16);
	CHECK(offsetof(UringCmd, addr) == 24);
	CHECK(offsetof(UringCmd, data_len) == 36);
	CHECK(offsetof(UringCmd, cdw10) == 40);
	CHECK(offsetof(UringCmd, cdw15) == 60);
	CHECK(kUringCmdIo == 0xC0484E80u);
	CHECK(kUringCmdAdmin == 0xC0484E82u);
}

TEST_CASE("nvme: read packs slba into cdw10/11 and 0-based nlb into cdw12")
{
	alignas(4096) static uint8_t buf[8 * 4096];
	auto c = make_read(7, 0x1122334455667788ull, 8, buf, sizeof(buf));
	CHECK(c.opcode == kOpRead);
	CHECK(c.opcode == 0x02);
	CHECK(c.nsid == 7);
	CHECK(c.addr == reinterpret_cast<uintptr_t>(buf));
	CHECK(c.data_len == sizeof(buf));
	CHECK(c.cdw10 == 0x55667788u);
	CHECK(c.cdw11 == 0x11223344u);
	CHECK(c.cdw12 == 7u);  // nlb is 0-based
	CHECK(c.cdw13 == 0u);
	CHECK(c.cdw14 == 0u);
	CHECK(c.cdw15 == 0u);
}

TEST_CASE("nvme: read of 65536 blocks encodes NLB 0xFFFF")
{
	auto c = make_read(1, 0, 65536, nullptr, 0);
	CHECK(c.cdw12 == 0xFFFFu);
}

TEST_CASE("nvme: write without placement leaves DTYPE and DSPEC zero")
{
	uint8_t b[512];
	auto c = make_write(1, 100, 1, b, sizeof(b));
	CHECK(c.opcode == kOpWrite);
	CHECK(c.opcode == 0x01);
	CHECK(c.cdw10 == 100u);
	CHECK(c.cdw11 == 0u);
	CHECK(c.cdw12 == 0u);
	CHECK(((c.cdw12 >> 20) & 0xF) == 0u);
	CHECK(c.cdw13 == 0u);
}

TEST_CASE("nvme: write packs DTYPE=2 into cdw12 23:20 and DSPEC=PID into cdw13 31:16")
{
	uint8_t b[16 * 4096];
	auto c = make_write(1, 0x1000, 16, b, sizeof(b), uint16_t{0x0003});
	CHECK(c.cdw12 == 0x0020000Fu);
	CHECK((c.cdw12 & 0xFFFF) == 15u);
	CHECK(((c.cdw12 >> 20) & 0xF) == kDtypePlacement);
	CHECK(c.cdw13 == 0x00030000u);
	CHECK((c.cdw13 >> 16) == 3u);
	CHECK((c.cdw13 & 0xFFFF) == 0u);  // DSM attributes untouched

	auto hi = make_write(1, 0, 1, b, 4096, uint16_t{0xFFFF});
	CHECK(hi.cdw13 == 0xFFFF0000u);
	auto zero = make_write(1, 0, 1, b, 4096, uint16_t{0});
	CHECK(zero.cdw12 == 0x00200000u);  // placement with PID 0 still sets DTYPE
	CHECK(zero.cdw13 == 0u);
}

TEST_CASE("nvme: write FUA sets cdw12 bit 30 only")
{
	auto c = make_write(1, 0, 2, nullptr, 0, std::nullopt, true);
	CHECK(c.cdw12 == ((1u << 30) | 1u));
}

TEST_CASE("nvme: flush carries only opcode and nsid")
{
	auto c = make_flush(5);
	CHECK(c.opcode == 0x00);
	CHECK(c.nsid == 5);
	CHECK(c.addr == 0);
	CHECK(c.data_len == 0);
	CHECK(c.cdw10 == 0);
	CHECK(c.cdw12 == 0);
}

TEST_CASE("nvme: write zeroes uses 0-based nlb and DEAC bit 25")
{
	auto c = make_write_zeroes(1, 0x200000000ull, 256);
	CHECK(c.opcode == 0x08);
	CHECK(c.cdw10 == 0u);
	CHECK(c.cdw11 == 2u);
	CHECK(c.cdw12 == 255u);
	CHECK(c.data_len == 0u);
	auto d = make_write_zeroes(1, 0, 1, true);
	CHECK(d.cdw12 == (1u << 25));
}

TEST_CASE("nvme: DSM deallocate has 0-based range count, AD bit 2, 1-based range nlb")
{
	DsmRange r[3] = {make_dsm_range(0x10, 8), make_dsm_range(0x123456789ull, 1),
			 make_dsm_range(0, 65536)};
	CHECK(r[0].nlb == 8u);  // 1-based inside the range
	CHECK(r[0].slba == 0x10u);
	CHECK(r[0].cattr == 0u);
	auto c = make_dsm_deallocate(2, r, 3);
	CHECK(c.opcode == 0x09);
	CHECK(c.nsid == 2);
	CHECK(c.cdw10 == 2u);
	CHECK(c.cdw11 == 0x4u);
	CHECK(c.data_len == 48u);
	CHECK(c.addr == reinterpret_cast<uintptr_t>(r));
	uint8_t raw[16];
	std::memcpy(raw, &r[1], 16);
	const uint8_t want[16] = {0, 0, 0, 0, 1, 0, 0, 0, 0x89, 0x67, 0x45, 0x23, 0x01, 0, 0, 0};
	CHECK(std::memcmp(raw, want, 16) == 0);
	auto full = make_dsm_deallocate(1, r, 256);
	CHECK(full.cdw10 == 255u);
}

TEST_CASE("nvme: I/O management receive asks for RUH status with 0-based NUMD")
{
	uint8_t buf[16 + 8 * 32];
	auto c = make_io_mgmt_recv(1, buf, sizeof(buf));
	CHECK(c.opcode == 0x12);
	CHECK(c.nsid == 1);
	CHECK(c.cdw10 == 1u);  // MO = 1, MOS = 0
	CHECK(c.cdw11 == sizeof(buf) / 4 - 1);
	CHECK(c.cdw11 == 67u);
	CHECK(c.data_len == sizeof(buf));
	auto hdr = make_io_mgmt_recv(1, buf, 16);
	CHECK(hdr.cdw11 == 3u);
	auto mos = make_io_mgmt_recv(1, buf, 16, 0x1234);
	CHECK(mos.cdw10 == 0x12340001u);
}

TEST_CASE("nvme: I/O management send RUH update packs npids-1 into cdw10 31:16")
{
	uint16_t pids[3] = {1, 2, 5};
	auto c = make_io_mgmt_send(1, pids, 3);
	CHECK(c.opcode == 0x1D);
	CHECK(c.cdw10 == 0x00020001u);
	CHECK(c.data_len == 6u);
	CHECK(c.addr == reinterpret_cast<uintptr_t>(pids));
}

TEST_CASE("nvme: RUH update batches stay below QEMU's NPID limit of min(128, handles)")
{
	CHECK(ruh_update_batch(1) == 1u);
	CHECK(ruh_update_batch(2) == 1u);
	CHECK(ruh_update_batch(8) == 7u);
	CHECK(ruh_update_batch(128) == 127u);
	CHECK(ruh_update_batch(1000) == 127u);
}

TEST_CASE("nvme: get log page splits NUMD and puts LSI in cdw11 31:16")
{
	static uint8_t buf[4096];
	auto c = make_get_log_page(kLidFdpConfigs, buf, 4096, 0, 1);
	CHECK(c.opcode == 0x02);
	CHECK(c.nsid == 0u);
	CHECK(c.data_len == 4096u);
	CHECK((c.cdw10 & 0xFF) == 0x20u);
	CHECK((c.cdw10 >> 16) == 1023u);  // NUMDL, 0-based dwords
	CHECK(c.cdw11 == 0x00010000u);    // NUMDU 0, LSI 1
	CHECK(c.cdw12 == 0u);
	CHECK(c.cdw13 == 0u);

	// A transfer of 512 KiB + 4 needs NUMDU.
	auto big = make_get_log_page(0x23, nullptr, 0x80004, kLspFdpHostEvents, 0xABCD,
				     0x100000002ull);
	uint32_t numd = 0x80004 / 4 - 1;  // 0x20000
	CHECK((big.cdw10 >> 16) == (numd & 0xFFFF));
	CHECK((big.cdw11 & 0xFFFF) == (numd >> 16));
	CHECK((big.cdw11 & 0xFFFF) == 2u);
	CHECK((big.cdw11 >> 16) == 0xABCDu);
	CHECK(((big.cdw10 >> 8) & 0x7F) == 1u);  // LSP
	CHECK((big.cdw10 & (1u << 15)) == 0u);   // RAE clear
	CHECK(big.cdw12 == 2u);                  // LPOL
	CHECK(big.cdw13 == 1u);                  // LPOU
	auto rae = make_get_log_page(0x22, buf, 64, 0, 1, 0, 0, true);
	CHECK((rae.cdw10 & (1u << 15)) != 0u);
	CHECK((rae.cdw10 >> 16) == 15u);
}

TEST_CASE("nvme: get features 0x1D carries ENDGID in cdw11, 0x1E handle and NOET")
{
	auto f = make_get_features_fdp(1);
	CHECK(f.opcode == 0x0A);
	CHECK(f.cdw10 == 0x1Du);
	CHECK(f.cdw11 == 1u);
	CHECK(f.data_len == 0u);
	auto sel = make_get_features(kFidFdp, 3, nullptr, 0, 3);
	CHECK(sel.cdw10 == (0x1Du | (3u << 8)));
	CHECK(sel.cdw11 == 3u);
	uint8_t ev[2 * 6];
	auto e = make_get_features_fdp_events(2, 6, ev, 1);
	CHECK(e.cdw10 == 0x1Eu);
	CHECK(e.cdw11 == (2u | (6u << 16)));
	CHECK(e.data_len == 12u);
	CHECK(e.nsid == 1u);
}

TEST_CASE("nvme: identify puts CNS in cdw10 and transfers 4096 bytes")
{
	static uint8_t buf[4096];
	auto c = make_identify(kCnsController, 0, buf);
	CHECK(c.opcode == 0x06);
	CHECK(c.cdw10 == 1u);
	CHECK(c.nsid == 0u);
	CHECK(c.data_len == 4096u);
	auto n = make_identify(kCnsNamespace, 3, buf);
	CHECK(n.cdw10 == 0u);
	CHECK(n.nsid == 3u);
}
