// `kvfdp record --disk DEV [--duration S] [--out FILE]`.
#include "cli/record/cmd_record.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "bpf/user/writer_specs.hpp"
#include "placement/config.hpp"
#include "cli/record/record.hpp"

namespace kvfdp::bpf {
namespace {

std::atomic<bool> g_stop{false};

void on_signal(int)
{
	g_stop.store(true);
}

struct RecordArgs {
	std::string disk;
	double duration = 0;
	std::string out;
	std::string config = placement::kDefaultConfigPath;
	std::string names;
};

int run_record(const RecordArgs &a)
{
	if (a.duration < 0) {
		std::fprintf(stderr, "kvfdp record: --duration must be >= 0 seconds\n");
		return 2;
	}
	std::FILE *out = stdout;
	if (!a.out.empty() && a.out != "-") {
		out = std::fopen(a.out.c_str(), "w");
		if (!out) {
			std::fprintf(stderr, "kvfdp record: cannot write %s: %s\n", a.out.c_str(),
				     std::strerror(errno));
			return 1;
		}
	}
	struct sigaction sa {};
	sa.sa_handler = on_signal;  // no SA_RESTART: the poll returns at once
	::sigaction(SIGINT, &sa, nullptr);
	::sigaction(SIGTERM, &sa, nullptr);
	g_stop.store(false);

	RecordOptions o;
	o.disk = a.disk;
	o.duration_s = a.duration;
	o.names_out = a.names;
	// The [[writer]] entries and watch_dir kvfdpd places by (none without a config file).
	auto cfg = placement::load_config(a.config, a.config == placement::kDefaultConfigPath);
	if (!cfg) {
		std::fprintf(stderr, "kvfdp record: %s\n", cfg.error().message().c_str());
		if (out != stdout)
			std::fclose(out);
		return 2;
	}
	o.writers = writer_specs(cfg->writers);
	o.watch_dir = cfg->watch_dir;
	auto r = record_trace(o, out, g_stop);
	if (out != stdout)
		std::fclose(out);
	if (!r) {
		std::fprintf(stderr, "kvfdp record: %s\n", r.error().message().c_str());
		return 1;
	}
	for (const std::string &w : r->warnings)
		std::fprintf(stderr, "kvfdp record: warning: %s\n", w.c_str());
	std::fprintf(stderr,
		     "kvfdp record: %llu requests, %llu dropped, %llu with a raw writer id; "
		     "sources: %s\n",
		     static_cast<unsigned long long>(r->rows),
		     static_cast<unsigned long long>(r->dropped),
		     static_cast<unsigned long long>(r->raw_rows), r->sources.c_str());
	for (int c = 0; c < KVFDP_NR_CLASSES; c++)
		if (r->write_bytes[c] || r->discard_bytes[c])
			std::fprintf(stderr, "  class %d: %llu bytes written, %llu discarded\n", c,
				     static_cast<unsigned long long>(r->write_bytes[c]),
				     static_cast<unsigned long long>(r->discard_bytes[c]));
	return r->dropped ? 1 : 0;
}

}  // namespace

void add_record_command(CLI::App &app, int &exit_code)
{
	auto args = std::make_shared<RecordArgs>();
	CLI::App *cmd = app.add_subcommand(
		"record",
		"record a tagged block trace of a disk (CSV t_us,op,slba,nlb,class,writer)");
	cmd->add_option("--disk", args->disk, "whole block device to trace, e.g. /dev/nvme0n1")
		->required();
	cmd->add_option("--duration", args->duration, "seconds to record (default: until Ctrl-C)");
	cmd->add_option("--out", args->out, "CSV file to write (default: stdout)");
	cmd->add_option("--config", args->config,
			"kvfdpd's config, for its [[writer]] entries and watch_dir (default: " +
				std::string(placement::kDefaultConfigPath) + " when it exists)");
	cmd->add_option("--names", args->names,
			"also write the trace's writer ids and their names (CSV writer,name) here");
	cmd->callback([args, &exit_code] { exit_code = run_record(*args); });
}

}  // namespace kvfdp::bpf
