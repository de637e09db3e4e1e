// NVMe on-wire structures and constants kvfdp uses (NVMe 2.0 base + NVM command set, TP4146
// FDP), each with a static_assert on its size. Little-endian host only (x86-64, arm64).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace kvfdp::nvme {

static_assert(std::endian::native == std::endian::little,
	      "kvfdp's NVMe structs are read in place: little-endian hosts only");

// --- Opcodes -------------------------------------------------------------------------------
// NVM command set I/O opcodes.
inline constexpr uint8_t kOpFlush = 0x00;
inline constexpr uint8_t kOpWrite = 0x01;
inline constexpr uint8_t kOpRead = 0x02;
inline constexpr uint8_t kOpWriteZeroes = 0x08;
inline constexpr uint8_t kOpDsm = 0x09;
inline constexpr uint8_t kOpIoMgmtRecv = 0x12;
inline constexpr uint8_t kOpIoMgmtSend = 0x1D;
// Admin opcodes.
inline constexpr uint8_t kAdminGetLogPage = 0x02;
inline constexpr uint8_t kAdminIdentify = 0x06;
inline constexpr uint8_t kAdminSetFeatures = 0x09;
inline constexpr uint8_t kAdminGetFeatures = 0x0A;

// Log page identifiers (Get Log Page CDW10 bits 7:0).
inline constexpr uint8_t kLidFdpConfigs = 0x20;
inline constexpr uint8_t kLidRuhUsage = 0x21;
inline constexpr uint8_t kLidFdpStats = 0x22;
inline constexpr uint8_t kLidFdpEvents = 0x23;
// FDP events log LSP bit 0: 1 = host events, 0 = controller events.
inline constexpr uint8_t kLspFdpHostEvents = 0x01;

// Feature identifiers.
inline constexpr uint8_t kFidFdp = 0x1D;        // CDW11 = ENDGID; DW0 bit 0 FDPE, 15:8 index
inline constexpr uint8_t kFidFdpEvents = 0x1E;  // CDW11 = PHNDL | NOET << 16

// Identify CNS values.
inline constexpr uint8_t kCnsNamespace = 0x00;
inline constexpr uint8_t kCnsController = 0x01;

// Write CDW12 DTYPE (bits 23:20) value for data placement; DSPEC (CDW13 31:16) = PID.
inline constexpr uint8_t kDtypePlacement = 2;
// I/O Management Receive/Send management operation: RUH Status / RUH Update.
inline constexpr uint8_t kMoRuhStatus = 1;
inline constexpr uint8_t kMoRuhUpdate = 1;
// DSM CDW11 attribute bit 2: deallocate.
inline constexpr uint32_t kDsmAttrDeallocate = 1u << 2;
// DSM carries at most 256 ranges (CDW10 NR is 8 bits, 0-based).
inline constexpr uint32_t kDsmMaxRanges = 256;
// Write Zeroes CDW12 bit 25: deallocate (DEAC).
inline constexpr uint32_t kWriteZeroesDeac = 1u << 25;
// Most blocks one Read, Write or Write Zeroes carries: CDW12 NLB is 16 bits, 0-based.
inline constexpr uint32_t kMaxNlb = 65536;
// Read/Write CDW12 bit 30: force unit access.
inline constexpr uint32_t kRwFua = 1u << 30;

// uring_cmd cmd_op values: _IOWR('N', 0x80 / 0x82, struct nvme_uring_cmd).
inline constexpr uint32_t kUringCmdIo = 0xC0484E80u;
inline constexpr uint32_t kUringCmdAdmin = 0xC0484E82u;

// --- Passthrough command --------------------------------------------------------------------
// The kernel's struct nvme_uring_cmd (linux/nvme_ioctl.h), 72 bytes; it also matches the
// layout of struct nvme_passthru_cmd64 up to timeout_ms, so it serves the ioctl path too.
// addr/data_len describe the data buffer; cdw2/3, metadata and PRPs are filled by the kernel.
struct UringCmd {
	uint8_t opcode = 0;
	uint8_t flags = 0;
	uint16_t rsvd1 = 0;
	uint32_t nsid = 0;
	uint32_t cdw2 = 0;
	uint32_t cdw3 = 0;
	uint64_t metadata = 0;
	uint64_t addr = 0;
	uint32_t metadata_len = 0;
	uint32_t data_len = 0;
	uint32_t cdw10 = 0;
	uint32_t cdw11 = 0;
	uint32_t cdw12 = 0;
	uint32_t cdw13 = 0;
	uint32_t cdw14 = 0;
	uint32_t cdw15 = 0;
	uint32_t timeout_ms = 0;
	uint32_t rsvd2 = 0;
};
static_assert(sizeof(UringCmd) == 72);
static_assert(offsetof(UringCmd, addr) == 24);
static_assert(offsetof(UringCmd, cdw10) == 40);
static_assert(offsetof(UringCmd, timeout_ms) == 64);

// --- Dataset Management ---------------------------------------------------------------------
// One DSM range (NVM cmd set Fig. "Dataset Management Range"): nlb is 1-based here.
struct DsmRange {
	uint32_t cattr = 0;
	uint32_t nlb = 0;
	uint64_t slba = 0;
};
static_assert(sizeof(DsmRange) == 16);

// --- I/O Management Receive: Reclaim Unit Handle Status (MO 1) ------------------------------
struct RuhStatusHeader {
	uint8_t rsvd0[14];
	uint16_t nruhsd;  // descriptors that follow (handles x reclaim groups)
};
static_assert(sizeof(RuhStatusHeader) == 16);

struct RuhStatusDesc {
	uint16_t pid;     // placement identifier: what goes into DSPEC, verbatim
	uint16_t ruhid;   // reclaim unit handle identifier
	uint32_t earutr;  // estimated active RU time remaining, seconds
	uint64_t ruamw;   // RU available media writes, in logical blocks
	uint8_t rsvd16[16];
};
static_assert(sizeof(RuhStatusDesc) == 32);

// --- Log 0x20: FDP configurations (endurance group scope, LSI = ENDGID) ----------------------
struct FdpConfigsHeader {
	uint16_t n;  // number of configurations, 0-based
	uint8_t version;
	uint8_t rsvd3;
	uint32_t size;  // whole log size in bytes
	uint8_t rsvd8[8];
};
static_assert(sizeof(FdpConfigsHeader) == 16);

// The fixed part of one configuration descriptor; dsze covers it, the nruh RuhDesc entries
// that follow, and vss vendor bytes. Walk descriptors by dsze, never by sizeof.
struct FdpConfigDescHeader {
	uint16_t dsze;     // descriptor size in bytes
	uint8_t fdpa;      // bits 3:0 RGIF, bit 4 FDP volatile write cache, bit 7 valid
	uint8_t vss;       // vendor specific size, bytes
	uint32_t nrg;      // reclaim groups
	uint16_t nruh;     // reclaim unit handles
	uint16_t maxpids;  // max placement identifiers per namespace (0-based)
	uint32_t nnss;     // namespaces supported
	uint64_t runs;     // reclaim unit nominal size, bytes
	uint32_t erutl;    // estimated RU time limit, seconds
	uint8_t rsvd28[36];
};
static_assert(sizeof(FdpConfigDescHeader) == 64);
static_assert(offsetof(FdpConfigDescHeader, runs) == 16);

inline constexpr uint8_t kFdpaRgifMask = 0x0F;
inline constexpr uint8_t kFdpaVwc = 1u << 4;
inline constexpr uint8_t kFdpaValid = 1u << 7;

// One reclaim unit handle descriptor in a configuration.
struct RuhDesc {
	uint8_t ruht;  // 1 = initially isolated, 2 = persistently isolated
	uint8_t rsvd1[3];
};
static_assert(sizeof(RuhDesc) == 4);

inline constexpr uint8_t kRuhtInitiallyIsolated = 1;
inline constexpr uint8_t kRuhtPersistentlyIsolated = 2;

// --- Log 0x21: reclaim unit handle usage -----------------------------------------------------
struct RuhUsageHeader {
	uint16_t nruh;
	uint8_t rsvd2[6];
};
static_assert(sizeof(RuhUsageHeader) == 8);

struct RuhUsageDesc {
	uint8_t ruha;  // 0 unused, bit 0 host specified, bit 1 controller specified
	uint8_t rsvd1[7];
};
static_assert(sizeof(RuhUsageDesc) == 8);

inline constexpr uint8_t kRuhaUnused = 0;
inline constexpr uint8_t kRuhaHostSpecified = 1;
inline constexpr uint8_t kRuhaControllerSpecified = 2;

// --- Log 0x22: FDP statistics ----------------------------------------------------------------
// Each counter is a 128-bit little-endian byte count. WAF = delta mbmw / delta hbmw.
struct FdpStatsLog {
	uint8_t hbmw[16];  // host bytes with metadata written
	uint8_t mbmw[16];  // media bytes with metadata written
	uint8_t mbe[16];   // media bytes erased
	uint8_t rsvd48[16];
};
static_assert(sizeof(FdpStatsLog) == 64);

// --- Log 0x23: FDP events --------------------------------------------------------------------
struct FdpEventsHeader {
	uint32_t nevents;  // valid events that follow (at most 63)
	uint8_t rsvd4[60];
};
static_assert(sizeof(FdpEventsHeader) == 64);

struct FdpEvent {
	uint8_t type;   // kFdpEvent*
	uint8_t flags;  // bit 0 PIV, bit 1 NSIDV, bit 2 LV (rgid/ruhid valid)
	uint16_t pid;
	uint8_t timestamp[8];  // 48-bit ms timestamp + attributes
	uint32_t nsid;
	uint8_t type_specific[16];
	uint16_t rgid;
	uint8_t ruhid;
	uint8_t rsvd35[5];
	uint8_t vs[24];
};
static_assert(sizeof(FdpEvent) == 64);
static_assert(offsetof(FdpEvent, nsid) == 12);
static_assert(offsetof(FdpEvent, rgid) == 32);

inline constexpr uint32_t kFdpEventsMax = 63;
inline constexpr uint8_t kFdpEventFlagPiv = 1u << 0;
inline constexpr uint8_t kFdpEventFlagNsidv = 1u << 1;
inline constexpr uint8_t kFdpEventFlagLv = 1u << 2;
// Host events.
inline constexpr uint8_t kFdpEventRuNotFullyWritten = 0x00;
inline constexpr uint8_t kFdpEventRuTimeLimitExceeded = 0x01;
inline constexpr uint8_t kFdpEventCtrlResetModifiedRuh = 0x02;
inline constexpr uint8_t kFdpEventInvalidPid = 0x03;
// Controller events.
inline constexpr uint8_t kFdpEventMediaReallocated = 0x80;
inline constexpr uint8_t kFdpEventImplicitlyModifiedRuh = 0x81;

// --- Identify (4096-byte replies); only the fields kvfdp reads -------------------------------
inline constexpr size_t kIdentifySize = 4096;
// Identify Controller byte offsets.
inline constexpr size_t kIdCtrlMdts = 77;    // u8, 2^n units of CAP.MPSMIN pages, 0 = none
inline constexpr size_t kIdCtrlCtratt = 96;  // le32; bit 19 = FDP supported
inline constexpr size_t kIdCtrlOncs = 520;   // le16; bit 2 DSM, bit 3 Write Zeroes
inline constexpr size_t kIdCtrlVwc = 525;    // u8; bit 0 volatile write cache present
inline constexpr uint32_t kCtrattFdps = 1u << 19;
inline constexpr uint16_t kOncsDsm = 1u << 2;
inline constexpr uint16_t kOncsWriteZeroes = 1u << 3;
// Identify Namespace byte offsets.
inline constexpr size_t kIdNsNsze = 0;      // le64, LBAs
inline constexpr size_t kIdNsNcap = 8;      // le64
inline constexpr size_t kIdNsNuse = 16;     // le64
inline constexpr size_t kIdNsNlbaf = 25;    // u8, 0-based count of LBA formats
inline constexpr size_t kIdNsFlbas = 26;    // u8; bits 3:0 format index low, 6:5 high
inline constexpr size_t kIdNsEndgid = 102;  // le16 endurance group
inline constexpr size_t kIdNsLbaf = 128;    // 64 x LbaFormat

// One LBA format entry of Identify Namespace.
struct LbaFormat {
	uint16_t ms;    // metadata bytes per LBA
	uint8_t lbads;  // log2 of the LBA data size
	uint8_t rp;     // bits 1:0 relative performance
};
static_assert(sizeof(LbaFormat) == 4);

}  // namespace kvfdp::nvme
