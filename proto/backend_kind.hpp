// The backends kvfdpd serves from, and what each can do: the one list of their names
// (nvme::DeviceInfo::backend, `kvfdpd --backend`, `kvfdp --backend`) and their capabilities.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvfdp::proto {

enum class BackendKind { passthru, streams, model, file };

struct BackendCaps {
	BackendKind kind;
	const char *name;    // as written on the command line and in replies
	bool by_file;        // opened from --file PATH, not --device
	bool passthru_logs;  // its logs are read over NVMe passthrough (/dev/ngXnY): kvfdp opens it
			     // with --device, and an emulated controller's WAF caveat applies
	bool zero_copy;      // the ublk zero-copy data path reaches the device
	bool cli_direct;     // `kvfdp --backend NAME` opens it without kvfdpd
};

// Every backend, in the order help texts list them.
[[nodiscard]] const std::vector<BackendCaps> &backends();
[[nodiscard]] const BackendCaps &caps(BackendKind k);
[[nodiscard]] const char *backend_name(BackendKind k);
// nullopt for a name that is no backend.
[[nodiscard]] std::optional<BackendKind> parse_backend(std::string_view name);
// The capabilities of a backend by name; all false for a name that is no backend.
[[nodiscard]] bool backend_by_file(std::string_view name);
[[nodiscard]] bool backend_passthru_logs(std::string_view name);
[[nodiscard]] bool backend_zero_copy(std::string_view name);
// The names, every backend or only those `kvfdp` opens directly.
[[nodiscard]] std::vector<std::string> backend_names(bool cli_direct_only = false);
// "passthru, streams, model or file" (or the CLI's "passthru or model").
[[nodiscard]] std::string backend_list(bool cli_direct_only = false);

}  // namespace kvfdp::proto
