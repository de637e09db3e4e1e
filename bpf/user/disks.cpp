// Request-disk discovery in sysfs (NVMe multipath heads -> path disks), partitions and blk-mq geometry.
#include "bpf/user/disks.hpp"

#include <climits>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <unistd.h>

#include "bpf/user/devnum.hpp"

namespace kvfdp::bpf {
namespace {

bool exists(const std::string &p)
{
	return ::access(p.c_str(), F_OK) == 0;
}

// realpath, or "" when p does not resolve.
std::string real(const std::string &p)
{
	char buf[PATH_MAX];
	return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

std::string base(const std::string &p)
{
	return p.substr(p.rfind('/') + 1);
}

// The first line of a sysfs attribute, "" when absent.
std::string attr(const std::string &p)
{
	std::ifstream in(p);
	std::string s;
	std::getline(in, s);
	return s;
}

// "259:1" -> kernel dev_t; 0 when absent or malformed.
uint32_t dev_attr(const std::string &p)
{
	std::ifstream in(p);
	unsigned maj = 0, min = 0;
	char colon = 0;
	if (in >> maj >> colon >> min && colon == ':')
		return kernel_dev(maj, min);
	return 0;
}

std::vector<std::string> entries(const std::string &dir)
{
	std::vector<std::string> out;
	if (DIR *d = ::opendir(dir.c_str())) {
		while (dirent *de = ::readdir(d))
			if (de->d_name[0] != '.')
				out.emplace_back(de->d_name);
		::closedir(d);
	}
	return out;
}

RequestDisk disk_at(const std::string &dir, const std::string &via)
{
	RequestDisk r;
	r.name = base(dir);
	r.devt = dev_attr(dir + "/dev");
	r.hidden = attr(dir + "/hidden") == "1";
	r.via = via;
	return r;
}

void add_unique(std::vector<RequestDisk> &out, RequestDisk d)
{
	for (const auto &o : out)
		if (o.name == d.name)
			return;
	out.push_back(std::move(d));
}

}  // namespace

std::vector<RequestDisk> request_disks(uint32_t devt, const std::string &sys_root)
{
	std::vector<RequestDisk> out;
	std::string head = real(sys_root + "/dev/block/" + std::to_string(devt >> 20) + ":" +
				std::to_string(devt & 0xfffff));
	if (head.empty())
		return out;
	RequestDisk self = disk_at(head, "itself");
	self.devt = devt;
	out.push_back(self);
	if (exists(head + "/mq"))
		return out;  // blk-mq itself: its requests are its own

	// NVMe multipath head: its parent device is the nvme-subsystem.
	std::string subsys = real(head + "/device");
	std::string nsid = attr(head + "/nsid");
	if (!subsys.empty() && base(subsys).rfind("nvme-subsys", 0) == 0 && !nsid.empty()) {
		for (const auto &e : entries(subsys)) {
			std::string ctrl = real(subsys + "/" + e);
			if (ctrl.empty() || !exists(ctrl + "/cntlid"))
				continue;
			for (const auto &p : entries(ctrl)) {
				std::string pd = ctrl + "/" + p;
				if (pd == head || !exists(pd + "/queue") ||
				    attr(pd + "/nsid") != nsid)
					continue;
				add_unique(out, disk_at(real(pd), "nvme-subsystem"));
			}
		}
	}
	for (const auto &p : entries(head + "/multipath"))
		if (std::string pd = real(head + "/multipath/" + p); !pd.empty())
			add_unique(out, disk_at(pd, "multipath"));
	return out;
}

std::vector<uint32_t> partition_devs(uint32_t devt, const std::string &sys_root)
{
	std::vector<uint32_t> out;
	const std::string sys = sys_root + "/dev/block/" + std::to_string(devt >> 20) + ":" +
				std::to_string(devt & 0xfffff);
	for (const auto &e : entries(sys))
		if (exists(sys + "/" + e + "/partition"))
			if (const uint32_t part = dev_attr(sys + "/" + e + "/dev"))
				out.push_back(part);
	return out;
}

MqGeometry mq_geometry(const std::vector<RequestDisk> &disks, const std::string &sys_root)
{
	MqGeometry g{0, 0};
	for (const auto &d : disks) {
		std::string mq = sys_root + "/block/" + d.name + "/mq";
		uint32_t queues = 0;
		for (const auto &q : entries(mq)) {
			queues++;
			std::ifstream in(mq + "/" + q + "/nr_tags");
			uint32_t n = 0;
			if (in >> n && n > g.depth)
				g.depth = n;
		}
		if (queues > g.queues)
			g.queues = queues;
	}
	if (!g.queues)
		g.queues = 1;
	if (!g.depth)
		g.depth = 1;
	return g;
}

std::string describe(const std::vector<RequestDisk> &disks)
{
	if (disks.empty())
		return "(no disk)";
	std::string s = disks[0].name;
	if (disks.size() == 1)
		return s + " (requests on itself)";
	s += " ->";
	for (size_t i = 1; i < disks.size(); i++) {
		const RequestDisk &d = disks[i];
		s += std::string(i > 1 ? "," : "") + " " + d.name + " (" +
		     (d.hidden ? "hidden, " : "") +
		     (d.devt ? std::to_string(d.devt >> 20) + ":" + std::to_string(d.devt & 0xfffff)
			     : std::string("by name")) +
		     ", " + d.via + ")";
	}
	return s;
}

}  // namespace kvfdp::bpf
