// Device discovery from /dev/ngXnY: names, Identify, FDP feature/configuration, RUH Status.
#include "nvme/discovery.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <linux/nvme_ioctl.h>
#include <memory>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvme/commands.hpp"
#include "nvme/status.hpp"

namespace kvfdp::nvme {
namespace {

namespace fs = std::filesystem;

// Digits at s[pos..]; returns the index after them, or npos when there are none.
size_t digits_end(const std::string &s, size_t pos)
{
	size_t i = pos;
	while (i < s.size() && s[i] >= '0' && s[i] <= '9')
		++i;
	return i == pos ? std::string::npos : i;
}

// Splits "<prefix>X" or "<prefix>XnY" after prefix: returns X and Y ("" when absent).
bool split_numbers(const std::string &name, size_t pos, std::string &x, std::string &y,
		   std::string &rest)
{
	size_t e = digits_end(name, pos);
	if (e == std::string::npos)
		return false;
	x = name.substr(pos, e - pos);
	y.clear();
	rest.clear();
	if (e < name.size() && name[e] == 'n') {
		size_t f = digits_end(name, e + 1);
		if (f == std::string::npos)
			return false;
		y = name.substr(e + 1, f - e - 1);
		rest = name.substr(f);
		return true;
	}
	rest = name.substr(e);
	return true;
}

// A 4096-aligned, zeroed buffer (passthrough maps user pages; aligned avoids bounces).
struct AlignedBuf {
	explicit AlignedBuf(size_t n) : size(n ? (n + 4095) / 4096 * 4096 : 4096)
	{
		void *p = nullptr;
		if (posix_memalign(&p, 4096, size) == 0) {
			std::memset(p, 0, size);
			data.reset(static_cast<uint8_t *>(p));
		}
	}
	struct Free {
		void operator()(uint8_t *p) const { std::free(p); }
	};
	std::unique_ptr<uint8_t, Free> data;
	size_t size;
};

std::string read_sysfs_line(const std::string &path)
{
	std::ifstream f(path);
	std::string line;
	if (f)
		std::getline(f, line);
	return line;
}

int passthru_ioctl(int fd, unsigned long req, const UringCmd &cmd, uint32_t *dw0)
{
	struct nvme_passthru_cmd pc;
	static_assert(sizeof(pc) == sizeof(UringCmd));
	std::memcpy(&pc, &cmd, sizeof(pc));
	pc.result = 0;
	int ret = ioctl(fd, req, &pc);
	if (ret < 0)
		return -errno;
	if (dw0)
		*dw0 = pc.result;
	return ret;  // 0 or the NVMe status
}

std::string hex(unsigned v, int width = 0)
{
	char b[32];
	std::snprintf(b, sizeof(b), "0x%0*x", width, v);
	return b;
}

}  // namespace

std::string namespace_identity(std::span<const uint8_t> id_ctrl, std::span<const uint8_t> id_ns,
			       uint32_t nsid)
{
	// NVMe 2.x Identify Namespace: NGUID bytes 119:104, EUI64 bytes 127:120 (both 0 when
	// the namespace has none); Identify Controller: SN bytes 23:04.
	constexpr size_t kNguid = 104, kNguidLen = 16, kEui64 = 120, kEui64Len = 8;
	constexpr size_t kSn = 4, kSnLen = 20;
	auto hex_of = [](std::span<const uint8_t> b) {
		std::string out;
		bool any = false;
		for (uint8_t v : b) {
			char x[3];
			std::snprintf(x, sizeof(x), "%02x", v);
			out += x;
			any = any || v != 0;
		}
		return any ? out : std::string();
	};
	if (id_ns.size() >= kEui64 + kEui64Len) {
		if (std::string g = hex_of(id_ns.subspan(kNguid, kNguidLen)); !g.empty())
			return "nguid-" + g;
		if (std::string e = hex_of(id_ns.subspan(kEui64, kEui64Len)); !e.empty())
			return "eui64-" + e;
	}
	if (id_ctrl.size() < kSn + kSnLen)
		return "";
	std::string sn(reinterpret_cast<const char *>(id_ctrl.data() + kSn), kSnLen);
	while (!sn.empty() && (sn.back() == ' ' || sn.back() == '\0'))
		sn.pop_back();
	while (!sn.empty() && sn.front() == ' ')
		sn.erase(sn.begin());
	if (sn.empty())
		return "";
	for (char &c : sn)
		if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
		    c != '-')
			c = '_';
	return "sn-" + sn + "-ns" + std::to_string(nsid);
}

uint32_t passthru_max_transfer(const TransferLimits &lim, uint32_t lba_size)
{
	if (lba_size == 0)
		return 0;
	uint64_t limit = 0;
	auto cap = [&limit](uint64_t v) {
		if (v && (limit == 0 || v < limit))
			limit = v;
	};
	cap(lim.mdts_bytes);
	cap(lim.max_hw_bytes);
	if (lim.max_segments) {
		uint64_t page = lim.page_size ? lim.page_size : 4096;
		// pages per segment run: a page needs ceil(page / max_segment_size) segments
		uint64_t per_page = 1;
		if (lim.max_segment_size && lim.max_segment_size < page)
			per_page = (page + lim.max_segment_size - 1) / lim.max_segment_size;
		uint64_t pages = lim.max_segments / per_page;
		// one page is lost to a buffer that starts mid-page
		cap((pages > 1 ? pages - 1 : 1) * page);
	}
	if (limit == 0)
		limit = 128 * 1024;
	limit = std::min<uint64_t>(limit, 1u << 30);
	limit = std::min<uint64_t>(limit, uint64_t{kMaxNlb} * lba_size);
	uint64_t blocks = std::max<uint64_t>(1, limit / lba_size);
	return static_cast<uint32_t>(blocks * lba_size);
}

void read_queue_limits(const std::string &block_name, TransferLimits &lim,
		       const std::string &sysfs_root)
{
	std::string q = sysfs_root + "/block/" + block_name + "/queue/";
	auto num = [&q](const char *name) -> uint64_t {
		std::string v = read_sysfs_line(q + name);
		return v.empty() ? 0 : std::strtoull(v.c_str(), nullptr, 10);
	};
	lim.max_hw_bytes = num("max_hw_sectors_kb") * 1024;
	uint64_t segs = num("max_segments");
	lim.max_segments = static_cast<uint32_t>(std::min<uint64_t>(segs, UINT32_MAX));
	lim.max_segment_size = num("max_segment_size");
}

Result<NgNames> parse_ng_path(const std::string &path)
{
	std::string base = fs::path(path).filename().string();
	std::string x, y, rest;
	if (base.rfind("ng", 0) == 0 && split_numbers(base, 2, x, y, rest) && !y.empty() &&
	    rest.empty()) {
		NgNames n;
		n.ng_path = path;
		n.ng_name = base;
		n.block_name = "nvme" + x + "n" + y;
		return n;
	}
	if (base.rfind("nvme", 0) == 0 && split_numbers(base, 4, x, y, rest)) {
		std::string ng = "/dev/ng" + x + "n" + (y.empty() ? "1" : y);
		if (y.empty() && rest.empty())
			return guidance_error(
				std::errc::invalid_argument,
				path +
					" is an NVMe controller, not a namespace; use its "
					"generic char device, e.g. " +
					ng);
		return guidance_error(
			std::errc::invalid_argument,
			path +
				" is a block device; kvfdp needs the NVMe generic char "
				"device: use " +
				ng);
	}
	return guidance_error(std::errc::invalid_argument,
			      path + " is not an NVMe generic char device; pass /dev/ngXnY "
				     "(see `ls /dev/ng*` or `nvme list`)");
}

Result<std::string> find_controller(const std::string &ng_name, const std::string &sysfs_root)
{
	std::error_code ec;
	fs::path link = fs::path(sysfs_root) / "class/nvme-generic" / ng_name / "device";
	fs::path target = fs::canonical(link, ec);
	if (ec)
		return errno_error(ec.value(),
				   "resolve " + link.string() +
					   " (is the nvme driver loaded and the device present?)");
	std::string base = target.filename().string();
	std::string x, y, rest;
	if (base.rfind("nvme-subsys", 0) == 0) {
		// Native multipath: the head's parent is the subsystem; take its lowest controller.
		std::string best;
		long best_n = -1;
		for (const auto &e : fs::directory_iterator(target, ec)) {
			std::string n = e.path().filename().string();
			if (n.rfind("nvme", 0) == 0 && split_numbers(n, 4, x, y, rest) &&
			    y.empty() && rest.empty()) {
				long v = std::strtol(x.c_str(), nullptr, 10);
				if (best_n < 0 || v < best_n) {
					best_n = v;
					best = n;
				}
			}
		}
		if (best.empty())
			return make_error(std::errc::no_such_device,
					  "no controller found under " + target.string());
		return best;
	}
	if (base.rfind("nvme", 0) == 0 && split_numbers(base, 4, x, y, rest) && y.empty() &&
	    rest.empty())
		return base;
	return make_error(std::errc::no_such_device, link.string() + " points to " +
							     target.string() +
							     ", not an NVMe controller");
}

int admin_ioctl(int fd, const UringCmd &cmd, uint32_t *dw0)
{
	return passthru_ioctl(fd, NVME_IOCTL_ADMIN_CMD, cmd, dw0);
}

int io_ioctl(int fd, const UringCmd &cmd, uint32_t *dw0)
{
	return passthru_ioctl(fd, NVME_IOCTL_IO_CMD, cmd, dw0);
}

Result<RuhStatus> read_ruh_status(int ng_fd, uint32_t nsid)
{
	AlignedBuf hdr(sizeof(RuhStatusHeader));
	if (!hdr.data)
		return make_error(std::errc::not_enough_memory, "RUH Status buffer");
	int ret = io_ioctl(ng_fd, make_io_mgmt_recv(nsid, hdr.data.get(), sizeof(RuhStatusHeader)));
	if (ret != 0) {
		if (ret > 0 && NvmeStatus{static_cast<uint16_t>(ret)}.sc() == kScFdpDisabled)
			return result_error(ret, "I/O Management Receive (RUH Status): FDP is "
						 "disabled on this namespace's endurance group");
		return result_error(ret, "I/O Management Receive (RUH Status) header");
	}
	auto n = parse_ruh_status_count(std::span<const uint8_t>(hdr.data.get(), 16));
	if (!n)
		return n.error();
	size_t len = ruh_status_size(*n);
	AlignedBuf full(len);
	if (!full.data)
		return make_error(std::errc::not_enough_memory, "RUH Status buffer");
	ret = io_ioctl(ng_fd, make_io_mgmt_recv(nsid, full.data.get(), static_cast<uint32_t>(len)));
	if (ret != 0)
		return result_error(ret, "I/O Management Receive (RUH Status), " +
						 std::to_string(*n) + " descriptors");
	return parse_ruh_status(std::span<const uint8_t>(full.data.get(), len));
}

Result<std::vector<uint8_t>> read_fdp_log(int admin_fd, uint8_t lid, uint16_t lsi, uint8_t lsp)
{
	if (lid < kLidFdpConfigs || lid > kLidFdpEvents)
		return make_error(std::errc::invalid_argument,
				  "log " + hex(lid, 2) + " is not an FDP log (0x20-0x23)");
	AlignedBuf buf(4096);
	if (!buf.data)
		return make_error(std::errc::not_enough_memory, "log buffer");
	auto get = [&](AlignedBuf &b, uint32_t len) {
		return admin_ioctl(admin_fd, make_get_log_page(lid, b.data.get(), len, lsp, lsi));
	};
	int ret = get(buf, 4096);
	if (ret != 0)
		return result_error(ret, "Get Log Page " + hex(lid, 2) + " (LSI " +
						 std::to_string(lsi) + ")");
	size_t size = 4096;
	const uint8_t *p = buf.data.get();
	if (lid == kLidFdpConfigs) {
		FdpConfigsHeader h;
		std::memcpy(&h, p, sizeof(h));
		size = h.size;
		if (size < sizeof(h))
			return make_error(std::errc::bad_message, "FDP configurations log: size " +
									  std::to_string(size) +
									  " is too small");
		if (size > 4096) {
			size = (size + 3) & ~size_t{3};
			AlignedBuf big(size);
			if (!big.data)
				return make_error(std::errc::not_enough_memory, "log buffer");
			ret = get(big, static_cast<uint32_t>(size));
			if (ret != 0)
				return result_error(ret, "Get Log Page 0x20, " +
								 std::to_string(size) + " bytes");
			return std::vector<uint8_t>(big.data.get(), big.data.get() + h.size);
		}
	} else if (lid == kLidRuhUsage) {
		RuhUsageHeader h;
		std::memcpy(&h, p, sizeof(h));
		size = sizeof(h) + size_t{h.nruh} * sizeof(RuhUsageDesc);
		if (size > 4096) {
			AlignedBuf big(size);
			if (!big.data)
				return make_error(std::errc::not_enough_memory, "log buffer");
			ret = get(big, static_cast<uint32_t>(size));
			if (ret != 0)
				return result_error(ret, "Get Log Page 0x21");
			return std::vector<uint8_t>(big.data.get(), big.data.get() + size);
		}
	} else if (lid == kLidFdpStats) {
		size = sizeof(FdpStatsLog);
	}
	return std::vector<uint8_t>(p, p + size);
}

Result<void> fdp_usable(const DeviceInfo &info, size_t nhandles, const std::string &admin_name)
{
	if (!info.fdp_supported)
		return guidance_error(std::errc::not_supported,
				      admin_name + ": CTRATT bit 19 clear: this drive has no FDP; "
						   "use --backend model to project WAF");
	uint16_t endgid = info.endgid ? info.endgid : 1;
	if (!info.fdp_enabled)
		return guidance_error(std::errc::not_supported,
				      "FDP is disabled on endurance group " +
					      std::to_string(endgid) +
					      ": enable it with `nvme set-feature " + admin_name +
					      " -f 0x1d -v " + std::to_string(endgid) +
					      " --cdw12=1 -s` (the group must have no namespaces)");
	if (nhandles == 0)
		return guidance_error(std::errc::not_supported,
				      info.path +
					      " has no placement handles (RUH Status is empty): "
					      "recreate the namespace with handles "
					      "(nvme create-ns ... --nphndls=N --phndls=...)");
	return ok();
}

std::vector<Handle> make_handles(const RuhStatus &rs, const FdpConfig &cfg)
{
	std::vector<Handle> out;
	out.reserve(rs.descs.size());
	for (size_t i = 0; i < rs.descs.size(); ++i) {
		const auto &d = rs.descs[i];
		Handle h;
		h.index = static_cast<uint16_t>(i);
		h.pid = d.pid;
		h.ruhid = d.ruhid;
		h.ruht = d.ruhid < cfg.ruht.size() ? cfg.ruht[d.ruhid] : 0;
		h.earutr = d.earutr;
		h.ruamw = d.ruamw;
		out.push_back(h);
	}
	return out;
}

namespace {

// discover()'s phases, in order. Opens ng_path into d.ng_fd after the checks a user gets a
// hint from (it exists, is a char device, opens read-write); returns its namespace id.
Result<uint32_t> open_namespace(const std::string &ng_path, Discovery &d)
{
	struct stat st {};
	if (stat(ng_path.c_str(), &st) != 0) {
		int e = errno;
		if (e == EACCES || e == EPERM)
			return guidance_errno(e, "cannot reach " + ng_path +
							 "; run as root or grant "
							 "your user rw access (udev rule)");
		if (e == ENOENT)
			return guidance_errno(
				e, "cannot find " + ng_path +
					   " (list namespaces with `ls /dev/ng*` or `nvme list`)");
		return errno_error(e, "stat " + ng_path);
	}
	if (!S_ISCHR(st.st_mode))
		return guidance_error(std::errc::invalid_argument,
				      ng_path + " is not a character device; pass the NVMe generic "
						"char device /dev/ngXnY");

	int fd = open(ng_path.c_str(), O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == EACCES || e == EPERM)
			return guidance_errno(e,
					      "cannot open " + ng_path +
						      " read-write; run as root "
						      "or grant your user rw access (udev rule)");
		return errno_error(e, "open " + ng_path);
	}
	d.ng_fd.reset(fd);

	int nsid = ioctl(fd, NVME_IOCTL_ID);
	if (nsid <= 0)
		return errno_error(nsid < 0 ? errno : EINVAL,
				   "NVME_IOCTL_ID on " + ng_path +
					   ": not an NVMe namespace char device; pass /dev/ngXnY");
	return static_cast<uint32_t>(nsid);
}

// Opens the controller /dev/nvmeX into d.admin_fd, or a dup of the ng fd (synchronous admin
// ioctls work there too). Returns the name hints show for it.
Result<std::string> open_admin(const std::string &ng_path, Discovery &d)
{
	auto ctrl = find_controller(d.names.ng_name);
	if (ctrl) {
		d.names.ctrl_name = *ctrl;
		int afd = open(("/dev/" + *ctrl).c_str(), O_RDWR | O_CLOEXEC);
		if (afd >= 0)
			d.admin_fd.reset(afd);
	}
	if (!d.admin_fd) {
		int dfd = fcntl(d.ng_fd.get(), F_DUPFD_CLOEXEC, 0);
		if (dfd < 0)
			return errno_error(errno, "dup " + ng_path);
		d.admin_fd.reset(dfd);
	}
	return d.names.ctrl_name.empty() ? ng_path : "/dev/" + d.names.ctrl_name;
}

// Identify Controller and Identify Namespace nsid into d, and the namespace's identity into
// d.info.
Result<void> identify(Discovery &d, uint32_t nsid, const std::string &admin_name)
{
	AlignedBuf id(kIdentifySize);
	if (!id.data)
		return make_error(std::errc::not_enough_memory, "identify buffer");
	int ret = admin_ioctl(d.admin_fd.get(), make_identify(kCnsController, 0, id.data.get()));
	if (ret < 0 && (ret == -EACCES || ret == -EPERM))
		return guidance_errno(ret, "Identify Controller on " + admin_name +
						   ": admin commands need root (CAP_SYS_ADMIN)");
	if (ret != 0)
		return result_error(ret, "Identify Controller on " + admin_name);
	auto ic = parse_id_ctrl(std::span<const uint8_t>(id.data.get(), kIdentifySize));
	if (!ic)
		return ic.error();
	d.id_ctrl = *ic;
	AlignedBuf ctrl(kIdentifySize);
	if (!ctrl.data)
		return make_error(std::errc::not_enough_memory, "identify buffer");
	std::memcpy(ctrl.data.get(), id.data.get(), kIdentifySize);

	std::memset(id.data.get(), 0, kIdentifySize);
	ret = admin_ioctl(d.admin_fd.get(), make_identify(kCnsNamespace, nsid, id.data.get()));
	if (ret != 0)
		return result_error(ret, "Identify Namespace " + std::to_string(nsid));
	auto ns = parse_id_ns(std::span<const uint8_t>(id.data.get(), kIdentifySize));
	if (!ns)
		return ns.error();
	d.id_ns = *ns;
	d.info.identity =
		namespace_identity(std::span<const uint8_t>(ctrl.data.get(), kIdentifySize),
				   std::span<const uint8_t>(id.data.get(), kIdentifySize), nsid);
	return ok();
}

// d.info from the Identify data and the queue limits.
Result<void> describe_namespace(Discovery &d, const std::string &ng_path, uint32_t nsid)
{
	DeviceInfo &info = d.info;
	info.path = ng_path;
	info.backend = "passthru";
	info.nsid = nsid;
	info.lba_size = d.id_ns.lba_size();
	if (info.lba_size == 0)
		return make_error(std::errc::not_supported,
				  "namespace " + std::to_string(nsid) +
					  " has an unsupported LBA format");
	info.nlb = d.id_ns.nsze;
	info.volatile_cache = d.id_ctrl.volatile_cache();
	info.fua = info.volatile_cache;
	info.endgid = d.id_ns.endgid;
	info.fdp_supported = d.id_ctrl.fdp_supported();

	TransferLimits lim;
	lim.mdts_bytes = d.id_ctrl.max_transfer();  // MDTS, assuming CAP.MPSMIN = 4 KiB
	long page = sysconf(_SC_PAGESIZE);
	lim.page_size = page > 0 ? static_cast<uint32_t>(page) : 4096;
	read_queue_limits(d.names.block_name, lim);
	info.max_transfer = passthru_max_transfer(lim, info.lba_size);
	info.max_segments = lim.max_segments;
	return ok();
}

// Where FDP is supported: the FDP feature, then where it is enabled the active
// configuration, then RUH Status into d.handles (left empty when a step finds FDP unusable).
Result<void> read_fdp(Discovery &d)
{
	DeviceInfo &info = d.info;
	if (!info.fdp_supported)
		return ok();
	uint16_t endgid = info.endgid ? info.endgid : 1;
	uint32_t dw0 = 0;
	int ret = admin_ioctl(d.admin_fd.get(), make_get_features_fdp(endgid), &dw0);
	if (ret != 0)
		return result_error(ret, "Get Features 0x1D (FDP) for endurance group " +
						 std::to_string(endgid));
	info.fdp_enabled = fdp_feature_enabled(dw0);
	info.config_index = fdp_feature_config_index(dw0);
	if (!info.fdp_enabled)
		return ok();

	auto log = read_fdp_log(d.admin_fd.get(), kLidFdpConfigs, endgid);
	if (!log)
		return log.error();
	auto cfgs = parse_fdp_configs(*log);
	if (!cfgs)
		return cfgs.error();
	if (info.config_index >= cfgs->configs.size())
		return make_error(std::errc::bad_message,
				  "FDP configuration index " + std::to_string(info.config_index) +
					  " is not in the configurations log (" +
					  std::to_string(cfgs->configs.size()) +
					  " configurations)");
	d.config = cfgs->configs[info.config_index];
	info.rgif = d.config.rgif;
	info.nrg = static_cast<uint16_t>(d.config.nrg);
	info.nruh = d.config.nruh;
	info.ru_size = d.config.runs;

	auto rs = read_ruh_status(d.ng_fd.get(), info.nsid);
	if (!rs)
		return rs.error();
	d.handles = make_handles(*rs, d.config);
	for (const auto &h : d.handles)
		d.pids.push_back(h.pid);
	return ok();
}

}  // namespace

Result<Discovery> discover(const std::string &ng_path, bool require_fdp)
{
	auto names = parse_ng_path(ng_path);
	if (!names)
		return names.error();
	Discovery d;
	d.names = std::move(*names);
	auto nsid = open_namespace(ng_path, d);
	if (!nsid)
		return std::move(nsid).error();
	auto admin_name = open_admin(ng_path, d);
	if (!admin_name)
		return std::move(admin_name).error();
	KVFDP_TRY(identify(d, *nsid, *admin_name));
	KVFDP_TRY(describe_namespace(d, ng_path, *nsid));
	KVFDP_TRY(read_fdp(d));
	// No support, FDP disabled or no handles: fdp_usable says which, and what to do.
	if (require_fdp && d.handles.empty())
		return fdp_usable(d.info, 0, *admin_name).error();
	return d;
}

}  // namespace kvfdp::nvme
