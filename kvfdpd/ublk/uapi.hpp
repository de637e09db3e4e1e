// ublk driver UAPI, our own copy: structs, ioctl-encoded UBLK_U_* commands and flags as the
// 6.12 driver speaks them, plus GET_FEATURES (6.5+), automatic buffer registration (6.16+) and
// 7.x's batch I/O commands, TRY_STOP_DEV and NO_AUTO_PART_SCAN (linux/ublk_cmd.h of 7.3).
// Bookworm's uapi header predates some of them, so kvfdp carries this one; every struct is
// static_asserted against the kernel's layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include <linux/ioctl.h>

namespace kvfdp::ublk {

// Shipped in sqe->cmd of a control uring_cmd on /dev/ublk-control.
struct CtrlCmd {
	uint32_t dev_id;    // target device, or UINT32_MAX with ADD_DEV for "pick one"
	uint16_t queue_id;  // UINT16_MAX when the command is not for a queue
	uint16_t len;       // bytes at addr
	uint64_t addr;      // user buffer (dev info, params)
	uint64_t data[1];   // inline argument (START_DEV / END_USER_RECOVERY: server pid)
	uint16_t dev_path_len;
	uint16_t pad;
	uint32_t reserved;
};
static_assert(sizeof(CtrlCmd) == 32, "ublksrv_ctrl_cmd");

struct CtrlDevInfo {
	uint16_t nr_hw_queues;
	uint16_t queue_depth;
	uint16_t state;  // kDevDead / kDevLive / kDevQuiesced
	uint16_t pad0;
	uint32_t max_io_buf_bytes;
	uint32_t dev_id;
	int32_t ublksrv_pid;
	uint32_t pad1;
	uint64_t flags;
	uint64_t ublksrv_flags;  // for the server; the driver keeps it verbatim
	uint32_t owner_uid;
	uint32_t owner_gid;
	uint64_t reserved1;
	uint64_t reserved2;
};
static_assert(sizeof(CtrlDevInfo) == 64, "ublksrv_ctrl_dev_info");
static_assert(offsetof(CtrlDevInfo, flags) == 24, "ublksrv_ctrl_dev_info.flags");

struct ParamBasic {
	uint32_t attrs;  // kAttr*
	uint8_t logical_bs_shift;
	uint8_t physical_bs_shift;
	uint8_t io_opt_shift;
	uint8_t io_min_shift;
	uint32_t max_sectors;  // must not exceed max_io_buf_bytes >> 9
	uint32_t chunk_sectors;
	uint64_t dev_sectors;
	uint64_t virt_boundary_mask;
};
static_assert(sizeof(ParamBasic) == 32, "ublk_param_basic");

struct ParamDiscard {
	uint32_t discard_alignment;
	uint32_t discard_granularity;
	uint32_t max_discard_sectors;
	uint32_t max_write_zeroes_sectors;
	uint16_t max_discard_segments;
	uint16_t reserved0;
};
static_assert(sizeof(ParamDiscard) == 20, "ublk_param_discard");

// Filled by the driver (GET_PARAMS); never set its type bit in SET_PARAMS.
struct ParamDevt {
	uint32_t char_major;
	uint32_t char_minor;
	uint32_t disk_major;
	uint32_t disk_minor;
};
static_assert(sizeof(ParamDevt) == 16, "ublk_param_devt");

struct ParamZoned {
	uint32_t max_open_zones;
	uint32_t max_active_zones;
	uint32_t max_zone_append_sectors;
	uint8_t reserved[20];
};
static_assert(sizeof(ParamZoned) == 32, "ublk_param_zoned");

struct Params {
	uint32_t len;    // bytes of this struct the driver reads
	uint32_t types;  // kParamType*
	ParamBasic basic;
	ParamDiscard discard;
	ParamDevt devt;
	ParamZoned zoned;
};
static_assert(offsetof(Params, basic) == 8 && offsetof(Params, discard) == 40 &&
		      offsetof(Params, devt) == 60 && offsetof(Params, zoned) == 76,
	      "ublk_params layout");
static_assert(sizeof(Params) == 112, "ublk_params");

// One per tag, in the read-only array mmapped from /dev/ublkcN at kCmdBufOffset.
struct IoDesc {
	uint32_t op_flags;  // op in bits 7:0, kIoF* flags above
	union {
		uint32_t nr_sectors;
		uint32_t nr_zones;
	};
	uint64_t start_sector;
	uint64_t addr;  // server buffer (as given in FETCH / COMMIT)
};
static_assert(sizeof(IoDesc) == 24, "ublksrv_io_desc");

// Shipped in sqe->cmd of FETCH_REQ / COMMIT_AND_FETCH_REQ on /dev/ublkcN.
struct IoCmd {
	uint16_t q_id;
	uint16_t tag;
	int32_t result;  // COMMIT: bytes done (read/write), 0, or -errno
	uint64_t addr;   // this tag's data buffer
};
static_assert(sizeof(IoCmd) == 16, "ublksrv_io_cmd");

inline constexpr unsigned kCmdGetDevInfo = 0x02;
inline constexpr unsigned kCmdAddDev = 0x04;
inline constexpr unsigned kCmdDelDev = 0x05;
inline constexpr unsigned kCmdStartDev = 0x06;
inline constexpr unsigned kCmdStopDev = 0x07;
inline constexpr unsigned kCmdSetParams = 0x08;
inline constexpr unsigned kCmdGetParams = 0x09;
inline constexpr unsigned kCmdStartUserRecovery = 0x10;
inline constexpr unsigned kCmdEndUserRecovery = 0x11;
inline constexpr unsigned kCmdGetFeatures = 0x13;
inline constexpr unsigned kCmdTryStopDev = 0x17;
inline constexpr unsigned kIoFetchReq = 0x20;
inline constexpr unsigned kIoCommitAndFetchReq = 0x21;
inline constexpr unsigned kIoRegisterIoBuf = 0x23;
inline constexpr unsigned kIoUnregisterIoBuf = 0x24;

// The ioctl-encoded command numbers (what sqe->cmd_op carries).
inline constexpr uint32_t kUCmdGetDevInfo = _IOR('u', kCmdGetDevInfo, CtrlCmd);
inline constexpr uint32_t kUCmdAddDev = _IOWR('u', kCmdAddDev, CtrlCmd);
inline constexpr uint32_t kUCmdDelDev = _IOWR('u', kCmdDelDev, CtrlCmd);
inline constexpr uint32_t kUCmdStartDev = _IOWR('u', kCmdStartDev, CtrlCmd);
inline constexpr uint32_t kUCmdStopDev = _IOWR('u', kCmdStopDev, CtrlCmd);
inline constexpr uint32_t kUCmdSetParams = _IOWR('u', kCmdSetParams, CtrlCmd);
inline constexpr uint32_t kUCmdGetParams = _IOR('u', kCmdGetParams, CtrlCmd);
inline constexpr uint32_t kUCmdStartUserRecovery = _IOWR('u', kCmdStartUserRecovery, CtrlCmd);
inline constexpr uint32_t kUCmdEndUserRecovery = _IOWR('u', kCmdEndUserRecovery, CtrlCmd);
inline constexpr uint32_t kUCmdGetFeatures = _IOR('u', kCmdGetFeatures, CtrlCmd);
// With kFlagSafeStopDev: STOP_DEV only while the disk has no opener, else -EBUSY (7.x).
inline constexpr uint32_t kUCmdTryStopDev = _IOWR('u', kCmdTryStopDev, CtrlCmd);
inline constexpr uint32_t kUIoFetchReq = _IOWR('u', kIoFetchReq, IoCmd);
inline constexpr uint32_t kUIoCommitAndFetchReq = _IOWR('u', kIoCommitAndFetchReq, IoCmd);
// With kFlagSupportZeroCopy: register the pages of (q_id, tag)'s request as the ring's fixed
// buffer IoCmd.addr, and unregister it (the request completes once its commit is in and every
// registration is gone). Issued by the queue's own thread, between FETCH and COMMIT.
inline constexpr uint32_t kUIoRegisterIoBuf = _IOWR('u', kIoRegisterIoBuf, IoCmd);
inline constexpr uint32_t kUIoUnregisterIoBuf = _IOWR('u', kIoUnregisterIoBuf, IoCmd);
static_assert(kUCmdAddDev == 0xc0207504u, "UBLK_U_CMD_ADD_DEV");
static_assert(kUIoFetchReq == 0xc0107520u, "UBLK_U_IO_FETCH_REQ");
static_assert(kUCmdGetFeatures == 0x80207513u, "UBLK_U_CMD_GET_FEATURES");
static_assert(kUIoRegisterIoBuf == 0xc0107523u, "UBLK_U_IO_REGISTER_IO_BUF");
static_assert(kUCmdTryStopDev == 0xc0207517u, "UBLK_U_CMD_TRY_STOP_DEV");

// Device feature flags (ublksrv_ctrl_dev_info.flags; GET_FEATURES reports those the driver has).
// kFlagSupportZeroCopy: the server registers request buffers itself (REGISTER_IO_BUF, 6.15+; 6.12's
// GET_FEATURES lists it but ADD_DEV clears it). kFlagAutoBufReg: the driver registers each read or
// write request's pages in the server's ring before handing the request over (6.16+).
inline constexpr uint64_t kFlagSupportZeroCopy = 1ull << 0;
inline constexpr uint64_t kFlagUringCmdCompInTask = 1ull << 1;
inline constexpr uint64_t kFlagUserRecovery = 1ull << 3;
inline constexpr uint64_t kFlagUserRecoveryReissue = 1ull << 4;
inline constexpr uint64_t kFlagCmdIoctlEncode = 1ull << 6;
inline constexpr uint64_t kFlagAutoBufReg = 1ull << 11;
// 7.x: the queue talks in per-queue batches (PREP/COMMIT/FETCH_IO_CMDS below); FETCH_REQ and
// COMMIT_AND_FETCH_REQ are refused on such a device.
inline constexpr uint64_t kFlagBatchIo = 1ull << 15;
// 7.x: TRY_STOP_DEV is offered (a stop that fails with -EBUSY while the disk is open).
inline constexpr uint64_t kFlagSafeStopDev = 1ull << 17;
// 7.x: START_DEV does not scan the disk for partitions (no reads at start).
inline constexpr uint64_t kFlagNoAutoPartScan = 1ull << 18;

// Device states (ublksrv_ctrl_dev_info.state).
inline constexpr uint16_t kDevDead = 0;
inline constexpr uint16_t kDevLive = 1;
inline constexpr uint16_t kDevQuiesced = 2;

inline constexpr uint32_t kParamTypeBasic = 1u << 0;
inline constexpr uint32_t kParamTypeDiscard = 1u << 1;
inline constexpr uint32_t kParamTypeDevt = 1u << 2;

inline constexpr uint32_t kAttrReadOnly = 1u << 0;
inline constexpr uint32_t kAttrRotational = 1u << 1;
inline constexpr uint32_t kAttrVolatileCache = 1u << 2;
inline constexpr uint32_t kAttrFua = 1u << 3;

// ublksrv_io_desc ops (op_flags & 0xff).
inline constexpr uint8_t kOpRead = 0;
inline constexpr uint8_t kOpWrite = 1;
inline constexpr uint8_t kOpFlush = 2;
inline constexpr uint8_t kOpDiscard = 3;
inline constexpr uint8_t kOpWriteSame = 4;
inline constexpr uint8_t kOpWriteZeroes = 5;
inline constexpr uint32_t kIoFFua = 1u << 13;

// With kFlagAutoBufReg, FETCH_REQ and COMMIT_AND_FETCH_REQ carry this in sqe->addr (not in the
// IoCmd): the slot of the ring's sparse buffer table at which the driver registers the next
// request's pages (it unregisters them when that request is committed). flags 0: a failed
// registration fails the request with an I/O error (no UBLK_AUTO_BUF_REG_FALLBACK); the
// reserved fields must be 0.
struct AutoBufReg {
	uint16_t index;
	uint8_t flags;
	uint8_t reserved0;
	uint32_t reserved1;
};
static_assert(sizeof(AutoBufReg) == 8, "ublk_auto_buf_reg");

// The sqe->addr value of an AutoBufReg for slot index (index in bits 15:0, flags 23:16).
[[nodiscard]] inline constexpr uint64_t auto_buf_reg_addr(uint16_t index)
{
	return index;
}

// Batch I/O (kFlagBatchIo), shipped in sqe->cmd of PREP_IO_CMDS / COMMIT_IO_CMDS /
// FETCH_IO_CMDS. PREP and COMMIT carry nr_elem elements of elem_bytes each at sqe->addr;
// FETCH is multishot (kUringCmdMultishot, a provided-buffer group in sqe->buf_group) and
// each of its completions fills one provided buffer with res / 2 u16 tags.
struct BatchIo {
	uint16_t q_id;
	uint16_t flags;    // kBatchF*
	uint16_t nr_elem;  // at most the queue depth
	uint8_t elem_bytes;  // sizeof(BatchElem) with kBatchFHasBufAddr, else sizeof(BatchElemHeader); FETCH: 2
	uint8_t reserved;
	uint64_t reserved2;
};
static_assert(sizeof(BatchIo) == 16, "ublk_batch_io");

// One element of PREP / COMMIT: the tag, its auto-registration slot (kFlagAutoBufReg) and the
// commit's result.
struct BatchElemHeader {
	uint16_t tag;
	uint16_t buf_index;
	int32_t result;
};
static_assert(sizeof(BatchElemHeader) == 8, "ublk_elem_header");

// With kBatchFHasBufAddr (copy mode): the header and the tag's buffer, in that order.
struct BatchElem {
	BatchElemHeader header;
	uint64_t buf_addr;
};
static_assert(sizeof(BatchElem) == 16 && offsetof(BatchElem, buf_addr) == 8,
	      "ublk batch element with buf_addr");

inline constexpr uint16_t kBatchFHasBufAddr = 1u << 1;

inline constexpr unsigned kIoPrepIoCmds = 0x25;
inline constexpr unsigned kIoCommitIoCmds = 0x26;
inline constexpr unsigned kIoFetchIoCmds = 0x27;
// PREP: 0 or -errno (nothing prepared). COMMIT: bytes of elements committed, or -errno (none).
inline constexpr uint32_t kUIoPrepIoCmds = _IOWR('u', kIoPrepIoCmds, BatchIo);
inline constexpr uint32_t kUIoCommitIoCmds = _IOWR('u', kIoCommitIoCmds, BatchIo);
inline constexpr uint32_t kUIoFetchIoCmds = _IOWR('u', kIoFetchIoCmds, BatchIo);
static_assert(kUIoPrepIoCmds == 0xc0107525u, "UBLK_U_IO_PREP_IO_CMDS");
static_assert(kUIoFetchIoCmds == 0xc0107527u, "UBLK_U_IO_FETCH_IO_CMDS");

// sqe->uring_cmd_flags: a multishot uring_cmd (bookworm's io_uring.h predates it).
inline constexpr uint32_t kUringCmdMultishot = 1u << 1;

// FETCH / COMMIT completion results.
inline constexpr int kIoResOk = 0;
// -ENODEV: the device is going away; the tag is not re-fetched.

inline constexpr uint64_t kCmdBufOffset = 0;  // mmap offset of the IoDesc array
inline constexpr unsigned kMaxQueueDepth = 4096;
inline constexpr unsigned kMaxQueues = 4096;

// Bytes of the IoDesc array of one queue, rounded to pages as the driver maps it.
[[nodiscard]] inline constexpr size_t io_desc_bytes(unsigned depth, size_t page = 4096)
{
	return (depth * sizeof(IoDesc) + page - 1) / page * page;
}

}  // namespace kvfdp::ublk
