// kvfdpd's names for its health texts (proto/health.hpp, shared with the kvfdp CLI).
#pragma once

#include "proto/health.hpp"

namespace kvfdp::daemon {

using proto::Health;
using proto::health_from_status;
using proto::health_json;
using proto::health_of;
using proto::require_tagger_refusal;
using proto::serving_status;

}  // namespace kvfdp::daemon
