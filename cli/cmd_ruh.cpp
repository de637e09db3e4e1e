// kvfdp ruh: per placement handle, its PID, RUHID, classes, RUAMW and kvfdpd's bytes.
#include "cli/subcommands.hpp"
#include "cli/source.hpp"
#include "cli/table.hpp"
#include "cli/units.hpp"

namespace kvfdp::cli {

namespace {

std::string join(const std::vector<std::string> &v, const char *sep)
{
	std::string s;
	for (const auto &x : v) {
		if (!s.empty())
			s += sep;
		s += x;
	}
	return s;
}

void print_human(CommandContext &ctx, const RuhView &v)
{
	ctx.out << v.device << " (" << v.backend << (v.members.empty() ? "" : " stripe") << ", via "
		<< v.source << "): " << v.rows.size() << " placement handles, LBA " << v.lba_size
		<< " B"
		<< (v.members.empty()
			    ? ""
			    : ", total of " + std::to_string(v.members.size()) + " members")
		<< "\n";
	bool daemon = v.source == "daemon";
	std::vector<Column> cols = {{"IDX", Align::right},        {"PID", Align::right},
				    {"RUHID", Align::right},      {"CLASSES", Align::left, true},
				    {"RUAMW_LBAS", Align::right}, {"RUAMW", Align::right},
				    {"EARUTR_S", Align::right}};
	if (daemon) {
		cols.push_back({"WRITES", Align::right});
		cols.push_back({"WRITTEN", Align::right});
	}
	Table t(cols);
	for (const auto &r : v.rows) {
		std::vector<std::string> cells = {
			std::to_string(r.index),
			std::to_string(r.pid),
			std::to_string(r.ruhid),
			r.classes.value_or(std::vector<std::string>{}).empty()
				? "-"
				: join(*r.classes, ","),
			std::to_string(r.ruamw),
			format_bytes(static_cast<u128>(r.ruamw) * v.lba_size),
			std::to_string(r.earutr)};
		if (daemon) {
			cells.push_back(r.writes ? std::to_string(*r.writes) : "-");
			cells.push_back(r.bytes ? format_bytes(*r.bytes) : "-");
		}
		t.add_row(std::move(cells));
	}
	t.render(ctx.out, ctx.table_width());
	for (const auto &m : v.members) {
		ctx.out << "\nmember " << m.member << ": " << m.device << ", "
			<< format_bytes(m.bytes) << " written through kvfdpd\n";
		Table mt({{"IDX", Align::right},
			  {"PID", Align::right},
			  {"RUHID", Align::right},
			  {"RUAMW_LBAS", Align::right},
			  {"RUAMW", Align::right},
			  {"EARUTR_S", Align::right},
			  {"WRITTEN", Align::right}});
		for (const auto &r : m.rows)
			mt.add_row({std::to_string(r.index), std::to_string(r.pid),
				    std::to_string(r.ruhid), std::to_string(r.ruamw),
				    format_bytes(static_cast<u128>(r.ruamw) * v.lba_size),
				    std::to_string(r.earutr),
				    r.bytes ? format_bytes(*r.bytes) : "-"});
		mt.render(ctx.out, ctx.table_width());
	}
	if (!v.members.empty())
		ctx.out << "a stripe of " << v.members.size() << " members, unit "
			<< format_bytes(v.stripe_bytes)
			<< ": the first table is the total (RUAMW summed over the members, each member's own "
			   "PIDs), then each member's own RUH Status\n";
	if (daemon)
		ctx.out << "WRITES, WRITTEN: what kvfdpd placed on each handle since it started\n";
	else
		ctx.out << "classes: the default map (kvfdpd's policy may differ; run with kvfdpd "
			   "up to see its map and bytes per handle)\n";
}

int run_ruh(CommandContext &ctx)
{
	Result<RuhView> view = cli_error(proto::kExitError, "");
	if (ctx.direct()) {
		auto dev = ctx.open_device();
		if (!dev)
			return ctx.fail(dev.error());
		view = ruh_from_device(**dev);
	} else {
		auto ruh = ctx.ask_daemon(proto::cmd::kRuh);
		if (!ruh.ok)
			return ctx.fail(ruh.error);
		auto st = ctx.ask_daemon(proto::cmd::kStatus);
		if (!st.ok)
			return ctx.fail(st.error);
		view = ruh_from_daemon_data(ruh.data, st.data);
	}
	if (!view)
		return ctx.fail(view.error());
	if (ctx.json())
		ctx.print_json(to_json(*view));
	else
		print_human(ctx, *view);
	return proto::kExitOk;
}

}  // namespace

void add_ruh_command(CLI::App &app, CommandContext &ctx)
{
	add_plain_command(
		app, ctx, "ruh",
		"placement handles: PID, RUHID, classes, RUAMW, EARUTR, bytes written "
		"through kvfdpd",
		"Data: kvfdpd (--socket), or a device read directly (--device /dev/ngXnY, "
		"--backend model). JSON keys follow nvme-cli: nruhsd, "
		"ruhss[].pid/ruhid/earutr/ruamw.",
		run_ruh);
}

}  // namespace kvfdp::cli
