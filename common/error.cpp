// Error construction and formatting.
#include "common/result.hpp"

#include <cstdlib>

namespace kvfdp {

std::string Error::message() const
{
	if (!code)
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

} // namespace kvfdp
