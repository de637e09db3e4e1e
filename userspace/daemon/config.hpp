// Policy config file (TOML): [placement] class = handle, [watch] dir, [[rule]] path/class.
#pragma once

#include <string>
#include <string_view>

#include "common/result.hpp"
#include "userspace/daemon/policy.hpp"

namespace kvfdp::daemon {

inline constexpr const char *kDefaultConfigPath = "/etc/kvfdp/kvfdp.toml";

// Parses TOML text; source names the file in errors ("kvfdp.toml:7: placement.long: ...").
// Unknown tables and keys are errors, so a typo never silently falls back to defaults.
[[nodiscard]] Result<PolicyConfig> parse_config(std::string_view text, const std::string &source);

// Reads and parses path. A missing file is an error unless missing_ok, in which case the
// built-in default policy results (source "").
[[nodiscard]] Result<PolicyConfig> load_config(const std::string &path, bool missing_ok);

} // namespace kvfdp::daemon
