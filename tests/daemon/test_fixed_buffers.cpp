// Tests of how much of each tag buffer kvfdpd registers (Linux 6.1's fixed-buffer limit).
#include <doctest/doctest.h>

#include "userspace/daemon/queue.hpp"

using kvfdp::daemon::fixed_buffer_bytes;

namespace {
constexpr uint32_t kPage = 4096;
constexpr uint32_t kKiB = 1024;
} // namespace

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

TEST_CASE("daemon: buffers stay unregistered when the largest request needs more than max_segments pages")
{
	// A device recovered with 512 KiB requests (128 pages) on 6.1 (127 segments).
	CHECK(fixed_buffer_bytes(512 * kKiB, 512 * kKiB, 127, kPage) == 0);
	// An unknown request size means the whole 1 MiB buffer: 256 pages.
	CHECK(fixed_buffer_bytes(1024 * kKiB, 0, 128, kPage) == 0);
	// Nothing to register at all.
	CHECK(fixed_buffer_bytes(0, 0, 0, kPage) == 0);
}
