// Global options, error reporting and opening the data source.
#include "cli/command_context.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "cli/table.hpp"
#include "cli/units.hpp"

#include "nvme/backends.hpp"
#include "model/ftl/model_device.hpp"
#include "proto/backend_kind.hpp"

namespace kvfdp::cli {

namespace {

// Errors that already carry the CLI's exit code and a complete message.
class CliCategory : public std::error_category {
public:
	const char *name() const noexcept override { return "kvfdp-cli"; }
	std::string message(int) const override { return {}; }
};

const CliCategory &cli_category()
{
	static const CliCategory c;
	return c;
}

}  // namespace

Error cli_error(int code, std::string message)
{
	return Error{std::error_code(code, cli_category()), std::move(message), true};
}

int exit_for(const Error &e)
{
	if (e.code.category() == cli_category())
		return e.code.value();
	if (e.code.category() == std::system_category() ||
	    e.code.category() == std::generic_category()) {
		switch (e.code.value()) {
		case ENOENT:
		case ENODEV:
		case ENXIO:
		case ECONNREFUSED: return proto::kExitNoDevice;
		case EOPNOTSUPP: return proto::kExitUnsupported;
		default: return proto::kExitError;
		}
	}
	return proto::kExitError;
}

CommandContext::~CommandContext()
{
	if (!model_tmp_.empty())
		::unlink(model_tmp_.c_str());
}

std::string CommandContext::model_data_path()
{
	if (model_tmp_.empty()) {
		const char *dir = std::getenv("TMPDIR");
		std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/kvfdp-model-XXXXXX";
		int fd = ::mkstemp(tmpl.data());
		if (fd >= 0) {
			::close(fd);
			model_tmp_ = tmpl;
		}
	}
	return model_tmp_;
}

unsigned CommandContext::table_width() const
{
	return terminal_width(width, STDOUT_FILENO);
}

int CommandContext::fail(int code, const std::string &message)
{
	err << "kvfdp: " << message << '\n';
	exit_code = code;
	return code;
}

int CommandContext::fail(const Error &e)
{
	return fail(exit_for(e), e.message());
}

int CommandContext::fail(const DaemonError &e)
{
	int code = proto::kExitError;
	if (e.kind == DaemonFailure::unreachable)
		code = proto::kExitNoDevice;
	return fail(code, e.message);
}

void CommandContext::print_json(const nlohmann::json &j)
{
	out << j.dump(2) << '\n';
}

DaemonReply CommandContext::ask_daemon(const std::string &cmd, const nlohmann::json &args)
{
	return daemon_call(socket, cmd, args);
}

Result<std::unique_ptr<nvme::Device>> CommandContext::open_device()
{
	if (device_factory)
		return device_factory();
	const std::optional<proto::BackendKind> be =
		backend.empty() ? proto::BackendKind::passthru : proto::parse_backend(backend);
	if (be == proto::BackendKind::model) {
		if (!device.empty())
			return cli_error(proto::kExitUsage,
					 "--device and --backend model exclude each other: "
					 "the model is a device of its own");
		auto cap = parse_size(model.capacity);
		if (!cap)
			return cli_error(proto::kExitUsage, "--capacity: " + cap.error().message());
		auto ru = parse_size(model.ru_size);
		if (!ru)
			return cli_error(proto::kExitUsage, "--ru-size: " + ru.error().message());
		model::ModelDeviceOptions o;
		o.config.logical_bytes = *cap;
		o.config.ru_size = *ru;
		o.config.nruh = static_cast<uint16_t>(model.handles);
		o.config.lba_size = model.lba_size;
		o.config.op = model.op;
		if (auto v = model::validate(o.config); !v)
			return cli_error(proto::kExitUsage,
					 "bad model shape: " + v.error().message());
		o.data_path = model_data_path();
		auto d = model::open_model_device(o);
		if (!d)
			return cli_error(proto::kExitUsage,
					 "cannot build the FDP SSD model: " + d.error().message() +
						 "; check --capacity, --ru-size, --handles");
		return std::move(d).value();
	}
	if (be != proto::BackendKind::passthru)
		return cli_error(proto::kExitUsage, "unknown backend '" + backend + "'; use " +
							    proto::backend_list(true));
	if (device.empty())
		return cli_error(proto::kExitNoDevice,
				 "no device given; name one with --device /dev/ngXnY "
				 "(see `ls /dev/ng*`) or use --backend model");
	auto d = nvme::open_passthru_device(device);
	if (!d) {
		const Error &e = d.error();
		if (exit_for(e) == proto::kExitNoDevice)
			return cli_error(
				proto::kExitNoDevice,
				e.message() + (e.guidance
						       ? "; or use --backend model"
						       : "; list NVMe generic devices with "
							 "`ls /dev/ng*`, or use --backend model"));
		if (e.code.value() == EACCES || e.code.value() == EPERM)
			return cli_error(proto::kExitError, e.message() +
								    "; reading FDP logs needs root "
								    "(CAP_SYS_ADMIN)");
		return std::move(d).error();
	}
	return std::move(d).value();
}

void add_global_options(CLI::App &app, CommandContext &ctx)
{
	app.add_option("-o,--output", ctx.output, "output format: table (default) or json")
		->check(CLI::IsMember({"table", "json"}))
		->option_text("table|json");
	app.add_option("--width", ctx.width,
		       "table width in columns (default: terminal, $COLUMNS, 80)")
		->check(CLI::Range(20u, 1000u));
	app.add_option("--socket", ctx.socket, "kvfdpd control socket")
		->capture_default_str()
		->each([&ctx](const std::string &) { ctx.socket_given = true; });
	app.add_option("-d,--device", ctx.device,
		       "read this FDP namespace directly (/dev/ngXnY), "
		       "not through kvfdpd");
	app.add_option("--backend", ctx.backend,
		       "passthru (with --device) or model (the FDP SSD model)")
		->check(CLI::IsMember(proto::backend_names(true)))
		->option_text("passthru|model");
	auto *g = app.add_option_group("Model backend",
				       "shape of the FDP SSD model (--backend model)");
	g->add_option("--capacity", ctx.model.capacity, "logical capacity (KiB, MiB, GiB, TiB)")
		->capture_default_str();
	g->add_option("--ru-size", ctx.model.ru_size, "reclaim unit size")->capture_default_str();
	g->add_option("--handles", ctx.model.handles, "placement handles")
		->check(CLI::Range(1u, 128u))
		->capture_default_str();
	g->add_option("--lba-size", ctx.model.lba_size, "logical block size in bytes")
		->check(CLI::IsMember({512u, 4096u}))
		->capture_default_str();
	g->add_option("--op", ctx.model.op, "over-provisioning, (physical - logical) / logical")
		->check(CLI::Range(0.0, 4.0))
		->capture_default_str();
	// Test seam, hidden from --help: probe kernel features below this directory.
	app.add_option("--probe-root", ctx.probe_root)->group("");
}

}  // namespace kvfdp::cli
