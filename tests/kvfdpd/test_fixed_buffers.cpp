// Tests of how much of each tag buffer kvfdpd registers (Linux 6.1's fixed-buffer limit), and
// of the queue ring's task-work mode.
#include <doctest/doctest.h>

#include <cerrno>
#include <liburing.h>
#include <thread>

#include "kvfdpd/daemon/io/queue.hpp"

using kvfdp::daemon::fixed_buffer_bytes;

namespace {
constexpr uint32_t kPage = 4096;
constexpr uint32_t kKiB = 1024;
}  // namespace

TEST_CASE("daemon: a tag's registration covers its largest request within max_segments pages")
{
	// 512 KiB tag buffers, requests capped at QEMU's transfer limit on 6.1 (504 KiB, 126
	// pages) and 6.12 (508 KiB, 127 pages): the registration is the request, not the buffer,
	// so 6.1's 127 segments take it.
	CHECK(fixed_buffer_bytes(512 * kKiB, 504 * kKiB, 127, kPage) == 504 * kKiB);
	CHECK(fixed_buffer_bytes(512 * kKiB, 508 * kKiB, 128, kPage) == 508 * kKiB);
	// Exactly max_segments pages from the start still passes.
	CHECK(fixed_buffer_bytes(512 * kKiB, 508 * kKiB, 127, kPage) == 508 * kKiB);
	// A request that is not a whole number of pages registers whole pages.
	CHECK(fixed_buffer_bytes(64 * kKiB, 6 * kKiB, 127, kPage) == 8 * kKiB);
	// No known limit (file, model backend): the largest request, or the whole buffer.
	CHECK(fixed_buffer_bytes(512 * kKiB, 0, 0, kPage) == 512 * kKiB);
	CHECK(fixed_buffer_bytes(512 * kKiB, 256 * kKiB, 0, kPage) == 256 * kKiB);
	// Never more than the buffer, whatever the request limit says.
	CHECK(fixed_buffer_bytes(128 * kKiB, 512 * kKiB, 0, kPage) == 128 * kKiB);
}

TEST_CASE(
	"daemon: buffers stay unregistered when the largest request needs more than max_segments pages")
{
	// A device recovered with 512 KiB requests (128 pages) on 6.1 (127 segments).
	CHECK(fixed_buffer_bytes(512 * kKiB, 512 * kKiB, 127, kPage) == 0);
	// An unknown request size means the whole 1 MiB buffer: 256 pages.
	CHECK(fixed_buffer_bytes(1024 * kKiB, 0, 128, kPage) == 0);
	// Nothing to register at all.
	CHECK(fixed_buffer_bytes(0, 0, 0, kPage) == 0);
}

// The queue ring's task-work mode (queue.cpp): on a kernel with DEFER_TASKRUN (6.1+) the ring
// is created disabled by one thread (create(): buffer registration happens there) and the
// queue thread that enables it becomes its only submitter. On an older kernel it falls back.
TEST_CASE("daemon: a queue ring set up in one thread serves the thread that enables it")
{
	using namespace kvfdp::daemon;
	CHECK((ring_setup_flags(RingMode::plain) & (IORING_SETUP_SQE128 | IORING_SETUP_CQE32)) ==
	      (IORING_SETUP_SQE128 | IORING_SETUP_CQE32));
	CHECK((ring_setup_flags(RingMode::coop_taskrun) & IORING_SETUP_COOP_TASKRUN) != 0);
	CHECK((ring_setup_flags(RingMode::defer_taskrun) & IORING_SETUP_R_DISABLED) != 0);

	for (RingMode ceiling :
	     {RingMode::plain, RingMode::coop_taskrun, RingMode::defer_taskrun}) {
		io_uring ring{};
		auto mode = init_queue_ring(ring, 8, ceiling);
		REQUIRE_MESSAGE(mode.ok(), mode.error().message());
		CHECK(*mode <= ceiling);
		// A sparse buffer table, as zero copy registers it in create()'s thread.
		CHECK(io_uring_register_buffers_sparse(&ring, 4) == 0);
		int enabled = -1, submitted = -1, waited = -1;
		uint64_t seen = 0;
		std::thread queue_thread([&] {
			enabled = enable_queue_ring(ring, *mode);
			io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			io_uring_prep_nop(sqe);
			sqe->user_data = 42;
			submitted = io_uring_submit(&ring);
			io_uring_cqe *cqe = nullptr;
			waited = io_uring_wait_cqe(&ring, &cqe);
			if (waited == 0) {
				seen = cqe->user_data;
				io_uring_cqe_seen(&ring, cqe);
			}
		});
		queue_thread.join();
		CHECK(enabled == 0);
		CHECK(submitted == 1);
		CHECK(waited == 0);
		CHECK(seen == 42);
		if (*mode == RingMode::defer_taskrun) {
			// SINGLE_ISSUER: another thread (this one) may not submit.
			io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			io_uring_prep_nop(sqe);
			CHECK(io_uring_submit(&ring) == -EEXIST);
		}
		io_uring_queue_exit(&ring);
	}
}
