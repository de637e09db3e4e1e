// Error construction and formatting.
#include "common/result.hpp"

#include <cstdlib>

namespace kvfdp {

std::string Error::message() const
{
	if (!code || guidance)
		return context;
	if (context.empty())
		return code.message();
	return context + ": " + code.message();
}

Error errno_error(int err, std::string context)
{
	return Error{std::error_code(std::abs(err), std::system_category()), std::move(context)};
}

Error make_error(std::errc code, std::string context)
{
	return Error{std::make_error_code(code), std::move(context)};
}

Error guidance_error(std::errc code, std::string message)
{
	Error e = make_error(code, std::move(message));
	e.guidance = true;
	return e;
}

Error guidance_errno(int err, std::string message)
{
	Error e = errno_error(err, std::move(message));
	e.guidance = true;
	return e;
}

}  // namespace kvfdp
