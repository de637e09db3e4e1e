// Whether a controller is QEMU's FDP emulation (which never erases: nvme/waf.hpp's caveat),
// from sysfs.
#pragma once

#include <string>

namespace kvfdp::nvme {

// Whether an NVMe generic device belongs to an emulated (QEMU) controller, from
// /sys/class/nvme-generic/NAME/device/model below root; false when unknown.
[[nodiscard]] bool controller_is_emulated(const std::string &device_path,
					  const std::string &root = "/");

}  // namespace kvfdp::nvme
