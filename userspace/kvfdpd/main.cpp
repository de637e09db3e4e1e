// kvfdpd: turns an FDP namespace into a ublk block device and places each write on the
// reclaim unit handle of its file's lifetime class.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "placement/size.hpp"
#include "userspace/daemon/config.hpp"
#include "userspace/daemon/daemon.hpp"

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
	auto *handles = app.add_option("--handles", b.nruh, "model: placement handles")->capture_default_str();
	auto *nruh = app.add_option("--nruh", b.nruh, "old name of --handles, kept as an alias");
	handles->excludes(nruh);
}

} // namespace

int main(int argc, char **argv)
{
	CLI::App app{"kvfdpd: the kvfdp ublk placement daemon.\n"
		     "Exposes an FDP namespace as /dev/ublkbN and places each write on the\n"
		     "reclaim unit handle chosen by its file's lifetime class.",
		     "kvfdpd"};
	kvfdp::daemon::DaemonOptions o;
	o.config_path = kvfdp::daemon::kDefaultConfigPath;
	uint32_t debug_mask = 0;
	std::string size_str;
	auto *cfg = app.add_option("-c,--config", o.config_path, "policy config (TOML)")->capture_default_str();
	app.add_option("-b,--backend", o.backend.kind,
		       "passthru | streams (block write streams, Linux 6.16+) | model | file")
		->capture_default_str()
		->check(CLI::IsMember({"passthru", "streams", "model", "file"}));
	std::vector<std::string> devices, files;
	app.add_option("-d,--device", devices,
		       "passthru: FDP namespace, e.g. /dev/ng0n1; streams: its block device, e.g. /dev/nvme0n1. "
		       "Give it more than once to stripe one disk across several namespaces, in that order "
		       "(docs/nvme.md, Striping)")
		->allow_extra_args(false);
	app.add_option("-f,--file", files,
		       "file: backing file; model: sparse data file (more than once: a stripe of models)")
		->allow_extra_args(false);
	app.add_option("--stripe-size", o.backend.stripe_bytes,
		       "bytes of a stripe on one member before the next (suffixes allowed: 512K); default: the "
		       "largest member's transfer limit rounded up to a power of two (512K on QEMU)")
		->transform(size_value());
	add_model_shape(app, o.backend);
	app.add_option("--lba-size", o.backend.lba_size, "file/model: logical block size")->capture_default_str();
	app.add_option("--ru-size", o.backend.ru_size, "model: reclaim unit size (a size: 1M)")
		->transform(size_value());
	app.add_option("--op", o.backend.op, "model: over-provisioning (0.28 = 28%)")->capture_default_str();
	std::string queues = "auto";
	std::string placement_mode = "class";
	app.add_option("-q,--queues", queues,
		       "ublk hardware queues, each with its own thread and ring: auto (one per CPU this process may "
		       "run on; 1 for --backend model) or 1..4096")
		->capture_default_str()
		->check(CLI::Validator(
			[](std::string &v) -> std::string {
				if (v == "auto")
					return {};
				char *end = nullptr;
				const unsigned long n = std::strtoul(v.c_str(), &end, 10);
				if (v.empty() || *end || v[0] == '-' || n < 1 || n > 4096)
					return "--queues must be auto or a number 1..4096, not '" + v + "'";
				return {};
			},
			"auto|N"));
	app.add_option("--depth", o.depth, "ublk queue depth")->capture_default_str();
	app.add_option("--io-buf", o.io_buf_bytes, "bytes per request buffer (max request size)")
		->transform(size_value())
		->capture_default_str();
	app.add_option("-s,--socket", o.socket_path, "control socket")->capture_default_str();
	app.add_option("--recover", o.recover_id, "re-attach to ublk device DEV_ID left by a killed kvfdpd");
	app.add_option("--dev-id", o.dev_id, "ask for this ublk device id");
	app.add_flag("--attach", o.attach,
		     "with --dev-id N: re-attach to device N when a killed kvfdpd left it, else create it "
		     "(what the systemd unit uses, so Restart= re-attaches)");
	app.add_flag("--keep", o.keep, "on SIGTERM leave the device in place (for --recover / --attach)");
	app.add_flag("--force-remove", o.force_remove,
		     "on SIGTERM remove the device even while it is mounted or held (its users get I/O "
		     "errors, and kvfdpd exits once it is unmounted); by default a held device is left for the "
		     "next kvfdpd");
	app.add_option("--placement", placement_mode,
		       "class: each lifetime class on its configured handle; learned: handles by (writer, "
		       "class) from measured lifetimes, starting from one group (docs/placement.md)")
		->check(CLI::IsMember({"class", "learned"}))
		->capture_default_str();
	app.add_option("--learn-state", o.learn_state,
		       "file of the learner's soft state, saved every period and read at start (\"\": none)")
		->capture_default_str();
	app.add_option("--learn-period", o.learn_period_s, "seconds between regroups of learned placement")
		->check(CLI::Range(0.05, 3600.0))
		->capture_default_str();
	auto *twin_memory = app.add_option("--twin-memory", o.twin.memory_bytes,
					   "memory bound of the live WAF twin's two sampled models (suffixes allowed: "
					   "64M); 0: no twin (docs/twin.md)")
				    ->transform(size_value())
				    ->capture_default_str();
	app.add_option("--twin-op", o.twin.op,
		       "over-provisioning the twin assumes for the drive (default: the model backend's --op, else 0.07)")
		->check(CLI::Range(0.001, 10.0));
	app.add_flag("--no-tagger", o.no_tagger, "do not load the BPF tagger (every write on the default handle)");
	app.add_flag("--require-tagger", o.require_tagger,
		     "fail the start (exit 1) when the BPF tagger is not active, instead of serving DEGRADED with "
		     "every write on the default handle (also require_tagger = true in the config)");
	app.add_option("--bpf-pin-dir", o.bpf_pin_root,
		       "bpffs directory of the tagger's pinned links and maps, one subdirectory per disk, so a "
		       "crash detaches nothing and a restart re-opens them (none: no pinning)")
		->capture_default_str();
	app.add_flag("!--no-fixed-buffers", o.fixed_buffers, "do not register the request buffers");
	app.add_flag("!--no-zero-copy", o.zero_copy,
		     "copy each request through kvfdpd's buffers even where the ublk driver offers zero copy "
		     "(UBLK_F_AUTO_BUF_REG, Linux 6.16+)");
	app.add_flag("--zero-copy-register", o.zero_copy_register,
		     "zero copy by registering each request's pages per request (UBLK_F_SUPPORT_ZERO_COPY, Linux "
		     "6.15+) even where UBLK_F_AUTO_BUF_REG exists (for testing; the default prefers AUTO_BUF_REG)");
	app.add_flag("!--no-batch-io", o.batch_io,
		     "per-request ublk commands (FETCH_REQ / COMMIT_AND_FETCH_REQ) even where the driver offers "
		     "UBLK_F_BATCH_IO (Linux 7.x)");
	app.add_option("--ready-file", o.ready_file, "write '/dev/ublkbN N' here once serving");
	app.add_option("--metrics-listen", o.metrics_listen,
		       "serve Prometheus GET /metrics on PORT (loopback), HOST:PORT or [IPV6]:PORT; off by default");
	app.add_option("--debug", debug_mask, "debug category mask (1 ublk, 2 nvme, 4 bpf, 8 policy, 16 ctl)");
	// A bad command line exits 2 (kExitUsage) with one line, never CLI11's own codes (104,
	// 105, 109, ...), which the unit would restart every second.
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
			return app.exit(e);  // --help
		std::string what = e.what();
		for (char &c : what)
			if (c == '\n')
				c = ' ';
		kvfdp::log::set_program("kvfdpd");
		kvfdp::log::error("%s; see kvfdpd --help", what.c_str());
		return kvfdp::daemon::kExitUsage;
	}
	// One path: the device; several: a stripe of them (the backend's kind picks the list).
	const bool by_file = o.backend.kind == "model" || o.backend.kind == "file";
	const std::vector<std::string> &paths = by_file ? files : devices;
	if (!devices.empty())
		o.backend.device = devices.front();
	if (!files.empty())
		o.backend.file = files.front();
	if (paths.size() > 1)
		o.backend.members = paths;
	o.learn = placement_mode == "learned";
	o.twin.memory_given = twin_memory->count() > 0;
	if (o.require_tagger)
		o.require_tagger_from = "--require-tagger";
	o.queues = queues == "auto" ? 0 : static_cast<uint16_t>(std::strtoul(queues.c_str(), nullptr, 10));
	(void)size_str;

	kvfdp::log::set_program("kvfdpd");
	kvfdp::log::set_debug_mask(debug_mask);
	o.config_explicit = cfg->count() > 0;
	return kvfdp::daemon::run_daemon(o);
}
