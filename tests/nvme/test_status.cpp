// NVMe result decoding: success, NVMe status fields and names, -errno.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include "nvme/status.hpp"

using namespace kvfdp::nvme;

TEST_CASE("nvme: results classify three ways")
{
	CHECK(classify_result(0) == ResultKind::success);
	CHECK(classify_result(0x4002) == ResultKind::nvme_status);
	CHECK(classify_result(-EINVAL) == ResultKind::os_error);
	CHECK(describe_result(0) == "success");
	CHECK(describe_result(-EINVAL).find("(-22)") != std::string::npos);
}

TEST_CASE("nvme: status splits into SC, SCT, CRD, More and DNR")
{
	NvmeStatus s{0x4002};
	CHECK(s.sc() == 0x02);
	CHECK(s.sct() == 0);
	CHECK(s.dnr());
	CHECK(!s.more());
	CHECK(s.crd() == 0);
	CHECK(s.code() == 0x002);

	NvmeStatus m{static_cast<uint16_t>((1u << 13) | (2u << 11) | (2u << 8) | 0x81)};
	CHECK(m.sc() == 0x81);
	CHECK(m.sct() == 2);
	CHECK(m.crd() == 2);
	CHECK(m.more());
	CHECK(!m.dnr());
	CHECK(std::string(status_name(m)) == "Unrecovered Read Error");
}

TEST_CASE("nvme: status names cover generic, FDP and command-specific codes")
{
	CHECK(std::string(status_name(NvmeStatus{0x4002})) == "Invalid Field in Command");
	CHECK(std::string(status_name(NvmeStatus{0x400F})) == "Data SGL Length Invalid");
	CHECK(std::string(status_name(NvmeStatus{0x4029})) == "FDP Disabled");
	CHECK(std::string(status_name(NvmeStatus{0x402A})) == "Invalid Placement Handle List");
	CHECK(std::string(status_name(NvmeStatus{0x0080})) == "LBA Out of Range");
	CHECK(std::string(status_name(NvmeStatus{0x4001})) == "Invalid Command Opcode");
	CHECK(std::string(status_name(NvmeStatus{0x0109})) == "Invalid Log Page");
	CHECK(std::string(status_name(NvmeStatus{0x00FE})) == "Unknown status");
}

TEST_CASE("nvme: describe_status prints value, name and flags")
{
	auto s = describe_status(NvmeStatus{0x4029});
	CHECK(s == "NVMe status 0x4029: FDP Disabled (SCT 0, SC 0x29, DNR)");
	auto c = describe_status(NvmeStatus{static_cast<uint16_t>((1u << 11) | 0x06)});
	CHECK(c == "NVMe status 0x0806: Internal Error (SCT 0, SC 0x06, CRD 1)");
}

TEST_CASE("nvme: result_error keeps the status in an nvme category")
{
	auto e = result_error(0x4002, "write");
	CHECK(e.code.category() == nvme_category());
	CHECK(e.code.value() == 0x4002);
	CHECK(e.message().find("Invalid Field in Command") != std::string::npos);
	auto o = result_error(-EACCES, "open");
	CHECK(o.code == std::errc::permission_denied);
}

TEST_CASE("nvme: a refused RUH Update says why, and that the handles stay open")
{
	auto opc = ruh_update_refusal(NvmeStatus{0x4001});
	CHECK(opc.find("does not implement I/O Management Send") != std::string::npos);
	CHECK(opc.find("keep their open reclaim units") != std::string::npos);
	CHECK(opc.find("0x4001") != std::string::npos);
	CHECK(ruh_update_refusal(NvmeStatus{0x4029}).find("FDP is disabled") != std::string::npos);
	CHECK(ruh_update_refusal(NvmeStatus{0x4002}).find("placement identifier") !=
	      std::string::npos);
	CHECK(ruh_update_refusal(NvmeStatus{0x402A}).find("placement handle list") !=
	      std::string::npos);
	CHECK(ruh_update_refusal(NvmeStatus{0x0281}).find("Unrecovered Read Error") !=
	      std::string::npos);
	CHECK(ruh_update_refusal(NvmeStatus{0x4002}).find('\n') == std::string::npos);
}
