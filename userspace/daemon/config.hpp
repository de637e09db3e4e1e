// kvfdpd's policy config file: the placement library's parser (placement/config.hpp).
#pragma once

#include "placement/config.hpp"
#include "userspace/daemon/policy.hpp"

namespace kvfdp::daemon {

using placement::kDefaultConfigPath;
using placement::load_config;
using placement::parse_config;

}  // namespace kvfdp::daemon
