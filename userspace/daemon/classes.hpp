// Lifetime class names for kvfdpd: the placement library's (placement/classes.hpp).
#pragma once

#include "placement/classes.hpp"

namespace kvfdp::daemon {

using placement::class_name;
using placement::kNumClasses;
using placement::parse_class;

}  // namespace kvfdp::daemon
