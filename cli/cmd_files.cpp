// kvfdp files [--top N] [--class C] [--live]: kvfdpd's per-file records (inode, path, class,
// writer, bytes, age or lifetime), largest first; kvfdpd filters and ranks over all of them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "proto/control.hpp"
#include "proto/files_reply.hpp"
#include "proto/files_request.hpp"
#include "cli/subcommands.hpp"
#include "cli/table.hpp"
#include "cli/units.hpp"

namespace kvfdp::cli {

namespace {

struct FilesOptions {
	unsigned top = 20;
	std::string cls;
	bool live_only = false;
	double now = 0;  // test seam: the current Unix time (0 = the clock)
};

// The daemon's reply d cut to its top rows, each with its state and, while live, its age
// at time now (Unix seconds).
proto::FilesReply shown_files(const proto::FilesReply &d, unsigned top, double now)
{
	proto::FilesReply shown;
	shown.files = d.files;
	if (shown.files.size() > top)
		shown.files.resize(top);
	for (proto::FileRow &f : shown.files) {
		const bool live = !f.death;
		f.state = live ? "live" : "deleted";
		if (live && f.birth)
			f.age_s = std::max(0.0, now - *f.birth);
	}
	shown.matched = d.matched.value_or(shown.files.size());
	return shown;
}

// Prints the rows of shown as a table, then how many of how many matching it shows.
void print_files_table(CommandContext &ctx, const proto::FilesReply &shown)
{
	Table t({{"DEV", Align::left},
		 {"INODE", Align::right},
		 {"CLASS"},
		 {"WRITER", Align::left, true},
		 {"BYTES", Align::right},
		 {"STATE"},
		 {"AGE/LIFE", Align::right},
		 {"PATH", Align::left, true}});
	for (const proto::FileRow &f : shown.files) {
		// A live file's age, a deleted one's lifetime.
		std::string life = "-";
		if (f.age_s)
			life = format_seconds(*f.age_s);
		else if (f.death && f.lifetime_s)
			life = format_seconds(*f.lifetime_s);
		t.add_row({f.dev.empty() ? "-" : f.dev, std::to_string(f.ino),
			   f.cls.empty() ? "-" : f.cls, f.writer.value_or("-"),
			   format_bytes(static_cast<u128>(f.bytes)), *f.state, life,
			   f.path.value_or("-")});
	}
	t.render(ctx.out, ctx.table_width());
	ctx.out << shown.files.size() << " of " << *shown.matched
		<< " matching file(s), largest first\n";
}

int run_files(CommandContext &ctx, const FilesOptions &o)
{
	std::optional<int> want;
	if (!o.cls.empty()) {
		want = parse_class(o.cls);
		if (!want)
			return ctx.fail(proto::kExitUsage,
					"--class '" + o.cls +
						"' is not a lifetime class; use one of " +
						class_names_list());
	}
	if (ctx.direct())
		return ctx.fail(proto::kExitUsage,
				"files come from kvfdpd's records (the BPF tagger's file "
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
	const auto d = proto::reply_as<proto::FilesReply>(r.data);
	if (!d.available) {
		proto::FilesReply none;
		none.available = false;
		none.reason = d.reason.value_or("no reason given");
		if (ctx.json())
			ctx.print_json(none);
		else
			ctx.out << "no file records: " << *none.reason << '\n';
		return proto::kExitOk;
	}
	double now = o.now > 0 ? o.now
			       : std::chrono::duration<double>(
					 std::chrono::system_clock::now().time_since_epoch())
					 .count();
	const proto::FilesReply shown = shown_files(d, o.top, now);
	if (ctx.json())
		ctx.print_json(shown);
	else
		print_files_table(ctx, shown);
	return proto::kExitOk;
}

}  // namespace

void add_files_command(CLI::App &app, CommandContext &ctx)
{
	auto o = std::make_shared<FilesOptions>();
	auto *c = app.add_subcommand(
		"files", "files kvfdpd saw: inode, path, class, bytes, age or lifetime");
	c->add_option("--top", o->top, "show the N largest")
		->check(CLI::Range(1u, 1000000u))
		->capture_default_str();
	c->add_option("--class", o->cls, "only this lifetime class (" + class_names_list() + ")");
	c->add_flag("--live", o->live_only, "only files not yet deleted");
	c->add_option("--now", o->now)->group("");  // test seam: fixed clock
	c->callback([&ctx, o] { ctx.exit_code = run_files(ctx, *o); });
}

}  // namespace kvfdp::cli
