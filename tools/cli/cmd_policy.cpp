// kvfdp policy show [FILE] | check FILE: a kvfdpd policy config, parsed and validated with
// the placement library's parser, the one kvfdpd uses, or the policy kvfdpd runs now.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "proto/control.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/source.hpp"
#include "tools/cli/table.hpp"
#include "tools/cli/units.hpp"

#include "placement/config.hpp"
#include "placement/policy.hpp"

namespace kvfdp::cli {

namespace {

using nlohmann::json;

struct PolicyOptions {
	std::string file;
};

double num(const json &j, const char *k)
{
	return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0;
}

// kvfdpd's learned groups (--placement learned): one row per key, by handle.
void print_learned(Context &ctx, const json &l)
{
	ctx.out << '\n';
	KeyValues kv;
	kv.add("placement", "learned: " + l.value("groups", json(0)).dump() + " group(s) on handle(s) " +
				    l.value("handles_used", json::array()).dump());
	kv.add("write clock", format_bytes(static_cast<u128>(num(l, "clock_bytes"))) + " written since start");
	kv.add("RUH updates", l.value("ruh_updates", json(0)).dump() + " (refused " +
				      l.value("ruh_update_refused", json(0)).dump() + ")");
	kv.render(ctx.out, ctx.table_width());
	ctx.out << '\n';
	std::vector<json> keys;
	for (const auto &k : l.value("keys", json::array()))
		if (k.is_object())
			keys.push_back(k);
	std::stable_sort(keys.begin(), keys.end(), [](const json &a, const json &b) {
		return num(a, "handle") != num(b, "handle") ? num(a, "handle") < num(b, "handle")
							      : num(a, "lifetime_bytes") < num(b, "lifetime_bytes");
	});
	Table t({{"HANDLE", Align::right}, {"WRITER", Align::left, true}, {"CLASS"}, {"LIFETIME", Align::right},
		 {"LIFE(S)", Align::right}, {"SHARE", Align::right}, {"LIVE", Align::right}, {"FROM"}});
	for (const auto &k : keys) {
		char share[16];
		std::snprintf(share, sizeof share, "%.1f%%", 100.0 * num(k, "write_share"));
		const std::string writer = k.contains("writer") && k["writer"].is_string()
						   ? k["writer"].get<std::string>()
						   : "id " + k.value("writer_id", json(0)).dump();
		t.add_row({k.contains("handle") ? k["handle"].dump() : "-", writer, k.value("class", std::string("-")),
			   format_bytes(static_cast<u128>(num(k, "lifetime_bytes"))), num(k, "lifetime_s") > 0 ? format_seconds(num(k, "lifetime_s")) : "-",
			   share, format_bytes(static_cast<u128>(num(k, "live_bytes"))),
			   k.value("pinned", false) ? "config" : "learned"});
	}
	t.render(ctx.out, ctx.table_width());
}

void print_policy_human(Context &ctx, const json &p)
{
	KeyValues kv;
	kv.add("config", p.value("config", std::string("-")).empty() ? "(built-in default)"
									: p.value("config", std::string("-")));
	if (p.contains("generation"))
		kv.add("generation", p["generation"].dump());
	kv.add("handles", p.contains("nruh") ? p["nruh"].dump() : "-");
	const json &w = p.value("watch", json::object());
	std::string dir = w.value("dir", std::string());
	kv.add("watch dir", dir.empty() ? "(all files)" : dir);
	kv.render(ctx.out, ctx.table_width());
	ctx.out << '\n';
	Table t({{"CLASS"}, {"HANDLE", Align::right}, {"PID", Align::right}, {"FROM"}});
	for (const auto &m : p.value("map", json::array()))
		t.add_row({m.value("class", std::string("?")), m.contains("handle") ? m["handle"].dump() : "-",
			   m.contains("pid") && !m["pid"].is_null() ? m["pid"].dump() : "-",
			   m.value("from", std::string("-"))});
	t.render(ctx.out, ctx.table_width());
	const json &rules = p.value("rules", json::array());
	if (!rules.empty()) {
		ctx.out << '\n';
		Table r({{"PATH", Align::left, true}, {"CLASS"}});
		for (const auto &x : rules)
			r.add_row({x.value("path", std::string("?")), x.value("class", std::string("?"))});
		r.render(ctx.out, ctx.table_width());
	}
	const json &writers = p.value("writers", json::array());
	if (!writers.empty()) {
		ctx.out << '\n';
		Table r({{"WRITER", Align::left, true}, {"CGROUP/DIR", Align::left, true}, {"FIXED HANDLE", Align::right}});
		for (const auto &x : writers) {
			const json &where = x.contains("cgroup") && x["cgroup"].is_string() ? x["cgroup"] : x.value("dir", json());
			r.add_row({x.value("name", std::string("?")), where.is_string() ? where.get<std::string>() : "-",
				   x.contains("handle") && x["handle"].is_number() ? x["handle"].dump() : "-"});
		}
		r.render(ctx.out, ctx.table_width());
	}
	if (p.contains("learned") && p["learned"].is_object())
		print_learned(ctx, p["learned"]);
}

// Parses and validates file; with a device (--device / --backend) the handle numbers are
// checked against its handles and the PIDs shown, else against kvfdpd's upper limit.
Result<json> policy_from_file(Context &ctx, const std::string &file)
{
	auto cfg = placement::load_config(file, false);
	if (!cfg)
		return cli_error(kExitUsage, cfg.error().message());
	uint16_t nruh = placement::kMaxHandles;
	std::vector<nvme::Handle> handles;
	bool checked = false;
	if (ctx.direct()) {
		auto dev = ctx.open_device();
		if (!dev)
			return std::move(dev).error();
		auto hs = (*dev)->handles();
		if (!hs)
			return std::move(hs).error();
		handles = *hs;
		nruh = static_cast<uint16_t>(handles.size());
		checked = true;
	}
	auto pol = placement::make_policy(*cfg, nruh);
	if (!pol)
		return cli_error(kExitUsage, pol.error().message());
	json map = json::array();
	for (unsigned c = 0; c < placement::kNumClasses; c++) {
		uint16_t h = pol->handle[c];
		json pid = h < handles.size() ? json(handles[h].pid) : json(nullptr);
		map.push_back({{"class", std::string(class_name(static_cast<int>(c)))},
			       {"handle", h},
			       {"pid", pid},
			       {"from", cfg->handle[c] ? "config" : "default"}});
	}
	json rules = json::array();
	for (const auto &r : cfg->rules)
		rules.push_back({{"path", r.path}, {"class", std::string(class_name(r.cls))}, {"line", r.line}});
	json doc = {{"config", file},
		    {"valid", true},
		    {"checked_against_device", checked},
		    {"nruh", checked ? json(nruh) : json(nullptr)},
		    {"map", map},
		    {"rules", rules},
		    {"watch", {{"dir", cfg->watch_dir}}}};
	return doc;
}

int run_show(Context &ctx, const PolicyOptions &o)
{
	json doc;
	if (!o.file.empty()) {
		auto d = policy_from_file(ctx, o.file);
		if (!d)
			return ctx.fail(d.error());
		doc = std::move(d).value();
	} else {
		if (ctx.direct())
			return ctx.fail(kExitUsage, "policy show without FILE asks kvfdpd for its policy; "
						    "give a FILE to read one with --device/--backend");
		auto r = ctx.ask_daemon(proto::cmd::kPolicy);
		if (!r.ok)
			return ctx.fail(r.error);
		doc = r.data;
	}
	if (ctx.json())
		ctx.print_json(doc);
	else
		print_policy_human(ctx, doc);
	return kExitOk;
}

int run_check(Context &ctx, const PolicyOptions &o)
{
	auto d = policy_from_file(ctx, o.file);
	if (!d) {
		if (ctx.json()) {
			ctx.print_json({{"config", o.file}, {"valid", false}, {"error", d.error().context}});
			ctx.exit_code = exit_for(d.error());
			return ctx.exit_code;
		}
		return ctx.fail(d.error());
	}
	if (ctx.json()) {
		ctx.print_json({{"config", o.file}, {"valid", true},
				{"checked_against_device", (*d)["checked_against_device"]}});
	} else {
		ctx.out << o.file << ": valid";
		if ((*d)["checked_against_device"] == true)
			ctx.out << " for a device with " << (*d)["nruh"].dump() << " handles\n";
		else
			ctx.out << " (handle numbers not checked against a drive: add --device "
				   "/dev/ngXnY or --backend model)\n";
	}
	return kExitOk;
}

} // namespace

void add_policy_command(CLI::App &app, Context &ctx)
{
	auto *p = app.add_subcommand("policy", "kvfdpd's placement policy: show or check a config");
	p->require_subcommand(1);
	auto o = std::make_shared<PolicyOptions>();
	auto *show = p->add_subcommand("show", "the policy in FILE, or the one kvfdpd runs now");
	show->add_option("FILE", o->file, "a kvfdpd TOML config");
	show->callback([&ctx, o] { ctx.exit_code = run_show(ctx, *o); });
	auto *check = p->add_subcommand("check", "validate FILE (exit 0 valid, 2 invalid)");
	check->add_option("FILE", o->file, "a kvfdpd TOML config")->required();
	check->callback([&ctx, o] { ctx.exit_code = run_check(ctx, *o); });
}

} // namespace kvfdp::cli
