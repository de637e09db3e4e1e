// UniqueFd: sole owner of a file descriptor, closed on destruction.
#pragma once

#include <string>

#include "common/result.hpp"

namespace kvfdp {

class UniqueFd {
public:
	UniqueFd() noexcept = default;
	explicit UniqueFd(int fd) noexcept : fd_(fd) {}
	UniqueFd(UniqueFd &&o) noexcept : fd_(o.release()) {}
	UniqueFd &operator=(UniqueFd &&o) noexcept
	{
		if (this != &o)
			reset(o.release());
		return *this;
	}
	UniqueFd(const UniqueFd &) = delete;
	UniqueFd &operator=(const UniqueFd &) = delete;
	~UniqueFd() { reset(); }

	[[nodiscard]] int get() const noexcept { return fd_; }
	[[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
	explicit operator bool() const noexcept { return valid(); }

	// Gives up ownership; the caller must close the returned fd.
	[[nodiscard]] int release() noexcept
	{
		int fd = fd_;
		fd_ = -1;
		return fd;
	}
	// Closes the owned fd (if any) and takes ownership of fd.
	void reset(int fd = -1) noexcept;

private:
	int fd_ = -1;
};

// open(2) with O_CLOEXEC added; the error names the path.
[[nodiscard]] Result<UniqueFd> open_fd(const std::string &path, int flags, unsigned mode = 0);

}  // namespace kvfdp
