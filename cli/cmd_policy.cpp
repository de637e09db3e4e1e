// kvfdp policy show [FILE] | check FILE: a kvfdpd policy config, parsed and validated with
// the placement library's parser, the one kvfdpd uses, or the policy kvfdpd runs now.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "proto/control.hpp"
#include "proto/policy_reply.hpp"
#include "cli/subcommands.hpp"
#include "cli/source.hpp"
#include "cli/table.hpp"
#include "cli/units.hpp"

#include "placement/config.hpp"
#include "placement/policy.hpp"

namespace kvfdp::cli {

namespace {

struct PolicyOptions {
	std::string file;
};

// kvfdpd's learned groups (--placement learned): one row per key, by handle.
void print_learned(CommandContext &ctx, const proto::LearnedPolicy &l)
{
	ctx.out << '\n';
	KeyValues kv;
	kv.add("placement", "learned: " + std::to_string(l.groups) + " group(s) on handle(s) " +
				    nlohmann::json(l.handles_used).dump());
	if (l.grouping == proto::kGroupingByClass)
		kv.add("grouping",
		       "by class, as hint places it: most writes come from writers "
		       "replaced faster than they are measured; give each engine a "
		       "directory or a [[writer]] entry (docs/bpf.md, Writer identity)");
	kv.add("write clock",
	       format_bytes(static_cast<u128>(l.clock_bytes)) + " written since start");
	kv.add("RUH updates", std::to_string(l.ruh_updates) + " (refused " +
				      std::to_string(l.ruh_update_refused) + ")");
	kv.add("keys", std::to_string(l.key_count) + " of " + std::to_string(l.max_keys) + ", " +
			       std::to_string(l.retired_keys) + " retired since start, " +
			       format_bytes(static_cast<u128>(l.overflow_bytes)) +
			       " written while full");
	kv.render(ctx.out, ctx.table_width());
	ctx.out << '\n';
	std::vector<proto::LearnedKey> keys = l.keys;
	std::stable_sort(keys.begin(), keys.end(),
			 [](const proto::LearnedKey &a, const proto::LearnedKey &b) {
				 return a.handle != b.handle ? a.handle < b.handle
							     : a.lifetime_bytes < b.lifetime_bytes;
			 });
	Table t({{"HANDLE", Align::right},
		 {"WRITER", Align::left, true},
		 {"CLASS"},
		 {"LIFETIME", Align::right},
		 {"LIFE(S)", Align::right},
		 {"SHARE", Align::right},
		 {"LIVE", Align::right},
		 {"FROM"}});
	for (const proto::LearnedKey &k : keys) {
		char share[16];
		std::snprintf(share, sizeof share, "%.1f%%", 100.0 * k.write_share);
		t.add_row({std::to_string(k.handle),
			   k.writer.value_or("id " + std::to_string(k.writer_id)),
			   k.cls.empty() ? "-" : k.cls,
			   format_bytes(static_cast<u128>(k.lifetime_bytes)),
			   k.lifetime_s > 0 ? format_seconds(k.lifetime_s) : "-", share,
			   format_bytes(static_cast<u128>(k.live_bytes)),
			   k.pinned ? "config" : "learned"});
	}
	t.render(ctx.out, ctx.table_width());
}

// "?" for a name the document left out.
std::string named(const std::string &s)
{
	return s.empty() ? "?" : s;
}

void print_policy_human(CommandContext &ctx, const proto::PolicyReply &p)
{
	KeyValues kv;
	kv.add("config", p.config.empty() ? "(built-in default)" : p.config);
	if (p.generation)
		kv.add("generation", std::to_string(*p.generation));
	// A FILE not checked against a device has no handle count: its JSON's null, as before.
	kv.add("handles", p.nruh                     ? std::to_string(*p.nruh)
			  : p.checked_against_device ? "null"
						     : "-");
	kv.add("watch dir", p.watch.dir.empty() ? "(all files)" : p.watch.dir);
	kv.render(ctx.out, ctx.table_width());
	ctx.out << '\n';
	Table t({{"CLASS"}, {"HANDLE", Align::right}, {"PID", Align::right}, {"FROM"}});
	for (const proto::PolicyMapRow &m : p.map)
		t.add_row({named(m.cls), std::to_string(m.handle),
			   m.pid ? std::to_string(*m.pid) : "-", m.from.value_or("-")});
	t.render(ctx.out, ctx.table_width());
	if (!p.rules.empty()) {
		ctx.out << '\n';
		Table r({{"PATH", Align::left, true}, {"CLASS"}});
		for (const proto::PolicyRule &x : p.rules)
			r.add_row({named(x.path), named(x.cls)});
		r.render(ctx.out, ctx.table_width());
	}
	if (p.writers && !p.writers->empty()) {
		ctx.out << '\n';
		Table r({{"WRITER", Align::left, true},
			 {"CGROUP/DIR", Align::left, true},
			 {"FIXED HANDLE", Align::right}});
		for (const proto::PolicyWriter &x : *p.writers)
			r.add_row({named(x.name), x.cgroup ? *x.cgroup : x.dir.value_or("-"),
				   x.handle ? std::to_string(*x.handle) : "-"});
		r.render(ctx.out, ctx.table_width());
	}
	if (p.learned)
		print_learned(ctx, *p.learned);
}

// Parses and validates file; with a device (--device / --backend) the handle numbers are
// checked against its handles and the PIDs shown, else against kvfdpd's upper limit.
Result<proto::PolicyReply> policy_from_file(CommandContext &ctx, const std::string &file)
{
	auto cfg = placement::load_config(file, false);
	if (!cfg)
		return cli_error(proto::kExitUsage, cfg.error().message());
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
		return cli_error(proto::kExitUsage, pol.error().message());
	proto::PolicyReply doc;
	doc.config = file;
	doc.valid = true;
	doc.checked_against_device = checked;
	if (checked)
		doc.nruh = nruh;
	for (unsigned c = 0; c < placement::kNumClasses; c++) {
		const uint16_t h = pol->handle[c];
		proto::PolicyMapRow m{std::string(class_name(static_cast<int>(c))), h, std::nullopt,
				      cfg->handle[c] ? "config" : "default"};
		if (h < handles.size())
			m.pid = handles[h].pid;
		doc.map.push_back(std::move(m));
	}
	for (const auto &r : cfg->rules)
		doc.rules.push_back({r.path, std::string(class_name(r.cls)), r.line});
	doc.watch.dir = cfg->watch_dir;
	return doc;
}

int run_show(CommandContext &ctx, const PolicyOptions &o)
{
	proto::PolicyReply doc;
	if (!o.file.empty()) {
		auto d = policy_from_file(ctx, o.file);
		if (!d)
			return ctx.fail(d.error());
		doc = std::move(d).value();
	} else {
		if (ctx.direct())
			return ctx.fail(proto::kExitUsage,
					"policy show without FILE asks kvfdpd for its policy; "
					"give a FILE to read one with --device/--backend");
		auto r = ctx.ask_daemon(proto::cmd::kPolicy);
		if (!r.ok)
			return ctx.fail(r.error);
		doc = proto::reply_as<proto::PolicyReply>(r.data);
	}
	if (ctx.json())
		ctx.print_json(doc);
	else
		print_policy_human(ctx, doc);
	return proto::kExitOk;
}

int run_check(CommandContext &ctx, const PolicyOptions &o)
{
	auto d = policy_from_file(ctx, o.file);
	if (!d) {
		if (ctx.json()) {
			proto::PolicyReply bad;
			bad.config = o.file;
			bad.valid = false;
			bad.error = d.error().context;
			bad.brief = true;
			ctx.print_json(bad);
			ctx.exit_code = exit_for(d.error());
			return ctx.exit_code;
		}
		return ctx.fail(d.error());
	}
	if (ctx.json()) {
		d->brief = true;
		ctx.print_json(*d);
	} else {
		ctx.out << o.file << ": valid";
		if (d->checked_against_device == true)
			ctx.out << " for a device with " << *d->nruh << " handles\n";
		else
			ctx.out << " (handle numbers not checked against a drive: add --device "
				   "/dev/ngXnY or --backend model)\n";
	}
	return proto::kExitOk;
}

}  // namespace

void add_policy_command(CLI::App &app, CommandContext &ctx)
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

}  // namespace kvfdp::cli
