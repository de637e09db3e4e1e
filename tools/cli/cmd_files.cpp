// kvfdp files [--top N] [--class C] [--live]: kvfdpd's per-file records (inode, path, class,
// writer, bytes, age or lifetime), largest first; kvfdpd filters and ranks over all of them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "proto/control.hpp"
#include "proto/files_request.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/table.hpp"
#include "tools/cli/units.hpp"

namespace kvfdp::cli {

namespace {

using nlohmann::json;

struct FilesOptions {
	unsigned top = 20;
	std::string cls;
	bool live_only = false;
	double now = 0; // test seam: the current Unix time (0 = the clock)
};

double num(const json &j, const char *k)
{
	return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0;
}

int run_files(Context &ctx, const FilesOptions &o)
{
	std::optional<int> want;
	if (!o.cls.empty()) {
		want = parse_class(o.cls);
		if (!want)
			return ctx.fail(kExitUsage, "--class '" + o.cls + "' is not a lifetime class; use one of " +
							    class_names_list());
	}
	if (ctx.direct())
		return ctx.fail(kExitUsage, "files come from kvfdpd's records (the BPF tagger's file "
					    "events); a device has none. Run it without --device/--backend "
					    "while kvfdpd runs");
	// The daemon filters and ranks over every record it holds; we show what it returns.
	proto::FilesQuery q;
	q.limit = o.top;
	q.order = proto::FilesQuery::Order::bytes;
	if (want)
		q.cls = static_cast<uint8_t>(*want);
	q.live_only = o.live_only;
	auto r = ctx.ask_daemon(proto::cmd::kFiles, q);
	if (!r.ok)
		return ctx.fail(r.error);
	const json &d = r.data;
	if (!d.value("available", true)) {
		std::string why = d.value("reason", std::string("no reason given"));
		if (ctx.json())
			ctx.print_json({{"available", false}, {"reason", why}, {"files", json::array()}});
		else
			ctx.out << "no file records: " << why << '\n';
		return kExitOk;
	}
	double now = o.now > 0 ? o.now
			       : std::chrono::duration<double>(
					 std::chrono::system_clock::now().time_since_epoch())
					 .count();
	std::vector<json> files;
	for (const auto &f : d.value("files", json::array())) {
		if (!f.is_object())
			continue;
		bool live = !f.contains("death") || f["death"].is_null();
		json g = f;
		g["state"] = live ? "live" : "deleted";
		if (live && f.contains("birth") && f["birth"].is_number())
			g["age_s"] = std::max(0.0, now - f["birth"].get<double>());
		files.push_back(std::move(g));
	}
	if (files.size() > o.top)
		files.resize(o.top);
	const uint64_t total = d.contains("matched") && d["matched"].is_number_unsigned()
				       ? d["matched"].get<uint64_t>()
				       : files.size();
	if (ctx.json()) {
		ctx.print_json({{"available", true}, {"matched", total}, {"files", files}});
		return kExitOk;
	}
	Table t({{"DEV", Align::left}, {"INODE", Align::right}, {"CLASS"}, {"WRITER", Align::left, true},
		 {"BYTES", Align::right}, {"STATE"}, {"AGE/LIFE", Align::right}, {"PATH", Align::left, true}});
	for (const auto &f : files) {
		std::string life;
		if (f["state"] == "live")
			life = f.contains("age_s") ? format_seconds(f["age_s"].get<double>()) : "-";
		else
			life = f.contains("lifetime_s") && f["lifetime_s"].is_number()
				       ? format_seconds(f["lifetime_s"].get<double>())
				       : "-";
		t.add_row({f.value("dev", std::string("-")),
			   f.contains("ino") ? f["ino"].dump() : "-",
			   f.value("class", std::string("-")),
			   f.contains("writer") && f["writer"].is_string() ? f["writer"].get<std::string>() : "-",
			   format_bytes(static_cast<u128>(num(f, "bytes"))),
			   f["state"].get<std::string>(), life,
			   f.contains("path") && f["path"].is_string() ? f["path"].get<std::string>() : "-"});
	}
	t.render(ctx.out, ctx.table_width());
	ctx.out << files.size() << " of " << total << " matching file(s), largest first\n";
	return kExitOk;
}

} // namespace

void add_files_command(CLI::App &app, Context &ctx)
{
	auto o = std::make_shared<FilesOptions>();
	auto *c = app.add_subcommand("files", "files kvfdpd saw: inode, path, class, bytes, age or lifetime");
	c->add_option("--top", o->top, "show the N largest")->check(CLI::Range(1u, 1000000u))->capture_default_str();
	c->add_option("--class", o->cls, "only this lifetime class (" + class_names_list() + ")");
	c->add_flag("--live", o->live_only, "only files not yet deleted");
	c->add_option("--now", o->now)->group(""); // test seam: fixed clock
	c->callback([&ctx, o] { ctx.exit_code = run_files(ctx, *o); });
}

} // namespace kvfdp::cli
