// A striped kvfdpd's control replies and metrics per member (kvfdpd/daemon/ctl/member_view.hpp),
// on a State over a stripe of two FDP SSD models: status lists the members and the stripe size,
// ruh each member's own RUH Status with kvfdpd's bytes per member and handle, stats each
// member's counters and WAF beside the totals, metrics a member label. A single namespace's
// replies and metrics carry no member view.
#include <doctest/doctest.h>

#include <liburing.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/temp_files.hpp"
#include "kvfdpd/daemon/ctl/backend.hpp"
#include "kvfdpd/daemon/ctl/control_handlers.hpp"
#include "kvfdpd/daemon/ctl/daemon_metrics.hpp"
#include "kvfdpd/daemon/ctl/daemon_state.hpp"
#include "kvfdpd/daemon/ctl/member_view.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using nlohmann::json;

namespace {

// s over dev as kvfdpd starts on it: its info, RUH Status at start and the default policy.
void init_state(State &s, std::unique_ptr<nvme::Device> dev)
{
	s.device = std::move(dev);
	s.info = s.device->info();
	auto hs = s.device->handles();
	REQUIRE(hs.ok());
	s.handles = *hs;
	s.nruh = static_cast<uint16_t>(hs->size());
	auto p = kvfdp::placement::make_policy(kvfdp::placement::PolicyConfig{}, s.nruh);
	REQUIRE(p.ok());
	s.policy = std::make_shared<const kvfdp::placement::Policy>(std::move(*p));
}

void init_state(State &s, BackendOptions b)
{
	auto dev = open_backend(b);
	REQUIRE_MESSAGE(dev.ok(), dev.error().message());
	init_state(s, std::move(*dev));
}

json ask(State &s, const char *cmd)
{
	json r = json::parse(handle_control_line(s, std::string("{\"cmd\":\"") + cmd + "\"}"),
			     nullptr, false);
	REQUIRE(!r.is_discarded());
	REQUIRE_MESSAGE(r.value("ok", false), r.dump());
	return r["data"];
}

// Writes nlb LBAs with handle h to member m through the stripe's own queue (member LBAs).
void write_member(nvme::Device &dev, uint8_t m, uint16_t h, uint64_t slba, uint32_t nlb)
{
	io_uring ring{};
	REQUIRE(io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32) == 0);
	auto q = dev.open_queue(ring);
	REQUIRE(q.ok());
	std::vector<uint8_t> buf(size_t{nlb} * 4096, 0x5a);
	nvme::IoRequest r;
	r.op = nvme::IoOp::write;
	r.member = m;
	r.handle = h;
	r.slba = slba;
	r.nlb = nlb;
	r.buf = buf.data();
	r.user_data = 7;
	nvme::Prep p = (*q)->prep(ring, r);
	if (p.queued) {
		REQUIRE(io_uring_submit(&ring) == 1);
		io_uring_cqe *cqe = nullptr;
		REQUIRE(io_uring_wait_cqe(&ring, &cqe) == 0);
		CHECK((*q)->complete(*cqe) == 0);
		io_uring_cqe_seen(&ring, cqe);
	} else {
		CHECK(p.result == 0);
	}
	io_uring_queue_exit(&ring);
}

// A member that counts its RUH Status reads and reports its PIDs moved by pid_offset (each
// member of a stripe has its own PIDs, which need not be alike at a handle index).
class CountingMember final : public nvme::Device {
public:
	CountingMember(std::unique_ptr<nvme::Device> d, uint16_t pid_offset)
	    : d_(std::move(d)), pid_offset_(pid_offset)
	{
	}
	const nvme::DeviceInfo &info() const override { return d_->info(); }
	Result<std::vector<nvme::Handle>> handles() override
	{
		reads++;
		auto hs = d_->handles();
		if (hs)
			for (nvme::Handle &h : *hs)
				h.pid = static_cast<uint16_t>(h.pid + pid_offset_);
		return hs;
	}
	Result<std::vector<uint8_t>> log_page(uint8_t lid, uint8_t lsp) override
	{
		return d_->log_page(lid, lsp);
	}
	Result<std::unique_ptr<nvme::IoQueue>> open_queue(io_uring &ring) override
	{
		return d_->open_queue(ring);
	}
	Result<void> ruh_update(std::span<const uint16_t> hs) override
	{
		return d_->ruh_update(hs);
	}

	unsigned reads = 0;

private:
	std::unique_ptr<nvme::Device> d_;
	uint16_t pid_offset_;
};

}  // namespace

TEST_CASE("member view: a render reads each member's RUH Status once and labels its own PIDs")
{
	test::TempDir dir;
	std::vector<nvme::StripeMemberSpec> specs;
	std::vector<CountingMember *> counted;
	for (uint16_t m = 0; m < 2; m++) {
		BackendOptions one;
		one.kind = "model";
		one.file = dir.path + "/m" + std::to_string(m);
		one.size = 64ull << 20;
		one.nruh = 8;
		auto dev = open_backend(one);
		REQUIRE_MESSAGE(dev.ok(), dev.error().message());
		auto cm = std::make_unique<CountingMember>(std::move(*dev),
							   static_cast<uint16_t>(m * 0x100));
		counted.push_back(cm.get());
		specs.push_back(nvme::StripeMemberSpec{one.file, std::move(cm)});
	}
	auto sd = nvme::open_stripe_device(std::move(specs));
	REQUIRE_MESSAGE(sd.ok(), sd.error().message());
	State s;
	init_state(s, std::move(*sd));
	CHECK(s.handles[3].pid == 3);  // the stripe's list is member 0's

	for (CountingMember *cm : counted)
		cm->reads = 0;
	const std::string text = metrics_exposition(s);
	for (CountingMember *cm : counted)
		CHECK(cm->reads == 1);
	// Member 1's samples carry member 1's PIDs, in the counter and the RUH Status families.
	const std::string m1 = ",member=\"1\",device=\"" + dir.path + "/m1\"}";
	CHECK(text.find("kvfdp_handle_bytes_total{handle=\"3\",pid=\"259\"" + m1 + " 0\n") !=
	      std::string::npos);
	CHECK(text.find("kvfdp_ruh_ruamw_lbas{handle=\"3\",pid=\"259\",ruhid=\"3\"" + m1) !=
	      std::string::npos);
	CHECK(text.find("kvfdp_handle_bytes_total{handle=\"3\",pid=\"3\",member=\"0\"") !=
	      std::string::npos);
}

TEST_CASE("member view: a stripe of two models in status, ruh, stats and metrics")
{
	test::TempDir dir;
	State s;
	BackendOptions b;
	b.kind = "model";
	b.members = {dir.path + "/m0", dir.path + "/m1"};
	b.size = 64ull << 20;
	b.nruh = 8;
	b.stripe_bytes = 512 * 1024;
	init_state(s, b);
	nvme::StripeDevice *sd = nvme::as_stripe(*s.device);
	REQUIRE(sd);

	// 3 LBAs with handle 2 on member 0, 5 with handle 4 on member 1: each member's own RUAMW
	// moves by its own writes only.
	write_member(*s.device, 0, 2, 0, 3);
	write_member(*s.device, 1, 4, 0, 5);

	const json st = ask(s, "status");
	REQUIRE(st["device"].contains("stripe"));
	const json &sp = st["device"]["stripe"];
	CHECK(sp["members"] == 2);
	CHECK(sp["stripe_bytes"] == 512 * 1024);
	CHECK(sp["member_nlb"] == sd->member_nlb());
	REQUIRE(sp["devices"].size() == 2);
	CHECK(sp["devices"][1]["path"] == b.members[1]);
	CHECK(sp["devices"][1]["member"] == 1);
	CHECK(sp["devices"][0]["fdp_enabled"] == true);
	CHECK(sp["devices"][0]["lba_size"] == 4096);

	const json ruh = ask(s, "ruh");
	CHECK(ruh["stripe_bytes"] == 512 * 1024);
	REQUIRE(ruh["members"].size() == 2);
	const uint64_t ru_lbas = (1ull << 20) / 4096;
	for (unsigned m = 0; m < 2; m++) {
		CAPTURE(m);
		const json &mj = ruh["members"][m];
		CHECK(mj["device"] == b.members[m]);
		REQUIRE(mj["ruhss"].size() == 8);
		for (unsigned h = 0; h < 8; h++) {
			CAPTURE(h);
			const uint64_t want_used = m == 0 && h == 2 ? 3 : m == 1 && h == 4 ? 5 : 0;
			CHECK(mj["ruhss"][h]["ruamw"] == ru_lbas - want_used);
			CHECK(mj["ruhss"][h]["bytes"] == 0);  // no queue has counted anything
		}
	}
	// The totals are the members' sums, handle by handle.
	for (unsigned h = 0; h < 8; h++)
		CHECK(ruh["ruhss"][h]["ruamw"].get<uint64_t>() ==
		      ruh["members"][0]["ruhss"][h]["ruamw"].get<uint64_t>() +
			      ruh["members"][1]["ruhss"][h]["ruamw"].get<uint64_t>());

	const json stats = ask(s, "stats");
	REQUIRE(stats["members"].size() == 2);
	CHECK(stats["members"][0]["hbmw"] == 3 * 4096);
	CHECK(stats["members"][1]["hbmw"] == 5 * 4096);
	CHECK(stats["hbmw"] == 8 * 4096);
	CHECK(stats["members"][0]["waf"].get<double>() >= 1.0);
	CHECK(stats["members"][1]["device"] == b.members[1]);

	// kvfdpd's bytes per member and handle, from its counters.
	kvfdp::proto::CounterSnapshot c;
	c.member_handle_bytes[0][2] = 3 * 4096;
	c.member_handle_bytes[1][4] = 5 * 4096;
	c.member_handle_bytes[1][0] = 4096;
	auto mr = members_ruh(*sd, c);
	REQUIRE(mr.ok());
	CHECK((*mr)[0].ruhss[2].bytes == 3 * 4096);
	CHECK((*mr)[1].ruhss[4].bytes == 5 * 4096);
	CHECK((*mr)[1].bytes == 6 * 4096);
	CHECK((*mr)[0].bytes == 3 * 4096);

	// Metrics: the existing names, each family once, member and device labels.
	const std::string text = metrics_exposition(s);
	for (const char *f :
	     {"kvfdp_handle_bytes_total", "kvfdp_ruh_ruamw_lbas", "kvfdp_fdp_hbmw_bytes"}) {
		CAPTURE(f);
		size_t n = 0;
		for (size_t at = 0;
		     (at = text.find(std::string("# TYPE ") + f + " ", at)) != std::string::npos;
		     at++)
			n++;
		CHECK(n == 1);
	}
	CHECK(text.find(
		      "kvfdp_ruh_ruamw_lbas{handle=\"2\",pid=\"2\",ruhid=\"2\",member=\"0\",device=\"" +
		      b.members[0] + "\"} " + std::to_string(ru_lbas - 3) + "\n") !=
	      std::string::npos);
	CHECK(text.find("kvfdp_fdp_hbmw_bytes{member=\"1\",device=\"" + b.members[1] +
			"\"} 20480\n") != std::string::npos);
	CHECK(text.find("kvfdp_handle_bytes_total{handle=\"4\",pid=\"4\",member=\"1\",device=\"" +
			b.members[1] + "\"} 0\n") != std::string::npos);

	proto::MetricsInput mi;
	mi.nruh = 8;
	mi.members = b.members;
	mi.member_pids = {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}};
	mi.counters = c;
	const std::string ct = proto::format_metrics(mi);
	CHECK(ct.find("kvfdp_handle_bytes_total{handle=\"4\",pid=\"4\",member=\"1\",device=\"" +
		      b.members[1] + "\"} 20480\n") != std::string::npos);
}

TEST_CASE("member view: a single namespace has no members, no stripe and no member label")
{
	test::TempDir dir;
	State s;
	BackendOptions b;
	b.kind = "model";
	b.file = dir.path + "/one";
	b.size = 64ull << 20;
	b.nruh = 8;
	init_state(s, b);
	CHECK(nvme::as_stripe(*s.device) == nullptr);
	CHECK(!ask(s, "status")["device"].contains("stripe"));
	const json ruh = ask(s, "ruh");
	CHECK(!ruh.contains("members"));
	CHECK(!ruh.contains("stripe_bytes"));
	CHECK(!ask(s, "stats").contains("members"));
	const std::string text = metrics_exposition(s);
	CHECK(text.find("member=") == std::string::npos);
	CHECK(text.find("kvfdp_handle_bytes_total{handle=\"0\",pid=\"0\"} 0\n") !=
	      std::string::npos);
}
