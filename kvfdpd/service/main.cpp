// kvfdpd: turns an FDP namespace into a ublk block device and places each write on the
// reclaim unit handle of its file's lifetime class.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "kvfdp_build.hpp"
#include "placement/size.hpp"
#include "placement/config.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/daemon/ctl/daemon.hpp"

namespace {

// A size option read by placement::parse_size, the grammar of the config and of kvfdp
// (docs/cli.md "Sizes"): "512K", "512KB" and "512KiB" are the same 524288 bytes.
CLI::Validator size_value()
{
	return CLI::Validator(
		[](std::string &v) -> std::string {
			auto n = kvfdp::placement::parse_size(v);
			if (!n)
				return n.error().message();
			v = std::to_string(*n);
			return {};
		},
		"SIZE");
}

// The model's shape under kvfdp's names (--capacity, --handles), and under kvfdpd's old ones
// (--size, --nruh), kept as aliases for a release: either spelling, not both.
void add_model_shape(CLI::App &app, kvfdp::daemon::BackendOptions &b)
{
	auto *cap = app.add_option("--capacity", b.size, "file/model: capacity (a size: 1G, 1GiB)")
			    ->transform(size_value());
	auto *size = app.add_option("--size", b.size, "old name of --capacity, kept as an alias")
			     ->transform(size_value());
	cap->excludes(size);
	auto *handles = app.add_option("--handles", b.nruh, "model: placement handles")
				->capture_default_str();
	auto *nruh = app.add_option("--nruh", b.nruh, "old name of --handles, kept as an alias");
	handles->excludes(nruh);
}

// What the command line fills: the daemon's options, and the values main turns into them
// once parsed (device and file lists, the queue count, the placement mode).
struct CommandLine {
	kvfdp::daemon::DaemonOptions o;
	uint32_t debug_mask = 0;
	std::vector<std::string> devices, files;
	std::string queues = "auto";
	std::string placement_mode = "class";
	CLI::Option *cfg = nullptr;
	CLI::Option *twin_memory = nullptr;
};

// --queues: "auto" or a number 1..4096.
CLI::Validator queues_value()
{
	return CLI::Validator(
		[](std::string &v) -> std::string {
			if (v == "auto")
				return {};
			char *end = nullptr;
			const unsigned long n = std::strtoul(v.c_str(), &end, 10);
			if (v.empty() || *end || v[0] == '-' || n < 1 || n > 4096)
				return "--queues must be auto or a number 1..4096, not '" + v + "'";
			return {};
		},
		"auto|N");
}

// The config file, the backend and its devices or files, the stripe and the model's shape.
void add_backend_options(CLI::App &app, CommandLine &c)
{
	auto &o = c.o;
	c.cfg = app.add_option("-c,--config", o.config_path, "policy config (TOML)")
			->capture_default_str();
	app.add_option("-b,--backend", o.backend.kind,
		       "passthru | streams (block write streams, Linux 6.16+) | model | file")
		->capture_default_str()
		->check(CLI::IsMember({"passthru", "streams", "model", "file"}));
	app.add_option(
		   "-d,--device", c.devices,
		   "passthru: FDP namespace, e.g. /dev/ng0n1; streams: its block device, e.g. /dev/nvme0n1. "
		   "Give it more than once to stripe one disk across several namespaces, in that order "
		   "(docs/nvme.md, Striping)")
		->allow_extra_args(false);
	app.add_option(
		   "-f,--file", c.files,
		   "file: backing file; model: sparse data file (more than once: a stripe of models)")
		->allow_extra_args(false);
	app.add_option(
		   "--stripe-size", o.backend.stripe_bytes,
		   "bytes of a stripe on one member before the next (suffixes allowed: 512K); default: the "
		   "largest member's transfer limit rounded up to a power of two (512K on QEMU)")
		->transform(size_value());
	add_model_shape(app, o.backend);
	app.add_option("--lba-size", o.backend.lba_size, "file/model: logical block size")
		->capture_default_str();
	app.add_option("--ru-size", o.backend.ru_size, "model: reclaim unit size (a size: 1M)")
		->transform(size_value());
	app.add_option("--op", o.backend.op, "model: over-provisioning (0.28 = 28%)")
		->capture_default_str();
}

// The ublk device: queues, depth, buffers, the control socket, and its life across restarts.
void add_ublk_options(CLI::App &app, CommandLine &c)
{
	auto &o = c.o;
	app.add_option(
		   "-q,--queues", c.queues,
		   "ublk hardware queues, each with its own thread and ring: auto (one per CPU this process may "
		   "run on; 1 for --backend model) or 1..4096")
		->capture_default_str()
		->check(queues_value());
	app.add_option("--depth", o.depth, "ublk queue depth")->capture_default_str();
	app.add_option("--io-buf", o.io_buf_bytes, "bytes per request buffer (max request size)")
		->transform(size_value())
		->capture_default_str();
	app.add_option("-s,--socket", o.socket_path, "control socket")->capture_default_str();
	app.add_option("--recover", o.recover_id,
		       "re-attach to ublk device DEV_ID left by a killed kvfdpd");
	app.add_option("--dev-id", o.dev_id, "ask for this ublk device id");
	app.add_flag(
		"--attach", o.attach,
		"with --dev-id N: re-attach to device N when a killed kvfdpd left it, else create it "
		"(what the systemd unit uses, so Restart= re-attaches)");
	app.add_flag("--keep", o.keep,
		     "on SIGTERM leave the device in place (for --recover / --attach)");
	app.add_flag(
		"--force-remove", o.force_remove,
		"on SIGTERM remove the device even while it is mounted or held (its users get I/O "
		"errors, and kvfdpd exits once it is unmounted); by default a held device is left for the "
		"next kvfdpd");
}

// Placement (class or learned), the learner's state, the WAF twin and the BPF tagger.
void add_placement_options(CLI::App &app, CommandLine &c)
{
	auto &o = c.o;
	app.add_option(
		   "--placement", c.placement_mode,
		   "class: each lifetime class on its configured handle; learned: handles by (writer, "
		   "class) from measured lifetimes, starting from one group (docs/placement.md)")
		->check(CLI::IsMember({"class", "learned"}))
		->capture_default_str();
	app.add_option(
		   "--learn-state", o.learn_state,
		   "the learner's soft state, saved every period and read at start: a directory "
		   "(ending in /) holds learned-<device identity>.state per device, any other path "
		   "is the file (\"\": none)")
		->capture_default_str();
	app.add_option("--learn-period", o.learn_period_s,
		       "seconds between regroups of learned placement")
		->check(CLI::Range(0.05, 3600.0))
		->capture_default_str();
	c.twin_memory =
		app.add_option(
			   std::string(kvfdp::twin::kMemoryOption), o.twin.memory_bytes,
			   "memory bound of the live WAF twin's two sampled models (suffixes allowed: "
			   "64M); 0: no twin (docs/twin.md)")
			->transform(size_value())
			->capture_default_str();
	app.add_option(
		   "--twin-op", o.twin.op,
		   "over-provisioning the twin assumes for the drive (default: the model backend's --op, else 0.07)")
		->check(CLI::Range(0.001, 10.0));
	app.add_flag("--no-tagger", o.no_tagger,
		     "do not load the BPF tagger (every write on the default handle)");
	app.add_flag(
		"--require-tagger", o.require_tagger,
		"fail the start (exit 1) when the BPF tagger is not active, instead of serving DEGRADED with "
		"every write on the default handle (also require_tagger = true in the config)");
	app.add_option(
		   "--bpf-pin-dir", o.bpf_pin_root,
		   "bpffs directory of the tagger's pinned links and maps, one subdirectory per disk, so a "
		   "crash detaches nothing and a restart re-opens them (none: no pinning)")
		->capture_default_str();
}

// The I/O path's switches (buffers, zero copy, batch commands), readiness, metrics and debug.
void add_io_options(CLI::App &app, CommandLine &c)
{
	auto &o = c.o;
	app.add_flag("!--no-fixed-buffers", o.fixed_buffers, "do not register the request buffers");
	app.add_flag(
		"!--no-zero-copy", o.zero_copy,
		"copy each request through kvfdpd's buffers even where the ublk driver offers zero copy "
		"(UBLK_F_AUTO_BUF_REG, Linux 6.16+)");
	app.add_flag(
		"--zero-copy-register", o.zero_copy_register,
		"zero copy by registering each request's pages per request (UBLK_F_SUPPORT_ZERO_COPY, Linux "
		"6.15+) even where UBLK_F_AUTO_BUF_REG exists (for testing; the default prefers AUTO_BUF_REG)");
	app.add_flag(
		"!--no-batch-io", o.batch_io,
		"per-request ublk commands (FETCH_REQ / COMMIT_AND_FETCH_REQ) even where the driver offers "
		"UBLK_F_BATCH_IO (Linux 7.x)");
	app.add_option("--ready-file", o.ready_file, "write '/dev/ublkbN N' here once serving");
	app.add_option(
		"--metrics-listen", o.metrics_listen,
		"serve Prometheus GET /metrics on PORT (loopback), HOST:PORT or [IPV6]:PORT; off by default");
	app.add_option("--debug", c.debug_mask,
		       "debug category mask (1 ublk, 2 nvme, 4 bpf, 8 policy, 16 ctl)");
}

// A bad command line exits 2 (kDaemonExitUsage) with one line, never CLI11's own codes (104,
// 105, 109, ...), which the unit would restart every second. Returns the exit code, or -1
// when the line parsed.
int parse_command_line(CLI::App &app, int argc, char **argv)
{
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
			return app.exit(e);  // --help, --version
		std::string what = e.what();
		for (char &c : what)
			if (c == '\n')
				c = ' ';
		kvfdp::log::set_program("kvfdpd");
		kvfdp::log::error("%s; see kvfdpd --help", what.c_str());
		return kvfdp::proto::kDaemonExitUsage;
	}
	return -1;
}

// Turns the parsed values into the daemon's options. One path: the device; several: a
// stripe of them (the backend's kind picks the list).
void finish_options(CommandLine &c)
{
	auto &o = c.o;
	const bool by_file = o.backend.kind == "model" || o.backend.kind == "file";
	const std::vector<std::string> &paths = by_file ? c.files : c.devices;
	if (!c.devices.empty())
		o.backend.device = c.devices.front();
	if (!c.files.empty())
		o.backend.file = c.files.front();
	if (paths.size() > 1)
		o.backend.members = paths;
	o.learn = c.placement_mode == "learned";
	o.twin.memory_given = c.twin_memory->count() > 0;
	if (o.require_tagger)
		o.require_tagger_from = "--require-tagger";
	o.queues = c.queues == "auto"
			   ? 0
			   : static_cast<uint16_t>(std::strtoul(c.queues.c_str(), nullptr, 10));
	o.config_explicit = c.cfg->count() > 0;
}

}  // namespace

int main(int argc, char **argv)
{
	CLI::App app{"kvfdpd: the kvfdp ublk placement daemon.\n"
		     "Exposes an FDP namespace as /dev/ublkbN and places each write on the\n"
		     "reclaim unit handle chosen by its file's lifetime class.",
		     "kvfdpd"};
	// `kvfdpd --version`: the one version fact (kvfdp_build.hpp), as `kvfdp --version` prints it.
	app.set_version_flag("--version", std::string("kvfdpd ") + KVFDP_VERSION,
			     "print the kvfdpd version and exit");
	CommandLine c;
	c.o.config_path = kvfdp::placement::kDefaultConfigPath;
	add_backend_options(app, c);
	add_ublk_options(app, c);
	add_placement_options(app, c);
	add_io_options(app, c);
	if (const int rc = parse_command_line(app, argc, argv); rc >= 0)
		return rc;
	finish_options(c);

	kvfdp::log::set_program("kvfdpd");
	kvfdp::log::set_debug_mask(c.debug_mask);
	return kvfdp::daemon::run_daemon(c.o);
}
