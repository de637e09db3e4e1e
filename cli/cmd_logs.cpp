// kvfdp configs / kvfdp events: the FDP configurations (0x20), RUH usage (0x21) and FDP
// events (0x23) logs, decoded.
#include <cstdio>
#include <cstring>

#include "cli/subcommands.hpp"
#include "cli/fdp_view.hpp"
#include "cli/source.hpp"
#include "cli/table.hpp"
#include "cli/units.hpp"

namespace kvfdp::cli {

namespace {

using nlohmann::json;

// Log pages are endurance-group wide; FDP must at least be supported to have them.
Result<std::unique_ptr<nvme::Device>> open_fdp_device(CommandContext &ctx)
{
	auto d = open_log_device(ctx);
	if (!d)
		return d;
	if (!(*d)->info().fdp_supported)
		return *fdp_unusable((*d)->info());
	return d;
}

// The configurations log as `kvfdp configs -o json` shows it, with the RUH usage beside it.
json configs_json(const nvme::FdpConfigs &cfgs, const std::vector<uint8_t> &usage,
		  const nvme::DeviceInfo &info)
{
	json jc = json::array();
	for (size_t i = 0; i < cfgs.configs.size(); i++) {
		const auto &c = cfgs.configs[i];
		json ruhs = json::array();
		for (size_t h = 0; h < c.ruht.size(); h++)
			ruhs.push_back({{"ruhid", h},
					{"ruht", c.ruht[h]},
					{"type", ruht_name(c.ruht[h])}});
		jc.push_back({{"index", i},
			      {"active", info.fdp_enabled && i == info.config_index},
			      {"valid", c.valid},
			      {"fdpa", c.fdpa},
			      {"rgif", c.rgif},
			      {"vwc", c.vwc},
			      {"nrg", c.nrg},
			      {"nruh", c.nruh},
			      {"maxpids", c.maxpids},
			      {"nnss", c.nnss},
			      {"runs", c.runs},
			      {"erutl", c.erutl},
			      {"ruhs", ruhs}});
	}
	json ju = json::array();
	for (size_t h = 0; h < usage.size(); h++)
		ju.push_back({{"ruhid", h}, {"ruha", usage[h]}, {"usage", ruha_name(usage[h])}});
	return {{"device", display_path(info)},
		{"fdp_enabled", info.fdp_enabled},
		{"version", cfgs.version},
		{"ncfg", cfgs.configs.size()},
		{"configs", jc},
		{"nruh", usage.size()},
		{"ruhus", ju}};
}

// The text view: one row per configuration, then the active one's handles.
void print_configs(CommandContext &ctx, const json &doc, const std::vector<uint8_t> &usage)
{
	const json &jc = doc["configs"];
	ctx.out << doc["device"].get<std::string>() << ": " << jc.size()
		<< " FDP configuration(s), FDP "
		<< (doc["fdp_enabled"] == true ? "enabled" : "disabled") << "\n";
	Table t({{"CFG", Align::right},
		 {"ACTIVE"},
		 {"VALID"},
		 {"RGIF", Align::right},
		 {"NRG", Align::right},
		 {"NRUH", Align::right},
		 {"MAXPIDS", Align::right},
		 {"RU_SIZE", Align::right},
		 {"ERUTL_S", Align::right},
		 {"VWC"}});
	for (const auto &c : jc)
		t.add_row({c["index"].dump(), c["active"] == true ? "yes" : "no",
			   c["valid"] == true ? "yes" : "no", c["rgif"].dump(), c["nrg"].dump(),
			   c["nruh"].dump(), c["maxpids"].dump(),
			   format_bytes(c["runs"].get<uint64_t>()), c["erutl"].dump(),
			   c["vwc"] == true ? "yes" : "no"});
	t.render(ctx.out, ctx.table_width());
	for (const auto &c : jc) {
		if (c["active"] != true)
			continue;
		ctx.out << "\nhandles of configuration " << c["index"].dump() << ":\n";
		Table h({{"RUHID", Align::right}, {"TYPE"}, {"USAGE"}});
		for (const auto &r : c["ruhs"]) {
			size_t id = r["ruhid"].get<size_t>();
			h.add_row({r["ruhid"].dump(), r["type"].get<std::string>(),
				   id < usage.size() ? ruha_name(usage[id]) : "-"});
		}
		h.render(ctx.out, ctx.table_width());
	}
}

int run_configs(CommandContext &ctx)
{
	auto d = open_fdp_device(ctx);
	if (!d)
		return ctx.fail(d.error());
	nvme::Device &dev = **d;
	auto raw = dev.log_page(nvme::kLidFdpConfigs);
	if (!raw)
		return ctx.fail(raw.error());
	auto cfgs = nvme::parse_fdp_configs(*raw);
	if (!cfgs)
		return ctx.fail(cfgs.error());
	std::vector<uint8_t> usage;
	if (auto uraw = dev.log_page(nvme::kLidRuhUsage))
		if (auto u = nvme::parse_ruh_usage(*uraw))
			usage = std::move(u).value();
	const json doc = configs_json(*cfgs, usage, dev.info());
	if (ctx.json())
		ctx.print_json(doc);
	else
		print_configs(ctx, doc, usage);
	return proto::kExitOk;
}

struct EventsOptions {
	bool host_only = false;
	bool controller_only = false;
};

int run_events(CommandContext &ctx, const EventsOptions &o)
{
	auto d = open_fdp_device(ctx);
	if (!d)
		return ctx.fail(d.error());
	nvme::Device &dev = **d;
	json events = json::array();
	Table t({{"ORIGIN"},
		 {"TYPE"},
		 {"PID", Align::right},
		 {"NSID", Align::right},
		 {"RGID", Align::right},
		 {"RUHID", Align::right},
		 {"TIMESTAMP_MS", Align::right}});
	struct Origin {
		const char *name;
		uint8_t lsp;
		bool on;
	};
	const Origin origins[] = {{"host", nvme::kLspFdpHostEvents, !o.controller_only},
				  {"controller", 0, !o.host_only}};
	for (const auto &org : origins) {
		if (!org.on)
			continue;
		auto raw = dev.log_page(nvme::kLidFdpEvents, org.lsp);
		if (!raw)
			return ctx.fail(raw.error());
		auto evs = nvme::parse_fdp_events(*raw);
		if (!evs)
			return ctx.fail(evs.error());
		for (const auto &e : *evs) {
			uint64_t ts = 0;
			std::memcpy(&ts, e.timestamp, 6);  // 48-bit milliseconds, little-endian
			bool piv = e.flags & nvme::kFdpEventFlagPiv;
			bool nsidv = e.flags & nvme::kFdpEventFlagNsidv;
			bool lv = e.flags & nvme::kFdpEventFlagLv;
			json j = {{"origin", org.name},
				  {"type", e.type},
				  {"name", event_type_name(e.type)},
				  {"fdpef", e.flags},
				  {"pid", piv ? json(e.pid) : json(nullptr)},
				  {"nsid", nsidv ? json(e.nsid) : json(nullptr)},
				  {"rgid", lv ? json(e.rgid) : json(nullptr)},
				  {"ruhid", lv ? json(e.ruhid) : json(nullptr)},
				  {"timestamp_ms", ts}};
			auto cell = [](const json &v) {
				return v.is_null() ? std::string("-") : v.dump();
			};
			t.add_row({org.name, j["name"].get<std::string>(), cell(j["pid"]),
				   cell(j["nsid"]), cell(j["rgid"]), cell(j["ruhid"]),
				   std::to_string(ts)});
			events.push_back(std::move(j));
		}
	}
	if (ctx.json()) {
		ctx.print_json({{"device", display_path(dev.info())},
				{"nevents", events.size()},
				{"events", events}});
		return proto::kExitOk;
	}
	if (events.empty()) {
		ctx.out << display_path(dev.info()) << ": no FDP events logged\n";
		return proto::kExitOk;
	}
	t.render(ctx.out, ctx.table_width());
	return proto::kExitOk;
}

}  // namespace

void add_configs_command(CLI::App &app, CommandContext &ctx)
{
	add_plain_command(app, ctx, "configs",
			  "FDP configurations (log 0x20) and RUH usage (log 0x21)",
			  "Reads the device (--device, --backend model, or the namespace kvfdpd "
			  "serves); reading logs from a real drive needs root.",
			  run_configs);
}

void add_events_command(CLI::App &app, CommandContext &ctx)
{
	auto o = std::make_shared<EventsOptions>();
	auto *c = app.add_subcommand("events", "FDP events (log 0x23), host and controller");
	auto *h = c->add_flag("--host", o->host_only, "host events only");
	c->add_flag("--controller", o->controller_only, "controller events only")->excludes(h);
	c->callback([&ctx, o] { ctx.exit_code = run_events(ctx, *o); });
}

}  // namespace kvfdp::cli
