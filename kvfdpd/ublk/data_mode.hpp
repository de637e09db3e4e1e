// How request data travels between the ublk disk and the device: copied by the driver
// through kvfdpd's per-tag buffers, or zero copy (the request's own pages registered in the
// queue's ring, UBLK_F_AUTO_BUF_REG). Chosen from the driver's GET_FEATURES, never from the
// kernel version; a driver without the feature gets copy mode and a note, never an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "kvfdpd/ublk/uapi.hpp"

namespace kvfdp::ublk {

enum class DataMode : uint8_t {
	copy,       // the driver copies each read/write into or out of the tag's buffer in kvfdpd
	zero_copy,  // the driver registers the request's pages as the ring's fixed buffer <tag>
	zero_copy_reg,  // kvfdpd registers them itself (REGISTER_IO_BUF / UNREGISTER_IO_BUF around
			// each read/write; UBLK_F_SUPPORT_ZERO_COPY, Linux 6.15+)
};

struct DataModeChoice {
	DataMode mode = DataMode::copy;
	uint64_t add_flags = 0;  // ADD_DEV flags that mode needs
	std::string note;        // why copy mode, when zero copy was not chosen; empty otherwise
};

// For a new device. features: GET_FEATURES' answer (an error: a driver older than 6.5);
// backend: the nvme backend ("passthru" takes a request's pages by registered-buffer index,
// the file and model backends need the data in kvfdpd's memory); wanted: not --no-zero-copy.
// UBLK_F_AUTO_BUF_REG is preferred (no extra commands per request); UBLK_F_SUPPORT_ZERO_COPY
// is used where it is the only one, or where prefer_register asks for it (testing).
[[nodiscard]] DataModeChoice choose_data_mode(const Result<uint64_t> &features,
					      std::string_view backend, bool wanted,
					      bool prefer_register = false);

// The mode a device's flags (ADD_DEV's answer, or GET_DEV_INFO of a device being recovered)
// commit its server to: every FETCH of a kFlagAutoBufReg device registers a buffer.
[[nodiscard]] inline constexpr DataMode data_mode_of(uint64_t dev_flags)
{
	return (dev_flags & kFlagAutoBufReg)        ? DataMode::zero_copy
	       : (dev_flags & kFlagSupportZeroCopy) ? DataMode::zero_copy_reg
						    : DataMode::copy;
}

// Whether the queue reads and writes the request's own pages (no tag buffers).
[[nodiscard]] inline constexpr bool is_zero_copy(DataMode m)
{
	return m != DataMode::copy;
}

// "zero-copy", "zero-copy-register" or "copy".
[[nodiscard]] const char *data_mode_name(DataMode m);

}  // namespace kvfdp::ublk
