// kvfdp-nvme-vmcheck: guest-side check of the NVMe layer against QEMU's FDP namespace.
//   kvfdp-nvme-vmcheck /dev/ngXnY --nruh N [--capture DIR]   full check, exit 0 iff all pass
//   kvfdp-nvme-vmcheck --expect-error TEXT PATH [--as-uid U]  discovery of PATH (as uid U)
//                                                            must fail with an error
//                                                            containing TEXT
//   kvfdp-nvme-vmcheck --expect-ruh-error TEXT PATH           RUH Status of PATH must fail so
// Prints "ok: ..." / "FAIL: ..." lines, and a JSON summary to stdout's last line.
#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <span>
#include <string>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

#include "nvme/backends.hpp"
#include "nvme/commands.hpp"
#include "nvme/discovery.hpp"
#include "nvme/logs.hpp"
#include "nvme/status.hpp"
#include "nvme/uring.hpp"
#include "tests/nvme/sync_io.hpp"

using namespace kvfdp;
using namespace kvfdp::nvme;

namespace {

int failures = 0;
int checks = 0;

void check(bool ok, const std::string &what)
{
	++checks;
	std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
	if (!ok)
		++failures;
}

std::string u128s(u128 v)
{
	if (v == 0)
		return "0";
	std::string s;
	while (v) {
		s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
		v /= 10;
	}
	return s;
}

bool save(const std::string &dir, const std::string &name, const std::vector<uint8_t> &b)
{
	std::string p = dir + "/" + name;
	FILE *f = std::fopen(p.c_str(), "wb");
	if (!f)
		return false;
	bool ok = std::fwrite(b.data(), 1, b.size(), f) == b.size();
	return std::fclose(f) == 0 && ok;
}

// Runs reqs through queue on ring, fixed buffers or not, and returns each result.
std::vector<int> run_queue(io_uring &ring, IoQueue &q, std::vector<IoRequest> reqs)
{
	std::vector<int> res(reqs.size(), -EINPROGRESS);
	size_t queued = 0;
	for (size_t i = 0; i < reqs.size(); ++i) {
		reqs[i].user_data = 1000 + i;
		Prep p = q.prep(ring, reqs[i]);
		if (p.queued)
			++queued;
		else
			res[i] = p.result;
	}
	io_uring_submit(&ring);
	while (queued > 0) {
		io_uring_cqe *cqe = nullptr;
		if (io_uring_wait_cqe(&ring, &cqe) < 0)
			break;
		size_t i = cqe->user_data - 1000;
		int r = q.complete(*cqe);
		if (i < res.size())
			res[i] = r;
		io_uring_cqe_seen(&ring, cqe);
		--queued;
	}
	return res;
}

Result<FdpStats> stats(Device &dev)
{
	auto b = dev.log_page(kLidFdpStats);
	if (!b)
		return b.error();
	return parse_fdp_stats(*b);
}

// Prints an expected error and checks that it holds text and is one line; the exit status.
int check_error_text(const std::string &msg, const std::string &text, const std::string &what)
{
	std::printf("error: %s\n", msg.c_str());
	check(msg.find(text) != std::string::npos, what + " mentions '" + text + "'");
	check(msg.find('\n') == std::string::npos, what + " is one line");
	return failures ? 1 : 0;
}

int expect_error(const std::string &text, const std::string &path)
{
	auto d = open_passthru_device(path);
	if (d) {
		check(false, "discovery of " + path + " should fail");
		return 1;
	}
	return check_error_text(d.error().message(), text, "error for " + path);
}

// A buffer of whole pages, none physically adjacent to the one before it (each is every
// other page of a larger area, moved into place with mremap): the worst case for a queue's
// max_segments, deterministically. For tests only.
class ScatteredBuf {
public:
	explicit ScatteredBuf(size_t bytes) : pages_((bytes + 4095) / 4096)
	{
		size_t n = pages_;
		void *src = mmap(nullptr, 2 * n * 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		void *dst = mmap(nullptr, n * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (src == MAP_FAILED || dst == MAP_FAILED)
			return;
		auto *s = static_cast<uint8_t *>(src);
		madvise(s, 2 * n * 4096, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < 2 * n; ++i)
			s[i * 4096] = 1;  // fault every page in, in order
		base_ = static_cast<uint8_t *>(dst);
		for (size_t i = 0; i < n; ++i)
			if (mremap(s + (2 * i + 1) * 4096, 4096, 4096,
				   MREMAP_MAYMOVE | MREMAP_FIXED, base_ + i * 4096) == MAP_FAILED)
				ok_ = false;
		munmap(s, 2 * n * 4096);  // the even pages; the odd ones live on at base_
		std::memset(base_, 0, n * 4096);
	}
	~ScatteredBuf()
	{
		if (base_)
			munmap(base_, pages_ * 4096);
	}
	ScatteredBuf(const ScatteredBuf &) = delete;
	ScatteredBuf &operator=(const ScatteredBuf &) = delete;
	[[nodiscard]] bool ok() const { return base_ && ok_; }
	[[nodiscard]] uint8_t *data() { return base_; }
	[[nodiscard]] uint32_t pages() const { return static_cast<uint32_t>(pages_); }
	// How many pages follow their predecessor physically (/proc/self/pagemap; 0 expected).
	[[nodiscard]] uint32_t adjacent_pages() const
	{
		int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || !base_)
			return 0;
		uint32_t adj = 0;
		uint64_t prev = 0;
		for (size_t i = 0; i < pages_; ++i) {
			uint64_t e = 0;
			uintptr_t va = reinterpret_cast<uintptr_t>(base_) + i * 4096;
			if (pread(fd, &e, sizeof e, static_cast<off_t>(va / 4096 * sizeof e)) != 8)
				break;
			uint64_t pfn = e & ((uint64_t{1} << 55) - 1);
			if (i && pfn && pfn == prev + 1)
				++adj;
			prev = pfn;
		}
		close(fd);
		return adj;
	}

private:
	size_t pages_;
	uint8_t *base_ = nullptr;
	bool ok_ = true;
};

// Offset of the worst-case buffers into their first page (DMA-aligned, not page-aligned).
constexpr uint32_t kSkew = 16;

// RUH Status on path must fail with an error containing text (a namespace without FDP:
// the device answers FDP Disabled, SC 0x29).
int expect_ruh_error(const std::string &text, const std::string &path)
{
	auto names = parse_ng_path(path);
	if (!names) {
		check(false, "parse " + path + ": " + names.error().message());
		return 1;
	}
	UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
	if (!fd) {
		check(false, "open " + path + ": " + std::strerror(errno));
		return 1;
	}
	uint32_t nsid = static_cast<uint32_t>(std::strtoul(
		names->ng_name.substr(names->ng_name.rfind('n') + 1).c_str(), nullptr, 10));
	auto rs = read_ruh_status(fd.get(), nsid);
	if (rs) {
		check(false, "RUH Status on " + path + " should fail");
		return 1;
	}
	return check_error_text(rs.error().message(), text, "RUH Status error for " + path);
}

// What the checks share: the device and its handles, a queue on the ring, and the buffers
// of the placed writes (wbuf) and reads (rbuf).
struct Session {
	std::string path;
	Device *dev = nullptr;
	DeviceInfo info;
	std::vector<Handle> hs0;  // RUH Status at the start
	size_t nh = 0;
	io_uring ring{};
	bool ring_live = false;
	std::unique_ptr<IoQueue> q;
	uint32_t lba = 0;
	uint32_t per = 8;  // blocks per handle write
	size_t buf_len = 0;
	uint8_t *wbuf = nullptr, *rbuf = nullptr;
	std::vector<IoRequest> writes, reads;

	Session() = default;
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;
	~Session()
	{
		if (ring_live)
			io_uring_queue_exit(&ring);
	}
};

// Prints the device and its handles; false when the device cannot be checked further.
bool check_discovery(Session &s, int want_nruh)
{
	const DeviceInfo &info = s.info;
	std::printf("device %s nsid %u lba %u nlb %llu max_transfer %u fdp %d/%d endgid %u rgif %u "
		    "nrg %u nruh %u runs %llu config %u\n",
		    info.path.c_str(), info.nsid, info.lba_size,
		    static_cast<unsigned long long>(info.nlb), info.max_transfer,
		    info.fdp_supported, info.fdp_enabled, info.endgid, info.rgif, info.nrg,
		    info.nruh, static_cast<unsigned long long>(info.ru_size), info.config_index);
	check(info.fdp_supported && info.fdp_enabled, "FDP supported and enabled");
	if (want_nruh >= 0)
		check(info.nruh == want_nruh, "configuration has " + std::to_string(want_nruh) +
						      " handles (got " + std::to_string(info.nruh) +
						      ")");
	auto hs0 = s.dev->handles();
	if (!hs0) {
		std::printf("FAIL: handles: %s\n", hs0.error().message().c_str());
		return false;
	}
	s.hs0 = *hs0;
	s.nh = hs0->size();
	const size_t nh = s.nh;
	check(nh == size_t{info.nruh} * info.nrg,
	      "RUH Status has nruh x nrg = " + std::to_string(nh) + " descriptors");
	for (const auto &h : *hs0)
		std::printf("  handle %u pid 0x%04x ruhid %u ruht %u earutr %u ruamw %llu\n",
			    h.index, h.pid, h.ruhid, h.ruht, h.earutr,
			    static_cast<unsigned long long>(h.ruamw));
	check(info.max_transfer >= info.lba_size, "max_transfer holds a block");
	return true;
}

// The ring, the device's queue on it, and two buffers, registered; false on a fatal error.
bool open_ring(Session &s)
{
	const DeviceInfo &info = s.info;
	int ret = io_uring_queue_init(64, &s.ring, kPassthruRingFlags);
	if (ret < 0) {
		std::printf("FAIL: io_uring_queue_init: %s\n", std::strerror(-ret));
		return false;
	}
	s.ring_live = true;
	auto qr = s.dev->open_queue(s.ring);
	if (!qr) {
		std::printf("FAIL: open_queue: %s\n", qr.error().message().c_str());
		return false;
	}
	s.q = std::move(*qr);
	s.lba = info.lba_size;
	s.buf_len = size_t{s.per} * s.lba * s.nh * 2;
	void *wmem = nullptr, *rmem = nullptr;
	if (posix_memalign(&wmem, 4096, s.buf_len) || posix_memalign(&rmem, 4096, s.buf_len))
		return false;
	s.wbuf = static_cast<uint8_t *>(wmem);
	s.rbuf = static_cast<uint8_t *>(rmem);
	for (size_t i = 0; i < s.buf_len; ++i)
		s.wbuf[i] = static_cast<uint8_t>((i * 131 + i / 4096) ^ 0x5A);
	// Registrations of at most max_segments pages: Linux 6.1 refuses a fixed-buffer command
	// when the registration holds more pages from the command's start on (docs/nvme.md).
	size_t reg_len = info.max_segments ? std::min(s.buf_len, size_t{info.max_segments} * 4096)
					   : s.buf_len;
	iovec iov[2] = {{s.wbuf, reg_len}, {s.rbuf, reg_len}};
	ret = io_uring_register_buffers(&s.ring, iov, 2);
	check(ret == 0, "register two fixed buffers");
	return true;
}

// A placed write on each handle: only that handle's RUAMW drops, HBMW and MBMW grow.
void check_placed_writes(Session &s)
{
	Device &dev = *s.dev;
	IoQueue &q = *s.q;
	const size_t nh = s.nh;
	const uint32_t per = s.per, lba = s.lba;
	auto st0 = stats(dev);
	check(st0.ok(), "read FDP statistics log");
	for (size_t h = 0; h < nh; ++h) {
		IoRequest r;
		r.op = IoOp::write;
		r.handle = static_cast<uint16_t>(h);
		r.nlb = per;
		r.slba = 4096 + h * 64;
		r.buf = s.wbuf + h * per * lba;
		r.buf_index = (h % 2) ? 0 : -1;  // odd handles through the fixed buffer
		s.writes.push_back(r);
	}
	for (size_t h = 0; h < nh; ++h) {
		auto before = dev.handles();
		auto res = run_queue(s.ring, q, {s.writes[h]});
		auto after = dev.handles();
		check(res[0] == 0, "write " + std::to_string(per) + " LBAs on handle " +
					   std::to_string(h) + ": " + describe_result(res[0]));
		if (!before || !after || after->size() != nh) {
			check(false, "RUH Status around the write");
			continue;
		}
		bool only = true;
		for (size_t k = 0; k < nh; ++k) {
			uint64_t b = (*before)[k].ruamw, a = (*after)[k].ruamw;
			uint64_t want = k == h ? b - per : b;
			if (a != want) {
				only = false;
				std::printf("  handle %zu ruamw %llu -> %llu (want %llu)\n", k,
					    static_cast<unsigned long long>(b),
					    static_cast<unsigned long long>(a),
					    static_cast<unsigned long long>(want));
			}
		}
		check(only, "handle " + std::to_string(h) + " RUAMW dropped by exactly " +
				    std::to_string(per) + ", the others unchanged");
	}
	auto st1 = stats(dev);
	if (st0 && st1) {
		u128 d = st1->hbmw - st0->hbmw;
		u128 want = u128{per} * lba * nh;
		check(d == want,
		      "HBMW grew by the bytes written (" + u128s(d) + " = " + u128s(want) + ")");
		check(st1->mbmw > st0->mbmw, "MBMW grew (" + u128s(st1->mbmw - st0->mbmw) + ")");
	}
}

// RUH Update (I/O Management Send, MO 1): one handle, two PIDs, all, and refusals.
void check_ruh_update(Session &s)
{
	Device &dev = *s.dev;
	IoQueue &q = *s.q;
	io_uring &ring = s.ring;
	const DeviceInfo &info = s.info;
	const std::string &path = s.path;
	const auto *hs0 = &s.hs0;
	const size_t nh = s.nh;
	const uint32_t lba = s.lba;
	const std::vector<IoRequest> &writes = s.writes;
	// Every handle holds a partly written RU now. QEMU (hw/nvme/ctrl.c) resets the RU's
	// RUAMW to a full RU, adds the unwritten rest to MBMW (the eventual GC cost), and
	// refuses NPID >= min(128, nrg x nruh) with Invalid Field: ruh_update_batch().
	{
		const uint64_t full = info.ru_size / lba;
		auto b = dev.handles();
		auto sb = stats(dev);
		const uint16_t h0[] = {0};
		auto u = dev.ruh_update(h0);
		check(u.ok(),
		      "RUH Update of handle 0" + (u ? std::string() : ": " + u.error().message()));
		auto a = dev.handles();
		auto sa = stats(dev);
		if (b && a && a->size() == nh) {
			check((*a)[0].ruamw == full, "handle 0's RUAMW is back to a full RU (" +
							     std::to_string((*a)[0].ruamw) +
							     " of " + std::to_string(full) +
							     " LBAs)");
			bool same = true;
			for (size_t k = 1; k < nh; ++k)
				same = same && (*a)[k].ruamw == (*b)[k].ruamw;
			check(same, "the other handles' RUAMW is unchanged");
			if (sb && sa)
				check(sa->mbmw - sb->mbmw == u128{(*b)[0].ruamw} * lba,
				      "MBMW grew by the RU's unwritten rest (" +
					      u128s(sa->mbmw - sb->mbmw) + " bytes)");
		} else {
			check(false, "RUH Status around the RUH Update");
		}
		UniqueFd ng(open(path.c_str(), O_RDWR | O_CLOEXEC));
		if (nh >= 3) {
			// Two PIDs in one command (NPID 1, CDW10 bits 31:16).
			uint16_t two[2] = {(*hs0)[1].pid, (*hs0)[2].pid};
			int r = io_ioctl(ng.get(), make_io_mgmt_send(info.nsid, two, 2));
			auto a2 = dev.handles();
			check(r == 0 && a2 && (*a2)[1].ruamw == full && (*a2)[2].ruamw == full,
			      "one RUH Update with two PIDs resets both handles: " +
				      describe_result(r));
		}
		// Every PID in one command: QEMU refuses NPID == nrg x nruh (its bound is off by one).
		std::vector<uint16_t> all;
		for (const auto &h : *hs0)
			all.push_back(h.pid);
		int rall = io_ioctl(ng.get(), make_io_mgmt_send(info.nsid, all.data(),
								static_cast<uint16_t>(all.size())));
		std::printf("  RUH Update with all %zu PIDs in one command: %s\n", all.size(),
			    describe_result(rall).c_str());
		check(rall > 0 && NvmeStatus{static_cast<uint16_t>(rall)}.sc() == kScInvalidField,
		      "QEMU refuses NPID = handles with Invalid Field (ruh_update_batch() stays below)");
		// Through the Device, in batches: every handle, written or not.
		std::vector<uint16_t> idx(nh);
		for (size_t k = 0; k < nh; ++k)
			idx[k] = static_cast<uint16_t>(k);
		auto ua = dev.ruh_update(idx);
		auto a3 = dev.handles();
		bool allfull = ua.ok() && a3;
		for (size_t k = 0; allfull && k < nh; ++k)
			allfull = (*a3)[k].ruamw == full;
		check(allfull, "RUH Update of all " + std::to_string(nh) +
				       " handles in batches of " +
				       std::to_string(ruh_update_batch(nh)) + " resets every one" +
				       (ua ? std::string() : ": " + ua.error().message()));
		// A PID the namespace does not have: decoded, and the device keeps working.
		uint16_t badpid = 0x7FFF;
		int rb = io_ioctl(ng.get(), make_io_mgmt_send(info.nsid, &badpid, 1));
		std::string why = rb > 0 ? ruh_update_refusal(NvmeStatus{static_cast<uint16_t>(rb)})
					 : describe_result(rb);
		std::printf("  RUH Update of PID 0x7fff: %s\n", why.c_str());
		check(rb > 0 && why.find("refused a placement identifier") != std::string::npos,
		      "an unknown PID is refused with Invalid Field, decoded");
		const uint16_t badidx[] = {static_cast<uint16_t>(nh)};
		auto ub = dev.ruh_update(badidx);
		check(!ub.ok() && ub.error().code == std::errc::invalid_argument,
		      "RUH Update of handle index " + std::to_string(nh) +
			      " is refused before the drive");
		auto wr = run_queue(ring, q, {writes[0]});
		check(wr[0] == 0,
		      "a placed write after the refusals succeeds: " + describe_result(wr[0]));
	}
}

// Read back, alternating fixed / plain buffers: the data matches.
void check_read_back(Session &s)
{
	const size_t nh = s.nh;
	const uint32_t per = s.per, lba = s.lba;
	for (size_t h = 0; h < nh; ++h) {
		IoRequest r = s.writes[h];
		r.op = IoOp::read;
		r.buf = s.rbuf + h * per * lba;
		r.buf_index = (h % 2) ? -1 : 1;
		s.reads.push_back(r);
	}
	std::memset(s.rbuf, 0, s.buf_len);
	auto rr = run_queue(s.ring, *s.q, s.reads);
	bool all = true;
	for (int r : rr)
		all = all && r == 0;
	check(all,
	      "read back every handle's blocks (batched, " + std::to_string(nh) + " commands)");
	check(std::memcmp(s.rbuf, s.wbuf, size_t{per} * lba * nh) == 0, "read-back data matches");
}

// A write on a handle the namespace does not have is refused before the drive.
void check_bad_handle(Session &s)
{
	IoRequest bad = s.writes[0];
	bad.handle = static_cast<uint16_t>(s.nh);
	auto br = run_queue(s.ring, *s.q, {bad});
	check(br[0] == -EINVAL, "write on handle index " + std::to_string(s.nh) +
					" (no such handle) is refused: " + describe_result(br[0]));
}

// An unknown opcode and a read past the end come back as decoded NVMe statuses.
void check_bad_commands(Session &s, UringPassthru &u, int ngfd)
{
	const DeviceInfo &info = s.info;
	uint8_t *rbuf = s.rbuf;
	const uint32_t lba = s.lba;
	UringCmd badop{};
	badop.opcode = 0x7F;
	badop.nsid = info.nsid;
	int r1 = u.run(ngfd, kUringCmdIo, badop);
	std::printf("  opcode 0x7F: %s\n", describe_result(r1).c_str());
	check(r1 > 0 && NvmeStatus{static_cast<uint16_t>(r1)}.sc() == kScInvalidOpcode,
	      "unknown opcode returns NVMe status Invalid Command Opcode");
	int r2 = u.run(ngfd, kUringCmdIo, make_read(info.nsid, info.nlb, 1, rbuf, lba));
	std::printf("  read past the end: %s\n", describe_result(r2).c_str());
	check(r2 > 0 && NvmeStatus{static_cast<uint16_t>(r2)}.sc() == kScLbaOutOfRange,
	      "read past the namespace returns LBA Out of Range");
	check(r2 > 0 && NvmeStatus{static_cast<uint16_t>(r2)}.dnr(), "... with DNR set");
}

// Oversized and worst-case I/O: one command over max_transfer is refused, one of
// max_transfer from a scattered buffer works, split (sync_rw) and into a fixed buffer too.
// Returns the result of the max_transfer write.
int check_transfer_limits(Session &s, UringPassthru &u, int ngfd)
{
	const DeviceInfo &info = s.info;
	const auto *hs0 = &s.hs0;
	const uint32_t lba = s.lba;
	// Oversized and worst-case I/O. The buffers start 16 bytes into a page whose
	// neighbours are not physically adjacent: every page is a segment of its own, and an
	// n-page transfer spans n + 1 pages. A malloc'd buffer is like that only by chance,
	// which is how a limit that ignored max_segments passed some runs and failed others.
	std::printf("  limits: max_transfer %u, max_segments %u\n", info.max_transfer,
		    info.max_segments);
	check(info.max_segments > 0, "discovery read the queue's max_segments");
	uint32_t big = info.max_transfer * 2 + lba;  // oversized if sent as one command
	ScatteredBuf sw(big + kSkew), sr(big + kSkew);
	check(sw.ok() && sr.ok(), "map two scattered-page buffers");
	uint8_t *bw = sw.data() + kSkew, *brd = sr.data() + kSkew;
	for (size_t i = 0; i < big; ++i)
		bw[i] = static_cast<uint8_t>(i * 7 + 3);
	std::printf("  scattered buffer: %u of %u pages physically adjacent to the previous\n",
		    sw.adjacent_pages(), sw.pages());
	uint32_t bnlb = big / lba;
	int r3 = u.run(ngfd, kUringCmdIo,
		       make_write(info.nsid, 65536, bnlb, bw, big, (*hs0)[0].pid));
	std::printf("  one %u-byte write (limit %u): %s\n", big, info.max_transfer,
		    describe_result(r3).c_str());
	check(r3 != 0, "a single command larger than max_transfer is rejected");
	uint32_t mnlb = info.max_transfer / lba;
	int rmax = u.run(ngfd, kUringCmdIo,
			 make_write(info.nsid, 65536, mnlb, bw, info.max_transfer, (*hs0)[0].pid));
	check(rmax == 0, "one max_transfer write from an unaligned, scattered buffer succeeds: " +
				 describe_result(rmax));
	int r4 = test::sync_rw(u, ngfd, info.nsid, true, 65536, bnlb, bw, lba, info.max_transfer,
			       (*hs0)[0].pid);
	int r5 = test::sync_rw(u, ngfd, info.nsid, false, 65536, bnlb, brd, lba, info.max_transfer);
	check(r4 == 0 && r5 == 0,
	      "the same I/O split into " +
		      std::to_string((big + info.max_transfer - 1) / info.max_transfer) +
		      " commands succeeds: " + describe_result(r4) + " / " + describe_result(r5));
	check(std::memcmp(bw, brd, big) == 0, "split write reads back intact");
	// The same through a fixed buffer: a registration of at most max_segments pages
	// (Linux 6.1 counts the registration's pages from the command's start on), the
	// command starting one block in.
	uint32_t fpages = std::min<uint32_t>(info.max_segments ? info.max_segments : 1,
					     (lba + info.max_transfer + 4095) / 4096);
	iovec fiov{sw.data(), size_t{fpages} * 4096};
	int fr = u.register_buffers(std::span<const iovec>(&fiov, 1));
	int rfix = fr;
	if (fr == 0) {
		uint8_t *fp = sw.data() + lba;
		if (!u.queue(ngfd, kUringCmdIo,
			     make_read(info.nsid, 65536, mnlb, fp, info.max_transfer), 8, 0) ||
		    u.submit() < 0)
			rfix = -EIO;
		else
			u.reap(1, [&](uint64_t, int res, uint32_t) { rfix = res; });
		u.unregister_buffers();
	}
	check(rfix == 0, "one max_transfer read into a fixed buffer of " + std::to_string(fpages) +
				 " scattered pages succeeds: " + describe_result(rfix));
	return rmax;
}

// Admin over uring: refused on the ng device (a decoded -errno), works on the controller char
// device and returns the same Identify data as the ioctl. rmax: check_transfer_limits'
// result, which the last line prints (as it always has).
void check_admin_uring(Session &s, UringPassthru &u, int ngfd, int rmax)
{
	const std::string &path = s.path;
	// Admin over uring: refused on the ng device (a decoded -errno), works on the
	// controller char device and returns the same Identify data as the ioctl.
	std::vector<uint8_t> id(kIdentifySize), id2(kIdentifySize);
	int r6 = u.run(ngfd, kUringCmdAdmin, make_identify(kCnsController, 0, id.data()));
	std::printf("  admin uring_cmd on %s: %s\n", path.c_str(), describe_result(r6).c_str());
	check(classify_result(r6) == ResultKind::os_error,
	      "admin uring_cmd on the ng device is a decoded errno");
	auto d = discover(path);
	if (d && !d->names.ctrl_name.empty()) {
		std::string cpath = "/dev/" + d->names.ctrl_name;
		int cfd = open(cpath.c_str(), O_RDWR | O_CLOEXEC);
		int r7 = u.run(cfd, kUringCmdAdmin, make_identify(kCnsController, 0, id.data()));
		admin_ioctl(d->admin_fd.get(), make_identify(kCnsController, 0, id2.data()));
		check(r7 == 0 && id == id2, "admin uring_cmd Identify on " + cpath +
						    " matches the ioctl: " + describe_result(rmax));
		if (cfd >= 0)
			close(cfd);
	} else {
		check(false, "controller of " + path + " found through sysfs");
	}
}

// Invalid requests and commands: decoded, not crashes; then the transfer limits and admin
// commands over a ring of its own.
void check_invalid(Session &s)
{
	check_bad_handle(s);
	auto up = UringPassthru::create(16);
	if (!up) {
		check(false, "UringPassthru::create: " + up.error().message());
		return;
	}
	int ngfd = open(s.path.c_str(), O_RDWR | O_CLOEXEC);
	check_bad_commands(s, *up, ngfd);
	const int rmax = check_transfer_limits(s, *up, ngfd);
	check_admin_uring(s, *up, ngfd, rmax);
	close(ngfd);
}

// Write zeroes, deallocate and flush through the queue; the zeroed blocks read as zeroes;
// the FDP logs parse.
void check_zeroes_and_logs(Session &s)
{
	Device &dev = *s.dev;
	const DeviceInfo &info = s.info;
	io_uring &ring = s.ring;
	IoQueue &q = *s.q;
	const size_t nh = s.nh;
	const uint32_t per = s.per, lba = s.lba;
	const std::vector<IoRequest> &writes = s.writes, &reads = s.reads;
	uint8_t *rbuf = s.rbuf;
	IoRequest wz;
	wz.op = IoOp::write_zeroes;
	wz.slba = writes[0].slba;
	wz.nlb = per;
	IoRequest da;
	da.op = IoOp::deallocate;
	da.slba = writes[1 % nh].slba;
	da.nlb = per;
	IoRequest fl;
	fl.op = IoOp::flush;
	auto zr = run_queue(ring, q, {wz, da, fl});
	check(zr[0] == 0, "write zeroes: " + describe_result(zr[0]));
	check(zr[1] == 0, "deallocate (DSM): " + describe_result(zr[1]));
	check(zr[2] == 0, "flush: " + describe_result(zr[2]));
	IoRequest rz = reads[0];
	std::memset(rbuf, 0xFF, size_t{per} * lba);
	auto rzr = run_queue(ring, q, {rz});
	bool zero = rzr[0] == 0;
	for (size_t i = 0; i < size_t{per} * lba && zero; ++i)
		zero = rbuf[i] == 0;
	check(zero, "zeroed blocks read back as zeroes");

	auto ev = dev.log_page(kLidFdpEvents, kLspFdpHostEvents);
	check(ev.ok() && parse_fdp_events(*ev).ok(), "FDP events log parses");
	auto cf = dev.log_page(kLidFdpConfigs);
	check(cf.ok() && parse_fdp_configs(*cf).ok(), "FDP configurations log parses");
	auto us = dev.log_page(kLidRuhUsage);
	auto usp = us ? parse_ruh_usage(*us) : Result<std::vector<uint8_t>>(us.error());
	check(usp.ok() && usp->size() == info.nruh, "RUH usage log lists every handle");
}

// Raw replies for the unit-test fixtures (tests/nvme/fixtures/), taken after the writes so
// RUAMW, HBMW and MBMW are not all at their initial values.
void capture_fixtures(Session &s, const std::string &capture)
{
	Device &dev = *s.dev;
	const DeviceInfo &info = s.info;
	const std::string &path = s.path;
	const size_t nh = s.nh;
	auto d = discover(path);
	if (d) {
		std::vector<uint8_t> id(kIdentifySize);
		admin_ioctl(d->admin_fd.get(), make_identify(kCnsController, 0, id.data()));
		save(capture, "id_ctrl.bin", id);
		std::fill(id.begin(), id.end(), 0);
		admin_ioctl(d->admin_fd.get(), make_identify(kCnsNamespace, info.nsid, id.data()));
		save(capture, "id_ns.bin", id);
		std::vector<uint8_t> rs(ruh_status_size(nh));
		io_ioctl(d->ng_fd.get(),
			 make_io_mgmt_recv(info.nsid, rs.data(), static_cast<uint32_t>(rs.size())));
		save(capture, "ruh_status.bin", rs);
	}
	for (uint8_t lid = kLidFdpConfigs; lid <= kLidFdpEvents; ++lid) {
		auto b = dev.log_page(lid, lid == kLidFdpEvents ? kLspFdpHostEvents : 0);
		if (b) {
			char name[32];
			std::snprintf(name, sizeof(name), "log_%02x.bin", lid);
			save(capture, name, *b);
		}
	}
}

}  // namespace

int main(int argc, char **argv)
{
	std::string path, capture;
	int want_nruh = -1;
	for (int i = 1; i < argc; ++i) {
		std::string a = argv[i];
		if (a == "--expect-error" && i + 2 < argc) {
			if (i + 4 < argc && std::string(argv[i + 3]) == "--as-uid") {
				auto id = static_cast<uid_t>(std::atoi(argv[i + 4]));
				if (setgid(id) != 0 || setuid(id) != 0) {
					std::printf("FAIL: cannot drop to uid %u: %s\n", id,
						    std::strerror(errno));
					return 1;
				}
			}
			return expect_error(argv[i + 1], argv[i + 2]);
		}
		if (a == "--expect-ruh-error" && i + 2 < argc)
			return expect_ruh_error(argv[i + 1], argv[i + 2]);
		if (a == "--nruh" && i + 1 < argc)
			want_nruh = std::atoi(argv[++i]);
		else if (a == "--capture" && i + 1 < argc)
			capture = argv[++i];
		else
			path = a;
	}
	if (path.empty()) {
		std::fprintf(stderr,
			     "usage: kvfdp-nvme-vmcheck /dev/ngXnY [--nruh N] [--capture DIR]\n"
			     "       kvfdp-nvme-vmcheck --expect-error TEXT PATH\n");
		return 2;
	}

	auto devr = open_passthru_device(path);
	if (!devr) {
		std::printf("FAIL: discovery: %s\n", devr.error().message().c_str());
		return 1;
	}
	Session s;
	s.path = path;
	s.dev = devr->get();
	s.info = s.dev->info();
	if (!check_discovery(s, want_nruh) || !open_ring(s))
		return 1;
	check_placed_writes(s);
	check_ruh_update(s);
	check_read_back(s);
	check_invalid(s);
	check_zeroes_and_logs(s);
	if (!capture.empty())
		capture_fixtures(s, capture);

	std::printf("{\"checks\": %d, \"failures\": %d, \"lba\": %u, \"handles\": %zu, "
		    "\"max_transfer\": %u}\n",
		    checks, failures, s.lba, s.nh, s.info.max_transfer);
	return failures ? 1 : 0;
}
