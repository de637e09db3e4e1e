// kvfdpd's names for a `files` request's arguments (proto/files_request.hpp, shared with the
// kvfdp CLI).
#pragma once

#include "proto/files_request.hpp"

namespace kvfdp::daemon {

using proto::FilesQuery;
using proto::parse_files_query;

}  // namespace kvfdp::daemon
