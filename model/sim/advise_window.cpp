// advise from the twin's window: fetch or read it, save it, sweep it, print the report.
#include "model/sim/advise_window.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "proto/exit_codes.hpp"
#include "model/sim/window_source.hpp"

namespace kvfdp::sim {

namespace {

using proto::kExitError;
using proto::kExitNoDevice;
using proto::kExitOk;
using proto::kExitUsage;

// Options advise takes with a window: its own and the window's.
bool window_option(const std::string &name)
{
	for (const char *o : {"--target", "--sweep", "--placement", "--output", "--help", "--twin",
			      "--window", "--save-window"})
		if (name == o)
			return true;
	return false;
}

int fail(int code, const std::string &line)
{
	std::fprintf(stderr, "kvfdp advise: %s\n", line.c_str());
	return code;
}

// The window from FILE (as --save-window wrote it): the error line, or "".
std::string read_window(const std::string &path, proto::TwinWindow &w)
{
	std::ifstream in(path);
	if (!in)
		return "--window: cannot read '" + path +
		       "'; give a file kvfdp advise --save-window wrote";
	std::stringstream ss;
	ss << in.rdbuf();
	const nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
	if (j.is_discarded() || !j.is_object() || !j.contains("records"))
		return "--window: '" + path +
		       "' is not a twin window (kvfdp advise --save-window writes one)";
	w = j.get<proto::TwinWindow>();
	return "";
}

// w into path as one JSON line: the error line, or "".
std::string save_window(const std::string &path, const proto::TwinWindow &w)
{
	std::ofstream out(path, std::ios::trunc);
	if (out)
		out << nlohmann::json(w).dump() << '\n';
	if (!out)
		return "--save-window: cannot write '" + path + "'; give a writable path";
	return "";
}

// The window from kvfdpd or the file; the exit code when that failed, else -1.
int load_window(const WindowArgs &a, const TwinWindowClient &client, proto::TwinWindow &w)
{
	if (!a.window_file.empty()) {
		const std::string err = read_window(a.window_file, w);
		return err.empty() ? -1 : fail(kExitUsage, err);
	}
	if (!client.fetch)
		return fail(kExitUsage,
			    "--twin: this kvfdp cannot reach kvfdpd; give --window FILE");
	auto r = client.fetch();
	if (!r)
		return fail(r.error().code == std::errc::no_such_device ? kExitNoDevice
									: kExitError,
			    r.error().message());
	w = std::move(*r);
	return -1;
}

}  // namespace

bool wants_window(const WindowArgs &w, const TwinWindowClient &client)
{
	return w.twin || !w.window_file.empty() || !w.save_window.empty() ||
	       (client.socket_given && client.socket_given());
}

std::string window_option_refusal(const CLI::App &sub)
{
	for (const CLI::Option *opt : sub.get_options()) {
		if (opt->count() == 0 || opt->get_lnames().empty())
			continue;
		const std::string name = "--" + opt->get_lnames().front();
		if (!window_option(name))
			return name +
			       ": the twin's window brings its own workload and sampled model; drop " +
			       name + " (or drop --twin/--window/--socket to advise on a trace)";
	}
	return "";
}

int run_window_advise(const WindowArgs &a, const TwinWindowClient &client, const AdviseOptions &o,
		      const std::string &target, bool json)
{
	if (!a.window_file.empty() && a.twin)
		return fail(kExitUsage, "--window: give either --window FILE or --twin, not both");
	proto::TwinWindow w;
	if (const int rc = load_window(a, client, w); rc >= 0)
		return rc;
	if (const std::string why = window_refusal(w); !why.empty())
		return fail(kExitError, why);
	if (!a.save_window.empty())
		if (const std::string err = save_window(a.save_window, w); !err.empty())
			return fail(kExitError, err);
	const std::string file = !a.save_window.empty() ? a.save_window : a.window_file;
	WindowSource src(std::move(w), file, target);
	AdviseOptions opts = o;
	for (Placement p : opts.placements)
		if (p != Placement::none && p != Placement::writer && p != Placement::learned)
			return fail(
				kExitUsage,
				std::string("--placement: ") + placement_name(p) +
					" needs the writes' classes, which the twin's window does not "
					"keep; choose among none, writer and learned");
	auto adv = advise(src, opts);
	if (!adv)
		return fail(kExitError, adv.error().message());
	if (json) {
		nlohmann::ordered_json j = advice_to_json(*adv);
		j["source"] = src.source_json();
		std::printf("%s\n", j.dump().c_str());
	} else {
		std::fputs(advice_to_table(*adv).c_str(), stdout);
	}
	std::fflush(stdout);
	if (adv->pick)
		return kExitOk;
	return fail(kExitError, no_setting_line(*adv));
}

}  // namespace kvfdp::sim
