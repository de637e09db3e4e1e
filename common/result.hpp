// Result<T>: a value, or an Error (std::error_code plus a line of context).
// Used above the syscall boundary; syscall wrappers return 0 / -errno.
#pragma once

#include <cassert>
#include <string>
#include <system_error>
#include <utility>
#include <variant>

namespace kvfdp {

// An error code plus what was being done, e.g. {EACCES, "open /dev/ng0n1"}.
// message() reads "open /dev/ng0n1: Permission denied". A guidance error's context is the
// whole message, already saying what is wrong and what to do ("... use /dev/ng0n1"):
// message() is the context alone; the code still classifies it (exit codes, errno).
struct Error {
	std::error_code code;
	std::string context;
	bool guidance = false;

	[[nodiscard]] std::string message() const;
};

// An Error from an errno value (positive or negative).
[[nodiscard]] Error errno_error(int err, std::string context);
// An Error from a std::errc, for failures that have no errno of their own.
[[nodiscard]] Error make_error(std::errc code, std::string context);
// A guidance Error: message is complete for the user, no errno text is appended.
[[nodiscard]] Error guidance_error(std::errc code, std::string message);
// A guidance Error from an errno value (positive or negative), when the message already
// says what the errno means ("cannot find /dev/ng9n9 (list namespaces with ...)").
[[nodiscard]] Error guidance_errno(int err, std::string message);

template <class T> class [[nodiscard]] Result {
public:
	Result(T value) : v_(std::move(value)) {}
	Result(Error error) : v_(std::move(error)) {}

	[[nodiscard]] bool ok() const noexcept { return v_.index() == 0; }
	explicit operator bool() const noexcept { return ok(); }

	// Must only be called when ok().
	T &value() &
	{
		assert(ok());
		return std::get<0>(v_);
	}
	const T &value() const &
	{
		assert(ok());
		return std::get<0>(v_);
	}
	T &&value() &&
	{
		assert(ok());
		return std::get<0>(std::move(v_));
	}
	T &operator*() & { return value(); }
	const T &operator*() const & { return value(); }
	T *operator->() { return &value(); }
	const T *operator->() const { return &value(); }

	// Must only be called when !ok().
	const Error &error() const &
	{
		assert(!ok());
		return std::get<1>(v_);
	}
	Error &&error() &&
	{
		assert(!ok());
		return std::get<1>(std::move(v_));
	}

private:
	std::variant<T, Error> v_;
};

template <> class [[nodiscard]] Result<void> {
public:
	Result() = default;
	Result(Error error) : err_(std::move(error)), failed_(true) {}

	[[nodiscard]] bool ok() const noexcept { return !failed_; }
	explicit operator bool() const noexcept { return ok(); }
	const Error &error() const &
	{
		assert(failed_);
		return err_;
	}
	Error &&error() &&
	{
		assert(failed_);
		return std::move(err_);
	}

private:
	Error err_;
	bool failed_ = false;
};

// Success for Result<void>.
inline Result<void> ok()
{
	return {};
}

}  // namespace kvfdp

// Evaluate a Result-returning expression; on error, return its Error from the caller.
#define KVFDP_TRY(expr)                                                                            \
	do {                                                                                       \
		auto kvfdp_try_r_ = (expr);                                                        \
		if (!kvfdp_try_r_.ok())                                                            \
			return std::move(kvfdp_try_r_).error();                                    \
	} while (0)
