// Pure NVMe command builders: each fills a UringCmd (the 64-byte command plus the data
// pointer and length) and knows nothing about the transport. No syscalls, no allocation.
// Counts passed in are 1-based; the builders write the 0-based encodings the spec wants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "nvme/spec.hpp"

namespace kvfdp::nvme {

namespace detail {
inline uint64_t addr_of(const void *p)
{
	return reinterpret_cast<uintptr_t>(p);
}
inline void set_slba(UringCmd &c, uint64_t slba)
{
	c.cdw10 = static_cast<uint32_t>(slba);
	c.cdw11 = static_cast<uint32_t>(slba >> 32);
}
// nlb is 1-based, 1..kMaxNlb; NLB in CDW12 bits 15:0 is 0-based.
constexpr uint32_t nlb0(uint32_t nlb)
{
	return (nlb - 1) & 0xFFFFu;
}
}  // namespace detail

// Read nlb (1..kMaxNlb) blocks at slba into buf (data_len bytes = nlb * LBA size).
inline UringCmd make_read(uint32_t nsid, uint64_t slba, uint32_t nlb, void *buf, uint32_t data_len)
{
	UringCmd c{};
	c.opcode = kOpRead;
	c.nsid = nsid;
	c.addr = detail::addr_of(buf);
	c.data_len = data_len;
	detail::set_slba(c, slba);
	c.cdw12 = detail::nlb0(nlb);
	return c;
}

// Write nlb (1..kMaxNlb) blocks at slba from buf. With pid: DTYPE = 2 (data placement) in
// CDW12 bits 23:20 and DSPEC = pid in CDW13 bits 31:16. pid must come verbatim from RUH
// Status: the drive may silently place an unknown PID on handle 0.
inline UringCmd make_write(uint32_t nsid, uint64_t slba, uint32_t nlb, const void *buf,
			   uint32_t data_len, std::optional<uint16_t> pid = std::nullopt,
			   bool fua = false)
{
	UringCmd c{};
	c.opcode = kOpWrite;
	c.nsid = nsid;
	c.addr = detail::addr_of(buf);
	c.data_len = data_len;
	detail::set_slba(c, slba);
	c.cdw12 = detail::nlb0(nlb) | (fua ? kRwFua : 0);
	if (pid) {
		c.cdw12 |= uint32_t{kDtypePlacement} << 20;
		c.cdw13 = uint32_t{*pid} << 16;
	}
	return c;
}

// Flush the volatile write cache of namespace nsid.
inline UringCmd make_flush(uint32_t nsid)
{
	UringCmd c{};
	c.opcode = kOpFlush;
	c.nsid = nsid;
	return c;
}

// Write Zeroes over nlb (1..kMaxNlb) blocks; deac asks the drive to deallocate them too.
inline UringCmd make_write_zeroes(uint32_t nsid, uint64_t slba, uint32_t nlb, bool deac = false)
{
	UringCmd c{};
	c.opcode = kOpWriteZeroes;
	c.nsid = nsid;
	detail::set_slba(c, slba);
	c.cdw12 = detail::nlb0(nlb) | (deac ? kWriteZeroesDeac : 0);
	return c;
}

// Fill a DSM range: nlb is 1-based in the range itself (unlike the I/O commands).
inline DsmRange make_dsm_range(uint64_t slba, uint32_t nlb)
{
	DsmRange r{};
	r.slba = slba;
	r.nlb = nlb;
	return r;
}

// Dataset Management with the deallocate attribute over nranges (1..256) ranges at
// ranges: CDW10 NR is 0-based, CDW11 bit 2 = AD. The ranges must stay valid until completion.
inline UringCmd make_dsm_deallocate(uint32_t nsid, const DsmRange *ranges, uint32_t nranges)
{
	UringCmd c{};
	c.opcode = kOpDsm;
	c.nsid = nsid;
	c.addr = detail::addr_of(ranges);
	c.data_len = nranges * static_cast<uint32_t>(sizeof(DsmRange));
	c.cdw10 = (nranges - 1) & 0xFFu;
	c.cdw11 = kDsmAttrDeallocate;
	return c;
}

// I/O Management Receive, RUH Status (MO 1): CDW10 = MO | MOS << 16, CDW11 = NUMD
// (0-based dwords). len must be a multiple of 4 and, on QEMU, exactly the reply size
// (16 + 32 nruhsd): a longer buffer is rejected with 0x400F.
inline UringCmd make_io_mgmt_recv(uint32_t nsid, void *buf, uint32_t len, uint16_t mos = 0)
{
	UringCmd c{};
	c.opcode = kOpIoMgmtRecv;
	c.nsid = nsid;
	c.addr = detail::addr_of(buf);
	c.data_len = len;
	c.cdw10 = kMoRuhStatus | uint32_t{mos} << 16;
	c.cdw11 = len / 4 - 1;
	return c;
}

// I/O Management Send, RUH Update: npids (>= 1) le16 PIDs at pids; CDW10 = MO 1 |
// (npids - 1) << 16.
inline UringCmd make_io_mgmt_send(uint32_t nsid, const uint16_t *pids, uint16_t npids)
{
	UringCmd c{};
	c.opcode = kOpIoMgmtSend;
	c.nsid = nsid;
	c.addr = detail::addr_of(pids);
	c.data_len = uint32_t{npids} * 2;
	c.cdw10 = kMoRuhUpdate | (uint32_t{npids} - 1) << 16;
	return c;
}

// PIDs per RUH Update command for a namespace of nhandles placement handles:
// min(127, nhandles - 1), at least 1. QEMU refuses NPID >= min(128, nrg x nruh).
constexpr size_t ruh_update_batch(size_t nhandles)
{
	return nhandles <= 2 ? 1 : nhandles - 1 < 127 ? nhandles - 1 : 127;
}

// Get Log Page: len bytes (a multiple of 4, >= 4) of log lid from byte offset.
// CDW10 = LID | LSP << 8 | RAE << 15 | NUMDL << 16; CDW11 = NUMDU | LSI << 16;
// CDW12/13 = offset. NUMD is the 0-based dword count split across CDW10/11. FDP logs are
// endurance-group scoped: lsi = ENDGID, nsid 0.
inline UringCmd make_get_log_page(uint8_t lid, void *buf, uint32_t len, uint8_t lsp = 0,
				  uint16_t lsi = 0, uint64_t offset = 0, uint32_t nsid = 0,
				  bool rae = false)
{
	uint32_t numd = len / 4 - 1;
	UringCmd c{};
	c.opcode = kAdminGetLogPage;
	c.nsid = nsid;
	c.addr = detail::addr_of(buf);
	c.data_len = len;
	c.cdw10 = uint32_t{lid} | uint32_t{lsp & 0x7Fu} << 8 | (rae ? 1u << 15 : 0) |
		  (numd & 0xFFFFu) << 16;
	c.cdw11 = (numd >> 16) | uint32_t{lsi} << 16;
	c.cdw12 = static_cast<uint32_t>(offset);
	c.cdw13 = static_cast<uint32_t>(offset >> 32);
	return c;
}

// Get Features fid with its CDW11 (0x1D FDP: ENDGID; 0x1E FDP events: PHNDL | NOET << 16
// with a NOET x 2-byte buffer). sel: 0 current, 1 default, 2 saved, 3 capabilities.
inline UringCmd make_get_features(uint8_t fid, uint32_t cdw11, void *buf = nullptr,
				  uint32_t len = 0, uint8_t sel = 0, uint32_t nsid = 0)
{
	UringCmd c{};
	c.opcode = kAdminGetFeatures;
	c.nsid = nsid;
	c.addr = detail::addr_of(buf);
	c.data_len = len;
	c.cdw10 = uint32_t{fid} | uint32_t{sel & 0x7u} << 8;
	c.cdw11 = cdw11;
	return c;
}

// Get Features 0x1D (FDP) for endurance group endgid; the answer is in completion DW0.
inline UringCmd make_get_features_fdp(uint16_t endgid)
{
	return make_get_features(kFidFdp, endgid);
}

// Get Features 0x1E (FDP events) for placement handle phndl, noet event types into buf
// (2 bytes each: type, attributes bit 0 = enabled).
inline UringCmd make_get_features_fdp_events(uint16_t phndl, uint8_t noet, void *buf, uint32_t nsid)
{
	return make_get_features(kFidFdpEvents, uint32_t{phndl} | uint32_t{noet} << 16, buf,
				 uint32_t{noet} * 2, 0, nsid);
}

// Identify: CNS 1 (controller, nsid 0) or CNS 0 (namespace nsid) into a 4096-byte buf.
inline UringCmd make_identify(uint8_t cns, uint32_t nsid, void *buf)
{
	UringCmd c{};
	c.opcode = kAdminIdentify;
	c.nsid = nsid;
	c.addr = detail::addr_of(buf);
	c.data_len = kIdentifySize;
	c.cdw10 = cns;
	return c;
}

}  // namespace kvfdp::nvme
