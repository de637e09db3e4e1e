// Trace file type check.
#include "model/workload/trace_file.hpp"

#include <sys/stat.h>

#include <cerrno>

namespace kvfdp::workload {

Result<void> check_trace_file(const std::string &path, const std::string &what,
			      const std::string &option)
{
	struct stat st {};
	if (::stat(path.c_str(), &st) != 0)
		return errno_error(errno, "open " + what + " " + path + " (pass " + option + ")");
	if (S_ISREG(st.st_mode))
		return ok();
	const char *kind = S_ISCHR(st.st_mode)    ? "a character device"
			   : S_ISBLK(st.st_mode)  ? "a block device"
			   : S_ISDIR(st.st_mode)  ? "a directory"
			   : S_ISFIFO(st.st_mode) ? "a FIFO"
			   : S_ISSOCK(st.st_mode) ? "a socket"
						  : "not a regular file";
	return guidance_error(std::errc::invalid_argument,
			      path + " is " + kind + ", not a " + what + " file: pass " + option);
}

}  // namespace kvfdp::workload
