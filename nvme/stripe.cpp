// StripeDevice: one Device over N members, its refusals, totals and the routing queue.
#include "nvme/stripe.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <liburing.h>

#include "common/fnv.hpp"
#include "nvme/logs.hpp"
#include "nvme/paths.hpp"
#include "nvme/spec.hpp"

namespace kvfdp::nvme {

namespace {

std::string canonical(const std::string &path)
{
	char buf[PATH_MAX];
	return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// Folds one field of the fingerprint into h, with a 0xff separator after it.
uint64_t add_field(uint64_t h, const std::string &s)
{
	return fnv1a("\xff", fnv1a(s, h));
}

// Routes each request to its member's queue; the member index rides in user_data's top byte.
class StripeQueue final : public IoQueue {
public:
	explicit StripeQueue(std::vector<std::unique_ptr<IoQueue>> qs) : qs_(std::move(qs)) {}

	Prep prep(io_uring &ring, const IoRequest &req) override
	{
		if (req.member >= qs_.size() || (req.user_data >> kStripeUserDataShift))
			[[unlikely]]
			return Prep{false, -EINVAL};
		IoRequest r = req;
		r.member = 0;
		r.user_data = req.user_data | static_cast<uint64_t>(req.member)
						      << kStripeUserDataShift;
		return qs_[req.member]->prep(ring, r);
	}

	int complete(const io_uring_cqe &cqe) override
	{
		const uint64_t m = cqe.user_data >> kStripeUserDataShift;
		if (m >= qs_.size()) [[unlikely]]
			return -EINVAL;
		return qs_[m]->complete(cqe);
	}

private:
	std::vector<std::unique_ptr<IoQueue>> qs_;
};

}  // namespace

std::string stripe_member_name(size_t m, const std::string &path)
{
	return "stripe member " + std::to_string(m) + " (" + path + ")";
}

uint64_t default_stripe_bytes(std::span<const uint32_t> max_transfers)
{
	uint64_t largest = 4096;
	for (uint32_t t : max_transfers)
		largest = std::max<uint64_t>(largest, t);
	return std::bit_ceil(largest);
}

std::vector<std::string> member_identity(const std::string &path, const std::string &sysfs_root)
{
	std::vector<std::string> keys;
	const std::string real = canonical(path);
	struct stat sb {};
	if (::stat(real.c_str(), &sb) != 0)
		keys.push_back("path:" + real);
	else if (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode))
		keys.push_back(std::string(S_ISCHR(sb.st_mode) ? "c" : "b") +
			       "dev:" + std::to_string(major(sb.st_rdev)) + ":" +
			       std::to_string(minor(sb.st_rdev)));
	else
		keys.push_back("ino:" + std::to_string(sb.st_dev) + ":" +
			       std::to_string(sb.st_ino));
	// /dev/ngXnY and /dev/nvmeXnY both name namespace nvmeXnY, whose wwid is the same from
	// every controller that reaches it.
	const std::string name = base_name(real);
	const std::string block = name.rfind("nvme", 0) == 0 ? name : ng_block_name(name);
	if (!block.empty()) {
		std::ifstream f(sysfs_root + "/block/" + block + "/wwid");
		std::string wwid;
		if (f && std::getline(f, wwid) && !wwid.empty())
			keys.push_back("wwid:" + wwid);
	}
	return keys;
}

StripeDevice::~StripeDevice() = default;

StripeDevice *as_stripe(Device &d)
{
	return dynamic_cast<StripeDevice *>(&d);
}
const StripeDevice *as_stripe(const Device &d)
{
	return dynamic_cast<const StripeDevice *>(&d);
}

namespace {

using MemberIds = std::vector<std::vector<std::string>>;

// Two to kMaxStripeMembers members.
Result<void> check_member_count(size_t n)
{
	if (n < 2)
		return guidance_error(
			std::errc::invalid_argument,
			"a stripe needs two or more members (give --device more than once)");
	if (n > kMaxStripeMembers)
		return guidance_error(std::errc::invalid_argument,
				      std::to_string(n) + " stripe members: at most " +
					      std::to_string(kMaxStripeMembers) +
					      " are supported; give fewer --device");
	return ok();
}

// Member m against member 0 (backend, FDP, LBA size, a usable size) and against members
// 0..m-1 (not the same namespace: ids[m] is filled here); its placement handles.
Result<std::vector<Handle>> check_member(const std::vector<StripeMemberSpec> &members, size_t m,
					 MemberIds &ids, const StripeOptions &opts)
{
	const StripeMemberSpec &sm = members[m];
	const std::string who = stripe_member_name(m, sm.path);
	if (!sm.device)
		return guidance_error(std::errc::invalid_argument, who + " is not open");
	const DeviceInfo &mi = sm.device->info();
	const DeviceInfo &first = members[0].device->info();
	if (mi.backend != first.backend)
		return guidance_error(std::errc::invalid_argument,
				      who + " is a " + mi.backend + " device but member 0 is " +
					      first.backend + ": stripe members of one backend");
	if (!mi.fdp_enabled)
		return guidance_error(
			std::errc::invalid_argument,
			who + " has no FDP enabled: every stripe member must be an FDP " +
				"namespace; remove it from the --device list");
	if (mi.lba_size != first.lba_size)
		return guidance_error(
			std::errc::invalid_argument,
			who + " has " + std::to_string(mi.lba_size) + "-byte LBAs but member 0 (" +
				members[0].path + ") has " + std::to_string(first.lba_size) +
				": format the members to one LBA size (nvme format --lbaf) or stripe only "
				"like members");
	if (mi.nlb == 0 || mi.max_transfer < mi.lba_size)
		return guidance_error(std::errc::invalid_argument,
				      who + " reports no usable size or transfer limit");
	ids[m] = member_identity(sm.path, opts.sysfs_root);
	for (size_t o = 0; o < m; o++)
		for (const std::string &k : ids[m])
			if (std::find(ids[o].begin(), ids[o].end(), k) != ids[o].end())
				return guidance_error(
					std::errc::invalid_argument,
					who + " is the same namespace as member " +
						std::to_string(o) + " (" + members[o].path + ")" +
						(k.rfind("wwid:", 0) == 0 ? " (" + k + ")" : "") +
						": give each namespace once");
	auto hs = sm.device->handles();
	if (!hs) {
		Error e = std::move(hs).error();
		e.context = who + ": reading RUH Status: " + e.context;
		return e;
	}
	if (hs->empty())
		return guidance_error(
			std::errc::invalid_argument,
			who + " has FDP enabled but no placement handles: recreate the " +
				"namespace with handles, or remove it from the --device list");
	return std::move(*hs);
}

// The stripe size in bytes: opts' or the default from the members' transfer limits; a
// multiple of the LBA size and of 4096, at most 1 GiB.
Result<uint64_t> choose_stripe_bytes(const std::vector<StripeMemberSpec> &members,
				     const StripeOptions &opts)
{
	const uint32_t lba = members[0].device->info().lba_size;
	std::vector<uint32_t> transfers;
	for (const auto &sm : members)
		transfers.push_back(sm.device->info().max_transfer);
	const uint64_t stripe =
		opts.stripe_bytes ? opts.stripe_bytes : default_stripe_bytes(transfers);
	if (stripe % lba || stripe % 4096 || stripe > (uint64_t{1} << 30))
		return guidance_error(
			std::errc::invalid_argument,
			"stripe size " + std::to_string(stripe) +
				" is not a multiple of the members' " + std::to_string(lba) +
				"-byte LBA and of 4096, at most 1 GiB: give --stripe-size "
				"like 512K or 1M");
	return stripe;
}

// What every member holds: the smallest member's LBAs, the fewest handles, and a note
// naming the members with more (whose extra handles go unused).
struct Shared {
	uint64_t min_nlb = UINT64_MAX;
	size_t nh = 0;
	std::string note;
};

// Refuses a member smaller than one stripe unit (unit LBAs, stripe bytes).
Result<Shared> find_shared(const std::vector<StripeMemberSpec> &members,
			   const std::vector<std::vector<Handle>> &handles, uint64_t stripe,
			   uint64_t unit)
{
	const uint32_t lba = members[0].device->info().lba_size;
	Shared sh;
	size_t min_h = 0;
	for (size_t m = 0; m < members.size(); m++) {
		const DeviceInfo &mi = members[m].device->info();
		if (mi.nlb < unit)
			return guidance_error(
				std::errc::invalid_argument,
				stripe_member_name(m, members[m].path) + " holds " +
					std::to_string(mi.nlb * lba) +
					" bytes, less than one stripe unit (" +
					std::to_string(stripe) +
					"): use a smaller --stripe-size or a larger namespace");
		sh.min_nlb = std::min(sh.min_nlb, mi.nlb);
		if (handles[m].size() < handles[min_h].size())
			min_h = m;
	}
	sh.nh = handles[min_h].size();
	for (size_t m = 0; m < members.size(); m++)
		if (handles[m].size() > sh.nh)
			sh.note += (sh.note.empty() ? "" : "; ") +
				   stripe_member_name(m, members[m].path) + " has " +
				   std::to_string(handles[m].size()) + " handles, " +
				   stripe_member_name(min_h, members[min_h].path) + " " +
				   std::to_string(sh.nh) + ": the stripe uses handles 0.." +
				   std::to_string(sh.nh - 1) + " on every member";
	return sh;
}

// The stripe's DeviceInfo: member 0's FDP identity, nlb LBAs, nh handles, and the
// members' most restrictive transfer, segment and FUA limits.
DeviceInfo make_stripe_info(const std::vector<StripeMemberSpec> &members, uint64_t nlb, size_t nh)
{
	const DeviceInfo &i0 = members[0].device->info();
	const uint32_t lba = i0.lba_size;
	DeviceInfo info;
	info.backend = i0.backend;
	info.nsid = 0;
	info.lba_size = lba;
	info.nlb = nlb;
	info.max_transfer = UINT32_MAX;
	info.fdp_supported = info.fdp_enabled = true;
	info.fua = true;
	info.endgid = i0.endgid;
	info.rgif = i0.rgif;
	info.nrg = i0.nrg;
	info.nruh = static_cast<uint16_t>(nh);
	info.ru_size = i0.ru_size;
	info.config_index = i0.config_index;
	info.max_segments = 0;
	for (size_t m = 0; m < members.size(); m++) {
		const DeviceInfo &mi = members[m].device->info();
		info.path += (m ? "," : "") + members[m].path;
		info.identity += (m ? "," : "") + mi.identity;
		info.max_transfer = std::min(info.max_transfer, mi.max_transfer / lba * lba);
		info.volatile_cache = info.volatile_cache || mi.volatile_cache;
		info.fua = info.fua && mi.fua;
		if (mi.max_segments && (!info.max_segments || mi.max_segments < info.max_segments))
			info.max_segments = mi.max_segments;
	}
	return info;
}

// StripeDevice::fingerprint(): the stripe size and count, then each member's wwid (else its
// canonical path); never 0.
uint64_t make_fingerprint(const std::vector<StripeMemberSpec> &members, const MemberIds &ids,
			  uint64_t stripe)
{
	uint64_t fp = kFnv1aBasis;
	fp = add_field(fp,
		       "stripe " + std::to_string(stripe) + " x" + std::to_string(members.size()));
	for (size_t m = 0; m < members.size(); m++) {
		std::string id;
		for (const std::string &k : ids[m])
			if (k.rfind("wwid:", 0) == 0)
				id = k;
		fp = add_field(fp, id.empty() ? canonical(members[m].path) : id);
	}
	return fp ? fp : 1;
}

}  // namespace

Result<std::unique_ptr<StripeDevice>> open_stripe_device(std::vector<StripeMemberSpec> members,
							 const StripeOptions &opts)
{
	const size_t n = members.size();
	KVFDP_TRY(check_member_count(n));
	MemberIds ids(n);
	std::vector<std::vector<Handle>> handles(n);
	for (size_t m = 0; m < n; m++) {
		auto hs = check_member(members, m, ids, opts);
		if (!hs)
			return std::move(hs).error();
		handles[m] = std::move(*hs);
	}
	auto stripe = choose_stripe_bytes(members, opts);
	if (!stripe)
		return std::move(stripe).error();
	const uint64_t unit = *stripe / members[0].device->info().lba_size;
	auto shared = find_shared(members, handles, *stripe, unit);
	if (!shared)
		return std::move(shared).error();

	auto sd = std::unique_ptr<StripeDevice>(new StripeDevice());
	sd->note_ = std::move(shared->note);
	sd->layout_ = StripeLayout{static_cast<uint32_t>(n), unit};
	sd->member_nlb_ = shared->min_nlb / unit * unit;
	sd->nruh_ = static_cast<uint16_t>(shared->nh);
	sd->info_ = make_stripe_info(members, sd->member_nlb_ * n, shared->nh);
	sd->fingerprint_ = make_fingerprint(members, ids, *stripe);
	for (auto &sm : members) {
		sd->members_.push_back(StripeMember{sm.path, sm.device.get()});
		sd->owned_.push_back(std::move(sm.device));
	}
	return sd;
}

Result<std::vector<Handle>> StripeDevice::handles()
{
	std::vector<Handle> out;
	for (size_t m = 0; m < members_.size(); m++) {
		auto hs = members_[m].device->handles();
		if (!hs) {
			Error e = std::move(hs).error();
			e.context = stripe_member_name(m, members_[m].path) + ": " + e.context;
			return e;
		}
		if (hs->size() < nruh_)
			return guidance_error(std::errc::io_error,
					      stripe_member_name(m, members_[m].path) +
						      " now reports " + std::to_string(hs->size()) +
						      " handles, fewer than the stripe's " +
						      std::to_string(nruh_));
		if (m == 0)
			out.assign(hs->begin(), hs->begin() + nruh_);
		else
			for (uint16_t h = 0; h < nruh_; h++)
				out[h].ruamw += (*hs)[h].ruamw;
	}
	return out;
}

Result<std::vector<uint8_t>> StripeDevice::log_page(uint8_t lid, uint8_t lsp)
{
	if (lid != kLidFdpStats && lid != kLidRuhUsage && lid != kLidFdpEvents)
		return members_[0].device->log_page(lid, lsp);
	FdpStats total;
	std::vector<uint8_t> usage;
	std::vector<FdpEvent> events;
	for (size_t m = 0; m < members_.size(); m++) {
		auto raw = members_[m].device->log_page(lid, lsp);
		if (!raw) {
			Error e = std::move(raw).error();
			e.context = stripe_member_name(m, members_[m].path) + ": " + e.context;
			return e;
		}
		if (lid == kLidFdpStats) {
			auto st = parse_fdp_stats(*raw);
			if (!st)
				return std::move(st).error();
			total.hbmw += st->hbmw;
			total.mbmw += st->mbmw;
			total.mbe += st->mbe;
		} else if (lid == kLidRuhUsage) {
			auto u = parse_ruh_usage(*raw);
			if (!u)
				return std::move(u).error();
			if (m == 0)
				usage = *u;
			for (size_t r = 0; r < std::min(usage.size(), u->size()); r++)
				if (usage[r] == kRuhaUnused)
					usage[r] = (*u)[r];
		} else {
			auto ev = parse_fdp_events(*raw);
			if (!ev)
				return std::move(ev).error();
			for (const FdpEvent &e : *ev)
				if (events.size() < kFdpEventsMax)
					events.push_back(e);
		}
	}
	if (lid == kLidFdpStats)
		return encode_fdp_stats(total);
	if (lid == kLidRuhUsage)
		return encode_ruh_usage(usage);
	return encode_fdp_events(events);
}

Result<std::unique_ptr<IoQueue>> StripeDevice::open_queue(io_uring &ring)
{
	std::vector<std::unique_ptr<IoQueue>> qs;
	for (size_t m = 0; m < members_.size(); m++) {
		auto q = members_[m].device->open_queue(ring);
		if (!q) {
			Error e = std::move(q).error();
			e.context = stripe_member_name(m, members_[m].path) + ": " + e.context;
			return e;
		}
		qs.push_back(std::move(*q));
	}
	return make_stripe_queue(std::move(qs));
}

std::unique_ptr<IoQueue> make_stripe_queue(std::vector<std::unique_ptr<IoQueue>> qs)
{
	return std::make_unique<StripeQueue>(std::move(qs));
}

Result<void> StripeDevice::ruh_update(std::span<const uint16_t> handles)
{
	for (uint16_t h : handles)
		if (h >= nruh_)
			return make_error(std::errc::invalid_argument,
					  "RUH Update: no handle " + std::to_string(h) +
						  " (the stripe has " + std::to_string(nruh_) +
						  ")");
	Result<void> first = ok();
	for (size_t m = 0; m < members_.size(); m++) {
		auto r = members_[m].device->ruh_update(handles);
		if (!r && first) {
			Error e = std::move(r).error();
			e.context = stripe_member_name(m, members_[m].path) + ": " + e.context;
			first = std::move(e);
		}
	}
	return first;
}

}  // namespace kvfdp::nvme
