// The streams backend's host-side parts: the SQE's write_stream byte, the handle -> stream map
// the NVMe driver uses, and the sysfs check (from fixture directories) that refuses a kernel
// or namespace without write streams. Its I/O runs in the 6.18 guest (vm_daemon_streams).
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "nvme/backends.hpp"
#include "nvme/streams.hpp"

using namespace kvfdp::nvme;
namespace fs = std::filesystem;

namespace {
// A fake /sys with block/<name>/queue/ holding the given attributes ("" = absent).
struct SysFixture {
	fs::path root;
	explicit SysFixture(const std::string &name, const std::string &streams,
			    const std::string &gran = "")
	    : root(fs::temp_directory_path() /
		   ("kvfdp-streams-" + std::to_string(getpid()) + "-" + name))
	{
		fs::remove_all(root);
		fs::create_directories(root / "block" / name / "queue");
		if (!streams.empty())
			std::ofstream(root / "block" / name / "queue" / "max_write_streams")
				<< streams << "\n";
		if (!gran.empty())
			std::ofstream(root / "block" / name / "queue" / "write_stream_granularity")
				<< gran << "\n";
	}
	~SysFixture() { fs::remove_all(root); }
};
}  // namespace

TEST_CASE("streams: write_stream is byte 44 of the SQE, and prep clears it")
{
	io_uring_sqe sqe;
	std::memset(&sqe, 0, sizeof(sqe));
	set_sqe_write_stream(&sqe, 7);
	const auto *b = reinterpret_cast<const uint8_t *>(&sqe);
	CHECK(b[44] == 7);
	for (size_t i = 0; i < sizeof(sqe); ++i)
		if (i != 44)
			CHECK(b[i] == 0);
	// The union's low byte on a little-endian host, as the kernel reads sqe->write_stream.
	CHECK((sqe.file_index & 0xff) == 7u);
	// io_uring_prep_* zero the union: the stream must be set after the prep.
	char buf[16];
	io_uring_prep_write(&sqe, 3, buf, sizeof(buf), 0);
	CHECK(b[44] == 0);
	set_sqe_write_stream(&sqe, 2);
	CHECK(b[44] == 2);
	CHECK(sqe.opcode == IORING_OP_WRITE);
	CHECK(sqe.fd == 3);
}

TEST_CASE("streams: handle h goes on stream h + 1, as nvme_setup_rw uses plids[stream - 1]")
{
	CHECK(stream_of_handle(0, 8) == 1);
	CHECK(stream_of_handle(5, 8) == 6);
	CHECK(stream_of_handle(7, 8) == 8);
	CHECK(stream_of_handle(8, 8) == 0);  // beyond the namespace's streams: none
	CHECK(stream_of_handle(0, 0) == 0);
	CHECK(stream_of_handle(254, 255) == 255);
	CHECK(stream_of_handle(255, 255) == 0);
}

TEST_CASE("streams: the stream map from a sysfs fixture")
{
	SysFixture s("nvme0n1", "8", "1048576");
	auto ws = read_write_streams("nvme0n1", s.root.string());
	REQUIRE(ws);
	CHECK(ws->max_streams == 8);
	CHECK(ws->granularity == 1048576u);
	// The map kvfdpd uses: every handle of the namespace on its own stream, 1..8.
	for (uint16_t h = 0; h < ws->max_streams; ++h)
		CHECK(stream_of_handle(h, ws->max_streams) == h + 1);
	CHECK(stream_of_handle(ws->max_streams, ws->max_streams) == 0);
}

TEST_CASE("streams: a namespace with max_write_streams 0 is refused with one line naming passthru")
{
	SysFixture s("nvme1n1", "0");
	auto ws = read_write_streams("nvme1n1", s.root.string());
	REQUIRE(!ws);
	const std::string m = ws.error().message();
	CHECK(m.find("max_write_streams is 0") != std::string::npos);
	CHECK(m.find("--backend passthru") != std::string::npos);
	CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE(
	"streams: a kernel without max_write_streams (before 6.16) is refused with one line naming passthru")
{
	SysFixture s("nvme2n1", "");
	auto ws = read_write_streams("nvme2n1", s.root.string());
	REQUIRE(!ws);
	const std::string m = ws.error().message();
	CHECK(m.find("6.16") != std::string::npos);
	CHECK(m.find("--backend passthru") != std::string::npos);
	CHECK(m.find('\n') == std::string::npos);
	// A garbage value is no stream count either.
	SysFixture g("nvme3n1", "many");
	CHECK(!read_write_streams("nvme3n1", g.root.string()));
}

TEST_CASE("streams: the backend takes a block device only")
{
	const fs::path f =
		fs::temp_directory_path() / ("kvfdp-streams-file-" + std::to_string(getpid()));
	std::ofstream(f) << "x";
	auto d = open_streams_device(f.string());
	fs::remove(f);
	REQUIRE(!d);
	CHECK(d.error().message().find("not a block device") != std::string::npos);
	auto m = open_streams_device("/nonexistent/nvme9n9");
	CHECK(!m);
}
