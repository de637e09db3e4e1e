// read_config_file on a file whose read hangs, as one on an unreachable NFS server would: the
// caller gets one line after the deadline and the helper thread finishes once the file can be
// read again. The hang, without FUSE or NFS: XFS takes the inode's IOLOCK shared for a buffered
// read and exclusive for a buffered write, and a writer whose source buffer is a missing page
// of a userfaultfd region blocks in the fault with that lock held, until the test resolves the
// fault. The test knows the writer is blocked from the fault's message on the userfaultfd.
// Needs root, the loop driver, mkfs.xfs and userfaultfd.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "common/read_file.hpp"
#include "common/unique_fd.hpp"
#include "tests/bpf/test_disk.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_files.hpp"

using namespace kvfdp;
using namespace kvfdp::test;
using namespace std::chrono_literals;

namespace {

const Requires need_disk("loop", probe_scratch_disk());
const Requires need_uffd("userfaultfd", [] {
	const int fd = static_cast<int>(::syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
	if (fd < 0)
		return std::string("userfaultfd(2) failed: ") + std::strerror(errno) +
		       " (CONFIG_USERFAULTFD)";
	::close(fd);
	return std::string();
});

// A page whose first touch blocks until resolve(): the fault's message says when it happened.
struct BlockingPage {
	UniqueFd uffd;
	void *page = nullptr;
	size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

	BlockingPage()
	{
		uffd.reset(static_cast<int>(::syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK)));
		REQUIRE(uffd);
		uffdio_api api{};
		api.api = UFFD_API;
		REQUIRE(::ioctl(uffd.get(), UFFDIO_API, &api) == 0);
		page = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
		REQUIRE(page != MAP_FAILED);
		uffdio_register reg{};
		reg.range.start = reinterpret_cast<uintptr_t>(page);
		reg.range.len = size;
		reg.mode = UFFDIO_REGISTER_MODE_MISSING;
		REQUIRE(::ioctl(uffd.get(), UFFDIO_REGISTER, &reg) == 0);
	}
	~BlockingPage() { ::munmap(page, size); }

	// Waits (up to 60 s: the writer's start on a loaded host) for the fault; true when it came.
	bool wait_fault()
	{
		pollfd p{uffd.get(), POLLIN, 0};
		if (::poll(&p, 1, 60000) != 1)
			return false;
		uffd_msg msg{};
		return ::read(uffd.get(), &msg, sizeof(msg)) == static_cast<ssize_t>(sizeof(msg)) &&
		       msg.event == UFFD_EVENT_PAGEFAULT;
	}
	void resolve()
	{
		uffdio_zeropage z{};
		z.range.start = reinterpret_cast<uintptr_t>(page);
		z.range.len = size;
		REQUIRE(::ioctl(uffd.get(), UFFDIO_ZEROPAGE, &z) == 0);
	}
};

}  // namespace

TEST_CASE(
	"read_config_file: a read that hangs fails after the deadline with one line; the reader recovers")
{
	ScratchFs fs("xfs");
	REQUIRE_MESSAGE(fs.ok(), fs.why());
	const std::string path = fs.mnt() + "/kvfdp.toml";
	write_file(path, "[placement]\nshort = 1\n");
	REQUIRE(read_config_file(path).ok());
	REQUIRE(stuck_config_reads() == 0);

	// The writer holds the file's IOLOCK while it waits for the missing page.
	BlockingPage bp;
	ssize_t written = -2;
	std::thread writer([&] {
		UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
		written = fd ? ::pwrite(fd.get(), bp.page, 64, 0) : -1;
	});
	const bool faulted = bp.wait_fault();
	if (!faulted) {
		writer.detach();  // cannot be joined: fail loudly instead of hanging
		FAIL("the writer never faulted on the userfaultfd page");
	}

	auto r = read_config_file(path, kMaxConfigFileBytes, 1000ms);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().code == std::make_error_code(std::errc::timed_out));
	const std::string m = r.error().message();
	INFO(m);
	CHECK(m.find("reading " + path + " did not finish within 1 s") != std::string::npos);
	CHECK(m.find("fix the mount") != std::string::npos);
	CHECK(m.find('\n') == std::string::npos);
	CHECK(stuck_config_reads() == 1);

	// Helpers that never returned are bounded: past the cap a read is refused at once.
	for (int i = 1; i < kMaxStuckConfigReads; i++)
		CHECK_FALSE(read_config_file(path, kMaxConfigFileBytes, 1000ms).ok());
	CHECK(stuck_config_reads() == kMaxStuckConfigReads);
	const auto t0 = std::chrono::steady_clock::now();
	auto capped = read_config_file(path, kMaxConfigFileBytes, 60s);
	REQUIRE_FALSE(capped.ok());
	CHECK(capped.error().message().find("earlier reads of config files have not returned") !=
	      std::string::npos);
	CHECK(std::chrono::steady_clock::now() - t0 < 60s);  // refused, not waited for

	// The filesystem comes back: the writer and every stuck helper finish.
	bp.resolve();
	writer.join();
	CHECK(written == 64);
	// The stuck helpers return on their own once the lock is free (a bounded wait for them,
	// generous for a loaded host); then reads work again.
	for (int i = 0; i < 6000 && stuck_config_reads() > 0; i++)
		std::this_thread::sleep_for(10ms);
	CHECK(stuck_config_reads() == 0);
	auto again = read_config_file(path);
	REQUIRE_MESSAGE(again.ok(), (again.ok() ? "" : again.error().message()));
	CHECK(*again ==
	      std::string(64, '\0'));  // what the writer left: its 64 zero bytes over the 22
}
