// Parsers and encoders for RUH Status, the FDP log pages (0x20-0x23) and Identify replies.
// Parsers take the bytes a drive (or the model) returned and check every length before
// reading; encoders produce exactly those bytes (the model backend answers with them).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.hpp"
#include "nvme/fdp_stats.hpp"
#include "nvme/spec.hpp"
#include "nvme/u128.hpp"

namespace kvfdp::nvme {

// Reads a 128-bit little-endian counter (FDP statistics, SMART).
[[nodiscard]] u128 read_le128(const uint8_t *p);
// Writes v as 16 little-endian bytes.
void write_le128(uint8_t *p, u128 v);

// --- RUH Status (I/O Management Receive, MO 1) ----------------------------------------------
struct RuhStatus {
	uint16_t nruhsd = 0;               // as the header says
	std::vector<RuhStatusDesc> descs;  // in device order: position = kvfdp handle index
};
// Needs the header and all nruhsd descriptors; a shorter buffer is an error.
[[nodiscard]] Result<RuhStatus> parse_ruh_status(std::span<const uint8_t> buf);
// Only the header's nruhsd (after the 16-byte first read).
[[nodiscard]] Result<uint16_t> parse_ruh_status_count(std::span<const uint8_t> buf);
// Bytes of a reply with n descriptors: 16 + 32 n.
[[nodiscard]] constexpr size_t ruh_status_size(size_t n)
{
	return sizeof(RuhStatusHeader) + n * sizeof(RuhStatusDesc);
}
[[nodiscard]] std::vector<uint8_t> encode_ruh_status(std::span<const RuhStatusDesc> descs);

// --- Log 0x20: FDP configurations -----------------------------------------------------------
struct FdpConfig {
	uint8_t fdpa = 0;
	uint8_t rgif = 0;    // fdpa bits 3:0
	bool vwc = false;    // fdpa bit 4
	bool valid = false;  // fdpa bit 7
	uint32_t nrg = 0;
	uint16_t nruh = 0;
	uint16_t maxpids = 0;
	uint32_t nnss = 0;
	uint64_t runs = 0;  // bytes
	uint32_t erutl = 0;
	std::vector<uint8_t> ruht;  // one per handle (nruh entries)
};
struct FdpConfigs {
	uint8_t version = 0;
	std::vector<FdpConfig> configs;  // index = FDP configuration index
};
// Walks descriptors by their own dsze; rejects sizes that run past the buffer.
[[nodiscard]] Result<FdpConfigs> parse_fdp_configs(std::span<const uint8_t> buf);
// Encodes with dsze = 64 + 4 nruh (no vendor bytes); valid and rgif/vwc come from fdpa.
[[nodiscard]] std::vector<uint8_t> encode_fdp_configs(const FdpConfigs &cfgs);

// --- Log 0x21: RUH usage --------------------------------------------------------------------
// One ruha per handle (kRuhaUnused / kRuhaHostSpecified / kRuhaControllerSpecified).
[[nodiscard]] Result<std::vector<uint8_t>> parse_ruh_usage(std::span<const uint8_t> buf);
[[nodiscard]] std::vector<uint8_t> encode_ruh_usage(std::span<const uint8_t> ruha);

// --- Log 0x22: FDP statistics (FdpStats: nvme/fdp_stats.hpp) --------------------------------
[[nodiscard]] Result<FdpStats> parse_fdp_stats(std::span<const uint8_t> buf);
[[nodiscard]] std::vector<uint8_t> encode_fdp_stats(const FdpStats &stats);
// WAF between two samples: delta mbmw / delta hbmw; 0 when no host bytes were written.
[[nodiscard]] double waf(const FdpStats &before, const FdpStats &after);

// --- Log 0x23: FDP events -------------------------------------------------------------------
// The events the header counts (at most 63, each 64 bytes).
[[nodiscard]] Result<std::vector<FdpEvent>> parse_fdp_events(std::span<const uint8_t> buf);
// Header + events, padded to the full 4096-byte log.
[[nodiscard]] std::vector<uint8_t> encode_fdp_events(std::span<const FdpEvent> events);
// "ru-not-fully-written", "invalid-pid", ... or "unknown".
[[nodiscard]] const char *fdp_event_name(uint8_t type);
// The event's Timestamp (the Timestamp feature's format): its 48-bit millisecond count.
[[nodiscard]] uint64_t fdp_event_time(const FdpEvent &e);
void set_fdp_event_time(FdpEvent &e, uint64_t ms);
// Media Reallocated (kFdpEventMediaReallocated): its type-specific NLBAM, the number of LBAs
// the controller moved (bytes 2-3, little-endian; byte 0 flags, bytes 4-11 an LBA if LBAV).
[[nodiscard]] uint16_t fdp_event_nlbam(const FdpEvent &e);
void set_fdp_event_nlbam(FdpEvent &e, uint16_t nlbam);

// --- Identify -------------------------------------------------------------------------------
struct IdCtrl {
	uint8_t mdts = 0;
	uint32_t ctratt = 0;
	uint16_t oncs = 0;
	uint8_t vwc = 0;
	[[nodiscard]] bool fdp_supported() const { return (ctratt & kCtrattFdps) != 0; }
	[[nodiscard]] bool volatile_cache() const { return (vwc & 1) != 0; }
	// MDTS in bytes for a minimum page size of mps_min bytes; 0 = no limit.
	[[nodiscard]] uint64_t max_transfer(uint32_t mps_min = 4096) const
	{
		return mdts ? uint64_t{mps_min} << mdts : 0;
	}
};
[[nodiscard]] Result<IdCtrl> parse_id_ctrl(std::span<const uint8_t> buf);

struct IdNs {
	uint64_t nsze = 0;
	uint64_t ncap = 0;
	uint64_t nuse = 0;
	uint8_t nlbaf = 0;  // 0-based
	uint8_t flbas = 0;
	uint16_t endgid = 0;
	LbaFormat lbaf[64] = {};
	// Format in use: FLBAS bits 3:0, plus bits 6:5 as bits 5:4 when more than 16 formats.
	[[nodiscard]] uint8_t format_index() const
	{
		uint8_t idx = flbas & 0x0F;
		if (nlbaf >= 16)
			idx = static_cast<uint8_t>(idx | (((flbas >> 5) & 0x3) << 4));
		return idx;
	}
	[[nodiscard]] uint32_t lba_size() const
	{
		uint8_t ds = lbaf[format_index()].lbads;
		return ds >= 9 && ds < 32 ? 1u << ds : 0;
	}
};
[[nodiscard]] Result<IdNs> parse_id_ns(std::span<const uint8_t> buf);

// Get Features 0x1D (FDP) completion dword 0.
[[nodiscard]] constexpr bool fdp_feature_enabled(uint32_t dw0)
{
	return (dw0 & 1) != 0;
}
[[nodiscard]] constexpr uint8_t fdp_feature_config_index(uint32_t dw0)
{
	return static_cast<uint8_t>((dw0 >> 8) & 0xFF);
}

}  // namespace kvfdp::nvme
