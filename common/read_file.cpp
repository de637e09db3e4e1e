// read_config_file: in a helper thread with a deadline, stat, then open without blocking or
// a controlling tty, fstat the open file (it may have been swapped since), read at most
// limit + 1 bytes.
#include "common/read_file.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <optional>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>

#include "common/unique_fd.hpp"

namespace kvfdp {

namespace {

const char *type_name(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	return "not a regular file";
}

std::string limit_text(size_t limit)
{
	if (limit >= (1u << 20) && limit % (1u << 20) == 0)
		return std::to_string(limit >> 20) + " MiB";
	if (limit >= 1024 && limit % 1024 == 0)
		return std::to_string(limit >> 10) + " KiB";
	return std::to_string(limit) + " bytes";
}

// Refuses anything but a regular file of at most limit bytes.
Result<void> check_stat(const std::string &path, const struct stat &st, size_t limit)
{
	if (!S_ISREG(st.st_mode))
		return guidance_error(S_ISDIR(st.st_mode) ? std::errc::is_a_directory
							  : std::errc::invalid_argument,
				      path + " is " + type_name(st.st_mode) +
					      ", not a regular file: give the path of a file");
	if (st.st_size > 0 && static_cast<uint64_t>(st.st_size) > limit)
		return guidance_error(std::errc::file_too_large,
				      path + " is " + std::to_string(st.st_size) +
					      " bytes, over the " + limit_text(limit) +
					      " limit for this file: is it the right file?");
	return ok();
}

std::atomic<int> g_stuck{0};

// What a helper and its caller share; whoever leaves last frees it.
struct PendingRead {
	std::mutex mu;
	std::condition_variable cv;
	std::optional<Result<std::string>> result;
	bool abandoned = false;  // the caller's deadline passed: the helper counts itself out
};

std::string seconds_text(std::chrono::milliseconds d)
{
	const long ms = static_cast<long>(d.count());
	return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

Result<std::string> read_now(const std::string &path, size_t limit)
{
	// stat first: opening a device can have effects of its own (a watchdog, a tape).
	struct stat st {};
	if (::stat(path.c_str(), &st) < 0)
		return errno_error(errno, "reading " + path);
	KVFDP_TRY(check_stat(path, st, limit));
	UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
	if (!fd)
		return errno_error(errno, "reading " + path);
	if (::fstat(fd.get(), &st) < 0)
		return errno_error(errno, "reading " + path);
	KVFDP_TRY(check_stat(path, st, limit));
	// st_size is a hint (0 for /proc files, a file may grow): read to EOF, at most limit + 1.
	std::string text;
	text.resize(static_cast<size_t>(st.st_size) < limit ? static_cast<size_t>(st.st_size) + 1
							    : limit + 1);
	size_t have = 0;
	for (;;) {
		if (have == text.size()) {
			if (text.size() > limit)
				return guidance_error(
					std::errc::file_too_large,
					path + " is over the " + limit_text(limit) +
						" limit for this file: is it the right file?");
			text.resize(std::min(limit + 1, text.size() * 2 + 4096));
		}
		const ssize_t n = ::read(fd.get(), text.data() + have, text.size() - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno_error(errno, "reading " + path);
		}
		if (n == 0)
			break;
		have += static_cast<size_t>(n);
	}
	text.resize(have);
	return text;
}

}  // namespace

Result<std::string> read_config_file(const std::string &path, size_t limit,
				     std::chrono::milliseconds deadline)
{
	if (deadline.count() <= 0)
		return read_now(path, limit);
	if (const int stuck = g_stuck.load(std::memory_order_acquire);
	    stuck >= kMaxStuckConfigReads)
		return guidance_error(
			std::errc::timed_out,
			"not reading " + path + ": " + std::to_string(stuck) +
				" earlier reads of config files have not returned (a hung filesystem?): "
				"fix the mount, or give a file on a local filesystem");
	auto p = std::make_shared<PendingRead>();
	try {
		std::thread([p, path, limit] {
			Result<std::string> r = read_now(path, limit);
			std::lock_guard g(p->mu);
			p->result.emplace(std::move(r));
			if (p->abandoned)
				g_stuck.fetch_sub(1, std::memory_order_acq_rel);
			p->cv.notify_all();
		}).detach();
	} catch (const std::system_error &e) {
		return make_error(std::errc::resource_unavailable_try_again,
				  "reading " + path + ": cannot start its reader thread (" +
					  e.what() + ")");
	}
	std::unique_lock lk(p->mu);
	if (!p->cv.wait_for(lk, deadline, [&] { return p->result.has_value(); })) {
		p->abandoned = true;
		g_stuck.fetch_add(1, std::memory_order_acq_rel);
		return guidance_error(
			std::errc::timed_out,
			"reading " + path + " did not finish within " + seconds_text(deadline) +
				" (is its filesystem hung, an NFS server unreachable?): fix the mount, or "
				"give a file on a local filesystem");
	}
	return std::move(*p->result);
}

int stuck_config_reads()
{
	return g_stuck.load(std::memory_order_acquire);
}

}  // namespace kvfdp
