// NVMe status names (NVMe 2.x base spec, Generic / Command Specific / Media status tables).
#include "nvme/status.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kvfdp::nvme {
namespace {

const char *generic_name(uint8_t sc)
{
	switch (sc) {
	case 0x00: return "Successful Completion";
	case 0x01: return "Invalid Command Opcode";
	case 0x02: return "Invalid Field in Command";
	case 0x03: return "Command ID Conflict";
	case 0x04: return "Data Transfer Error";
	case 0x05: return "Commands Aborted due to Power Loss Notification";
	case 0x06: return "Internal Error";
	case 0x07: return "Command Abort Requested";
	case 0x08: return "Command Aborted due to SQ Deletion";
	case 0x09: return "Command Aborted due to Failed Fused Command";
	case 0x0A: return "Command Aborted due to Missing Fused Command";
	case 0x0B: return "Invalid Namespace or Format";
	case 0x0C: return "Command Sequence Error";
	case 0x0D: return "Invalid SGL Segment Descriptor";
	case 0x0E: return "Invalid Number of SGL Descriptors";
	case 0x0F: return "Data SGL Length Invalid";
	case 0x10: return "Metadata SGL Length Invalid";
	case 0x11: return "SGL Descriptor Type Invalid";
	case 0x12: return "Invalid Use of Controller Memory Buffer";
	case 0x13: return "PRP Offset Invalid";
	case 0x14: return "Atomic Write Unit Exceeded";
	case 0x15: return "Operation Denied";
	case 0x16: return "SGL Offset Invalid";
	case 0x1D: return "Sanitize In Progress";
	case 0x20: return "Namespace is Write Protected";
	case 0x21: return "Command Interrupted";
	case 0x22: return "Transient Transport Error";
	case 0x29: return "FDP Disabled";
	case 0x2A: return "Invalid Placement Handle List";
	case 0x80: return "LBA Out of Range";
	case 0x81: return "Capacity Exceeded";
	case 0x82: return "Namespace Not Ready";
	case 0x83: return "Reservation Conflict";
	case 0x84: return "Format In Progress";
	default: return nullptr;
	}
}

const char *command_specific_name(uint8_t sc)
{
	switch (sc) {
	case 0x02: return "Invalid Queue Size";
	case 0x09: return "Invalid Log Page";
	case 0x0A: return "Invalid Format";
	case 0x0D: return "Feature Identifier Not Saveable";
	case 0x0E: return "Feature Not Changeable";
	case 0x0F: return "Feature Not Namespace Specific";
	case 0x80: return "Conflicting Attributes";
	case 0x81: return "Invalid Protection Information";
	case 0x82: return "Attempted Write to Read Only Range";
	case 0x83: return "Command Size Limit Exceeded";
	default: return nullptr;
	}
}

const char *media_name(uint8_t sc)
{
	switch (sc) {
	case 0x80: return "Write Fault";
	case 0x81: return "Unrecovered Read Error";
	case 0x82: return "End-to-end Guard Check Error";
	case 0x83: return "End-to-end Application Tag Check Error";
	case 0x84: return "End-to-end Reference Tag Check Error";
	case 0x85: return "Compare Failure";
	case 0x86: return "Access Denied";
	case 0x87: return "Deallocated or Unwritten Logical Block";
	default: return nullptr;
	}
}

class NvmeCategory final : public std::error_category {
public:
	const char *name() const noexcept override { return "nvme"; }
	std::string message(int value) const override
	{
		return describe_status(NvmeStatus{static_cast<uint16_t>(value)});
	}
};

}  // namespace

const char *status_name(NvmeStatus st)
{
	const char *n = nullptr;
	switch (st.sct()) {
	case kSctGeneric: n = generic_name(st.sc()); break;
	case kSctCommandSpecific: n = command_specific_name(st.sc()); break;
	case kSctMedia: n = media_name(st.sc()); break;
	case kSctPath: n = "Path Related Status"; break;
	case kSctVendor: n = "Vendor Specific"; break;
	default: break;
	}
	return n ? n : "Unknown status";
}

std::string describe_status(NvmeStatus st)
{
	char buf[160];
	std::snprintf(buf, sizeof(buf), "NVMe status 0x%04x: %s (SCT %u, SC 0x%02x%s%s)", st.raw,
		      status_name(st), st.sct(), st.sc(), st.dnr() ? ", DNR" : "",
		      st.more() ? ", More" : "");
	std::string s = buf;
	if (st.crd()) {
		s.pop_back();
		s += ", CRD " + std::to_string(st.crd()) + ")";
	}
	return s;
}

std::string describe_result(int res)
{
	switch (classify_result(res)) {
	case ResultKind::success: return "success";
	case ResultKind::nvme_status:
		return describe_status(NvmeStatus{static_cast<uint16_t>(res)});
	case ResultKind::os_error: break;
	}
	return std::string(std::strerror(-res)) + " (" + std::to_string(res) + ")";
}

std::string ruh_update_refusal(NvmeStatus st)
{
	std::string why;
	if (st.sct() == kSctGeneric) {
		switch (st.sc()) {
		case kScInvalidOpcode:
			why = "the drive does not implement I/O Management Send";
			break;
		case kScFdpDisabled:
			why = "FDP is disabled on the namespace's endurance group";
			break;
		case kScInvalidField:
			why = "the drive refused a placement identifier or the number of them";
			break;
		case kScInvalidPlacementHandleList:
			why = "the drive refused the placement handle list";
			break;
		default: break;
		}
	}
	if (why.empty())
		why = status_name(st);
	return "RUH Update refused (" + why +
	       "); the handles keep their open reclaim units: " + describe_status(st);
}

const std::error_category &nvme_category()
{
	static const NvmeCategory cat;
	return cat;
}

Error result_error(int res, std::string context)
{
	if (res > 0)
		return Error{std::error_code(res, nvme_category()), std::move(context)};
	return errno_error(res, std::move(context));
}

int result_to_errno(int res)
{
	if (res == 0)
		return 0;
	if (res < 0) {
		switch (-res) {
		case ENOSPC:
		case EOPNOTSUPP:
		case ENOLINK:
		case ENODATA:
		case EILSEQ:
		case EBADE:
		case EREMOTEIO:
		case ETIMEDOUT:
		case EIO: return res;
		default: return -EIO;
		}
	}
	const NvmeStatus st{static_cast<uint16_t>(res)};
	switch (st.sct()) {
	case kSctGeneric:
		switch (st.sc()) {
		case kScInvalidOpcode:
		case kScInvalidField:
		case kScInvalidNamespaceOrFormat: return -EOPNOTSUPP;
		case kScLbaOutOfRange: return -EREMOTEIO;
		case kScCapacityExceeded: return -ENOSPC;
		case kScReservationConflict: return -EBADE;
		}
		break;
	case kSctCommandSpecific:
		if (st.sc() == kScConflictingAttributes)
			return -EOPNOTSUPP;
		break;
	case kSctMedia:
		switch (st.sc()) {
		case kScWriteFault:
		case kScUnrecoveredReadError:
		case kScDeallocatedOrUnwritten: return -ENODATA;
		case kScGuardCheckError:
		case kScApplicationTagCheckError:
		case kScReferenceTagCheckError: return -EILSEQ;
		}
		break;
	case kSctPath: return -ENOLINK;
	}
	return -EIO;
}

}  // namespace kvfdp::nvme
