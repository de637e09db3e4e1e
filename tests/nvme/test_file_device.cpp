// The file backend, for real: I/O through a SQE128|CQE32 io_uring on a temporary file.
#include <doctest/doctest.h>

#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "nvme/backends.hpp"
#include "nvme/uring.hpp"

using namespace kvfdp::nvme;
namespace fs = std::filesystem;

namespace {
struct Ring {
	io_uring ring{};
	bool ok = false;
	Ring() { ok = io_uring_queue_init(32, &ring, kPassthruRingFlags) == 0; }
	~Ring()
	{
		if (ok)
			io_uring_queue_exit(&ring);
	}
};

// Preps, submits and completes one request; returns complete()'s result or prep's.
int run1(io_uring &ring, IoQueue &q, IoRequest r)
{
	r.user_data = 77;
	Prep p = q.prep(ring, r);
	if (!p.queued)
		return p.result;
	io_uring_submit(&ring);
	io_uring_cqe *cqe = nullptr;
	if (io_uring_wait_cqe(&ring, &cqe) < 0)
		return -EIO;
	CHECK(cqe->user_data == 77u);
	int res = q.complete(*cqe);
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

std::string tmp_path()
{
	return (fs::temp_directory_path() / ("kvfdp-filedev-" + std::to_string(getpid()))).string();
}
}  // namespace

TEST_CASE("nvme: file backend writes, reads, zeroes, punches and flushes through io_uring")
{
	std::string path = tmp_path();
	fs::remove(path);
	FileDeviceOptions o;
	o.lba_size = 4096;
	o.size_bytes = 16u << 20;
	o.nruh = 4;
	auto dev = open_file_device(path, o);
	REQUIRE_MESSAGE(dev.ok(), (dev.ok() ? "" : dev.error().message()));
	const DeviceInfo &info = (*dev)->info();
	CHECK(info.backend == "file");
	CHECK(info.nlb == 4096u);
	CHECK(info.lba_size == 4096u);
	CHECK(fs::file_size(path) == 16u << 20);
	auto hs = (*dev)->handles();
	REQUIRE(hs.ok());
	CHECK(hs->size() == 4u);
	CHECK((*hs)[3].index == 3);
	auto lp = (*dev)->log_page(0x22);
	REQUIRE(!lp.ok());
	const uint16_t upd[] = {1};
	auto ru = (*dev)->ruh_update(upd);
	REQUIRE_FALSE(ru.ok());
	CHECK(ru.error().code == std::errc::not_supported);
	CHECK(lp.error().code == std::errc::not_supported);

	Ring r;
	REQUIRE(r.ok);
	auto q = (*dev)->open_queue(r.ring);
	REQUIRE(q.ok());

	std::vector<uint8_t> w(8 * 4096), rd(8 * 4096);
	for (size_t i = 0; i < w.size(); ++i)
		w[i] = static_cast<uint8_t>(i * 13 + 1);
	IoRequest wr;
	wr.op = IoOp::write;
	wr.handle = 2;
	wr.slba = 100;
	wr.nlb = 8;
	wr.buf = w.data();
	CHECK(run1(r.ring, **q, wr) == 0);
	IoRequest rr = wr;
	rr.op = IoOp::read;
	rr.buf = rd.data();
	CHECK(run1(r.ring, **q, rr) == 0);
	CHECK(rd == w);

	// Write zeroes over the middle 2 blocks.
	IoRequest wz;
	wz.op = IoOp::write_zeroes;
	wz.slba = 103;
	wz.nlb = 2;
	CHECK(run1(r.ring, **q, wz) == 0);
	CHECK(run1(r.ring, **q, rr) == 0);
	for (size_t i = 0; i < rd.size(); ++i) {
		bool in = i >= 3 * 4096 && i < 5 * 4096;
		if ((in && rd[i] != 0) || (!in && rd[i] != w[i])) {
			FAIL("byte " << i << " wrong after write zeroes");
			break;
		}
	}
	// Deallocate everything: reads return zeroes and the file keeps its size.
	IoRequest da;
	da.op = IoOp::deallocate;
	da.slba = 100;
	da.nlb = 8;
	CHECK(run1(r.ring, **q, da) == 0);
	CHECK(run1(r.ring, **q, rr) == 0);
	CHECK(std::all_of(rd.begin(), rd.end(), [](uint8_t b) { return b == 0; }));
	CHECK(fs::file_size(path) == 16u << 20);
	IoRequest fl;
	fl.op = IoOp::flush;
	CHECK(run1(r.ring, **q, fl) == 0);

	// Registered buffers go through read_fixed / write_fixed.
	iovec iov{w.data(), w.size()};
	REQUIRE(io_uring_register_buffers(&r.ring, &iov, 1) == 0);
	wr.buf_index = 0;
	wr.slba = 4000;
	CHECK(run1(r.ring, **q, wr) == 0);
	rr.slba = 4000;
	std::fill(rd.begin(), rd.end(), 0);
	CHECK(run1(r.ring, **q, rr) == 0);
	CHECK(rd == w);

	// Bad requests are refused without touching the ring.
	IoRequest past = rr;
	past.slba = 4090;  // 4090 + 8 > 4096
	CHECK(run1(r.ring, **q, past) == -EINVAL);
	IoRequest zero = rr;
	zero.nlb = 0;
	CHECK(run1(r.ring, **q, zero) == -EINVAL);
	IoRequest huge = rr;
	huge.slba = 0;
	huge.nlb = (info.max_transfer / 4096) + 1;
	CHECK(run1(r.ring, **q, huge) == -EINVAL);
	fs::remove(path);
}

TEST_CASE("nvme: file backend rejects bad options with a one-line error")
{
	FileDeviceOptions o;
	o.lba_size = 1000;
	auto a = open_file_device(tmp_path() + "-x", o);
	REQUIRE(!a.ok());
	CHECK(a.error().message().find("power of two") != std::string::npos);
	FileDeviceOptions e;
	std::string p = tmp_path() + "-empty";
	fs::remove(p);
	auto b = open_file_device(p, e);
	REQUIRE(!b.ok());
	CHECK(b.error().message().find("size") != std::string::npos);
	fs::remove(p);
	auto c = open_file_device("/proc/version", e);
	CHECK(!c.ok());
}
