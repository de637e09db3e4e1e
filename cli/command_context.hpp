// What every kvfdp subcommand shares: the global options, the output streams, the exit
// code, and opening the data source (kvfdpd's socket, a device, or the FDP SSD model).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "proto/control.hpp"
#include "cli/app.hpp"
#include "cli/control_client.hpp"

namespace CLI {
class App;  // <CLI/CLI.hpp>: included by the files that build the command line
}  // namespace CLI

namespace kvfdp::cli {

// The FDP SSD model's shape for --backend model (sizes as given, parsed when opened).
struct ModelOptions {
	std::string capacity = "1GiB";
	std::string ru_size = "8MiB";
	unsigned handles = 8;
	unsigned lba_size = 4096;
	double op = 0.28;
};

class CommandContext {
public:
	CommandContext(std::ostream &out_stream, std::ostream &err_stream)
	    : out(out_stream), err(err_stream)
	{
	}
	~CommandContext();
	CommandContext(const CommandContext &) = delete;
	CommandContext &operator=(const CommandContext &) = delete;

	std::ostream &out;
	std::ostream &err;
	// The process exit code; subcommand callbacks set it (others' subcommands take it as int&).
	int exit_code = proto::kExitOk;

	// Global options (registered by add_global_options).
	std::string output = "table";  // table | json
	unsigned width = 0;            // 0 = terminal / $COLUMNS / 80
	std::string socket = proto::kDefaultSocket;
	bool socket_given = false;
	std::string device;   // /dev/ngXnY
	std::string backend;  // "" (auto), "passthru", "model"
	ModelOptions model;
	// Test seam: kernel features are read below this root instead of "/".
	std::string probe_root = "/";

	[[nodiscard]] bool json() const { return output == "json"; }
	// Table width: --width, else the terminal's, else $COLUMNS, else 80.
	[[nodiscard]] unsigned table_width() const;
	// True when the user named a device or backend: talk to it, not to kvfdpd.
	[[nodiscard]] bool direct() const
	{
		return !device.empty() || !backend.empty() || device_factory;
	}

	// Prints "kvfdp: <message>" on err, sets exit_code and returns it.
	int fail(int code, const std::string &message);
	// As fail(), with the exit code chosen from the error (see exit_for).
	int fail(const Error &e);
	// Prints j (pretty, 2 spaces) on out.
	void print_json(const nlohmann::json &j);

	// Opens --device (passthru, read-only use) or --backend model. Errors carry the hint.
	[[nodiscard]] Result<std::unique_ptr<nvme::Device>> open_device();
	// One request to kvfdpd at --socket.
	[[nodiscard]] DaemonReply ask_daemon(const std::string &cmd,
					     const nlohmann::json &args = nlohmann::json::object());
	// Maps a failed daemon call to the exit code and prints it.
	int fail(const DaemonError &e);

	// Test seam: when set, open_device() returns what this makes instead of opening
	// --device / --backend (golden tests hand in a model that has seen writes).
	std::function<Result<std::unique_ptr<nvme::Device>>()> device_factory;

private:
	// A sparse data file for the model backend, removed when the context ends.
	std::string model_data_path();
	std::string model_tmp_;
};

// The exit code for an Error: the CLI's own (cli_error) carry it; ENOENT/ENODEV/ENXIO/
// ECONNREFUSED -> kExitNoDevice; EOPNOTSUPP -> kExitUnsupported; EINVAL from parsing ->
// kExitUsage; everything else kExitError.
[[nodiscard]] int exit_for(const Error &e);
// An Error that carries exit code `code` and prints as exactly `message`.
[[nodiscard]] Error cli_error(int code, std::string message);

// Registers the global options on the top-level app (they may follow the subcommand).
void add_global_options(CLI::App &app, CommandContext &ctx);

}  // namespace kvfdp::cli
