// advise: the sweep over a source, the choice, and its table and JSON.
#include "model/sim/advise.hpp"

#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "model/sim/parse.hpp"

namespace kvfdp::sim {
namespace {

// printf into a string (one table cell or figure).
__attribute__((format(printf, 1, 2))) std::string fmt(const char *f, ...)
{
	char buf[160];
	va_list ap;
	va_start(ap, f);
	std::vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	return buf;
}

// True when c ran (host bytes) and its WAF is within the target.
bool meets(const AdviseCell &c, double target)
{
	return c.run.host_bytes > 0 && c.run.waf <= target;
}

// True when a should be recommended over b, both meeting the target (see advise()).
bool better(const AdviseCell &a, const AdviseCell &b)
{
	if (a.setting.util != b.setting.util)
		return a.setting.util > b.setting.util;
	const double ha = run_hit_ratio(a.run).value_or(0), hb = run_hit_ratio(b.run).value_or(0);
	if (ha != hb)
		return ha > hb;
	return a.run.waf < b.run.waf;  // equal: the earlier cell (placement, eviction order) stays
}

// The cells at util, any eviction and placement, with the highest hit ratio; nullptr when
// none has one.
const AdviseCell *best_hit_at(const Advice &a, double util)
{
	const AdviseCell *best = nullptr;
	for (const AdviseCell &c : a.cells) {
		const auto h = run_hit_ratio(c.run);
		if (c.setting.util == util && h && (!best || *h > *run_hit_ratio(best->run)))
			best = &c;
	}
	return best;
}

// The cell at util that meets the target with the least media written (eviction orders
// differ in host writes: fifo2 rewrites hit chunks); nullptr when none meets there.
const AdviseCell *least_media_at(const Advice &a, double util)
{
	const AdviseCell *best = nullptr;
	for (const AdviseCell &c : a.cells)
		if (c.setting.util == util && meets(c, a.target) &&
		    (!best || c.run.media_bytes < best->run.media_bytes))
			best = &c;
	return best;
}

// Marks "85,70" as the report writes them: "85/70%".
std::string marks_word(const std::string &m)
{
	std::string w = m;
	if (const size_t comma = w.find(','); comma != std::string::npos)
		w[comma] = '/';
	return w + "%";
}

// The eviction order and marks of s, as the report names a choice: "lru", "hash 85/70%".
std::string choice_label(const AdviseSetting &s)
{
	if (s.marks.empty())
		return s.evict;
	return s.evict.empty() ? "marks " + marks_word(s.marks)
			       : s.evict + " " + marks_word(s.marks);
}

// "utilisation 0.85 (leave 15% of the logical capacity free), placement writer, eviction fifo".
std::string setting_text(const AdviseSetting &s)
{
	std::string t = "utilisation " + fmt("%.2f", s.util) + " (leave " +
			fmt("%.0f", (1 - s.util) * 100) +
			"% of the logical capacity free), placement " + placement_name(s.placement);
	if (!s.evict.empty())
		t += ", eviction " + s.evict;
	if (!s.marks.empty())
		t += ", evictor marks " + marks_word(s.marks);
	return t;
}

nlohmann::ordered_json cell_json(const Advice &a, const AdviseCell &c)
{
	nlohmann::ordered_json j;
	j["util"] = c.setting.util;
	j["placement"] = placement_name(c.setting.placement);
	j["evict"] = c.setting.evict.empty() ? nlohmann::ordered_json(nullptr)
					     : nlohmann::ordered_json(c.setting.evict);
	if (!c.setting.marks.empty())
		j["marks"] = c.setting.marks;
	j["waf"] = c.run.host_bytes ? nlohmann::ordered_json(c.run.waf)
				    : nlohmann::ordered_json(nullptr);
	j["host_bytes"] = c.run.host_bytes;
	j["media_bytes"] = c.run.media_bytes;
	const auto h = run_hit_ratio(c.run);
	j["hit_ratio"] = h ? nlohmann::ordered_json(*h) : nlohmann::ordered_json(nullptr);
	j["meets"] = meets(c, a.target);
	return j;
}

}  // namespace

Result<double> parse_advise_target(std::string_view s)
{
	auto d = parse_number(s);
	if (!d)
		return guidance_error(std::errc::invalid_argument,
				      "--target: '" + std::string(s) +
					      "' is not a number; give a WAF like 1.05");
	if (*d < 1.0)
		return guidance_error(
			std::errc::invalid_argument,
			"--target: " + std::string(s) +
				" cannot be met: WAF is media bytes over host bytes and the drive writes "
				"every host byte at least once, so no setting goes below 1.0; give 1.0 or more "
				"(default 1.05)");
	return *d;
}

Result<Sweep> parse_advise_sweep(std::string_view spec)
{
	auto s = parse_sweep(spec);
	if (s && s->key != "util")
		return guidance_error(
			std::errc::invalid_argument,
			"--sweep: '" + std::string(spec) + "' sweeps " + s->key +
				"; advise sweeps util (the free space to leave): give "
				"util=START:END:STEP and the drive's OP with --op");
	return s;
}

std::optional<double> run_hit_ratio(const RunReport &r)
{
	if (!r.extra.is_object() || !r.extra.contains("hit_ratio") ||
	    !r.extra["hit_ratio"].is_number())
		return std::nullopt;
	return r.extra["hit_ratio"].get<double>();
}

Result<Advice> advise(AdviseSource &src, const AdviseOptions &o)
{
	Advice a;
	a.target = o.target;
	a.workload = src.name();
	a.sweep = o.sweep;
	a.util_note = src.util_note();
	a.placements = o.placements;
	if (a.placements.empty())
		for (Placement p : src.placements())
			if (p != Placement::oracle)
				a.placements.push_back(p);
	a.evictions = o.evictions.empty() ? src.evictions() : o.evictions;
	if (a.evictions.empty())
		a.evictions.push_back("");
	a.marks = o.marks.empty() ? src.marks() : o.marks;
	if (a.marks.empty())
		a.marks.push_back("");
	for (const std::string &e : a.evictions)
		for (const std::string &m : a.marks)
			for (double u : a.sweep.values)
				for (Placement p : a.placements) {
					AdviseSetting s{u, p, e, m};
					auto r = src.run(s);
					if (!r)
						return std::move(r).error();
					a.cells.push_back({std::move(s), std::move(*r)});
				}
	for (size_t i = 0; i < a.cells.size(); i++) {
		const AdviseCell &c = a.cells[i];
		if (meets(c, a.target) && (!a.pick || better(c, a.cells[*a.pick])))
			a.pick = i;
		const AdviseCell &b = a.cells[a.best];
		const bool ran = c.run.host_bytes > 0;
		if (ran && (b.run.host_bytes == 0 || c.run.waf < b.run.waf ||
			    (c.run.waf == b.run.waf && c.setting.util > b.setting.util)))
			a.best = i;
	}
	if (a.pick)
		a.check = src.simulate_command(a.cells[*a.pick].setting);
	return a;
}

std::string util_word(double u)
{
	char buf[40];
	std::snprintf(buf, sizeof buf, "%.9f", u);
	std::string w = buf;
	w.erase(w.find_last_not_of('0') + 1);
	if (w.back() == '.')
		w.pop_back();
	return w;
}

std::string no_setting_line(const Advice &a)
{
	std::string line = "no setting meets WAF <= " + fmt("%g", a.target) + " on " + a.workload;
	if (a.cells.empty() || a.cells[a.best].run.host_bytes == 0)
		return line + ": no run wrote anything; check the trace";
	const AdviseCell &b = a.cells[a.best];
	return line + "; the best found is WAF " + fmt("%.3f", b.run.waf) + " at " +
	       setting_text(b.setting) +
	       (b.setting.marks.empty() ? ": raise --op, start --sweep lower, or raise --target"
					: ": raise --op, try lower marks, or raise --target");
}

std::string no_marks_lines(const Advice &a)
{
	if (a.marks.size() < 2)
		return {};
	std::string out;
	for (const std::string &e : a.evictions) {
		const AdviseCell *best = nullptr;
		bool met = false;
		for (const AdviseCell &c : a.cells) {
			if (c.setting.evict != e || c.run.host_bytes == 0)
				continue;
			met = met || meets(c, a.target);
			if (!best || c.run.waf < best->run.waf)
				best = &c;
		}
		if (met || !best)
			continue;
		out += (e.empty() ? std::string("no marks") : "eviction " + e + ": no marks") +
		       " meet WAF <= " + fmt("%g", a.target) + "; the best is " +
		       marks_word(best->setting.marks) + " (WAF " + fmt("%.3f", best->run.waf) +
		       ", placement " + placement_name(best->setting.placement) + ", hit ratio " +
		       fmt("%.3f", run_hit_ratio(best->run).value_or(0)) + ")\n";
	}
	return out;
}

std::string advice_to_table(const Advice &a)
{
	const bool store = !a.evictions.front().empty();
	const bool marks = !a.marks.front().empty();
	bool hits = false;
	for (const AdviseCell &c : a.cells)
		hits = hits || run_hit_ratio(c.run).has_value();
	std::string out = "WAF target " + fmt("%g", a.target) + " on " + a.workload + "\n";
	out += store ? "EVICT  " : "";
	out += marks ? "MARKS   UTIL  " : "UTIL  ";
	for (Placement p : a.placements)
		out += fmt(" %9s", placement_name(p));
	out += hits ? "    HIT\n" : "\n";
	const size_t np = a.placements.size();
	for (size_t row = 0; row * np < a.cells.size(); row++) {
		const AdviseCell &first = a.cells[row * np];
		if (store)
			out += fmt("%-6s ", first.setting.evict.c_str());
		if (marks)
			out += fmt("%-7s ", marks_word(first.setting.marks).c_str());
		out += fmt("%-6.3f", first.setting.util);
		for (size_t i = row * np; i < (row + 1) * np; i++) {
			const AdviseCell &c = a.cells[i];
			const std::string mark = a.pick && *a.pick == i ? "*" : " ";
			out += c.run.host_bytes ? fmt(" %8.3f", c.run.waf) + mark
						: std::string("      n/a ");
		}
		const auto h = run_hit_ratio(first.run);
		out += hits ? (h ? fmt("  %5.3f", *h) : std::string("    n/a")) + "\n" : "\n";
	}
	out += "WAF per placement: the measured part of each run, after its warm-up";
	out += hits ? "; HIT: the store's hit ratio (the " +
			       std::string(placement_name(a.placements.front())) + " run)"
		    : "";
	out += "; * the recommendation\n";
	if (!a.util_note.empty())
		out += a.util_note + "\n";
	// One order: the no-setting line says what its marks line would.
	if (!a.pick)
		return out + (a.evictions.size() > 1 ? no_marks_lines(a) : std::string()) +
		       no_setting_line(a) + "\n";
	const AdviseCell &p = a.cells[*a.pick];
	out += "recommend: " + setting_text(p.setting) + ": WAF " + fmt("%.3f", p.run.waf) +
	       " <= " + fmt("%g", a.target) + "\n";
	if (const AdviseCell *h = store ? best_hit_at(a, p.setting.util) : nullptr) {
		const double mine = run_hit_ratio(p.run).value_or(0), top = *run_hit_ratio(h->run);
		out += "  hit ratio " + fmt("%.3f", mine);
		out += top > mine ? ", " + fmt("%.3f", top - mine) + " below " +
					    choice_label(h->setting) + "'s " + fmt("%.3f", top) +
					    " at this utilisation (WAF " + fmt("%.3f", h->run.waf) +
					    ")\n"
				  : ", the best of " +
					    std::to_string(a.evictions.size() * a.marks.size()) +
					    (marks ? " eviction orders and marks"
						   : " eviction orders") +
					    " at this utilisation\n";
		const AdviseCell *m = least_media_at(a, p.setting.util);
		// Less than 0.5% (an evictor's neighbouring marks) would print "0% more".
		if (m && choice_label(m->setting) != choice_label(p.setting) &&
		    static_cast<double>(m->run.media_bytes) * 1.005 <
			    static_cast<double>(p.run.media_bytes))
			out += "  media written " + iec(p.run.media_bytes) + ", " +
			       fmt("%.0f", (static_cast<double>(p.run.media_bytes) /
						    static_cast<double>(m->run.media_bytes) -
					    1) * 100) +
			       "% more than " + choice_label(m->setting) + "'s " +
			       iec(m->run.media_bytes) + " (" +
			       fmt("%.3f", run_hit_ratio(m->run).value_or(0)) +
			       " hit ratio) at this utilisation\n";
	}
	if (!a.check.empty())
		out += "  check: " + a.check + "\n";
	return out + no_marks_lines(a);
}

nlohmann::ordered_json advice_to_json(const Advice &a)
{
	nlohmann::ordered_json j;
	j["target"] = a.target;
	j["workload"] = a.workload;
	j["sweep"] = {{"key", a.sweep.key}, {"values", a.sweep.values}};
	nlohmann::ordered_json ps = nlohmann::ordered_json::array();
	for (Placement p : a.placements)
		ps.push_back(placement_name(p));
	j["placements"] = std::move(ps);
	nlohmann::ordered_json es = nlohmann::ordered_json::array();
	for (const std::string &e : a.evictions)
		if (!e.empty())
			es.push_back(e);
	j["evictions"] = std::move(es);
	nlohmann::ordered_json ms = nlohmann::ordered_json::array();
	for (const std::string &m : a.marks)
		if (!m.empty())
			ms.push_back(m);
	j["marks"] = std::move(ms);
	nlohmann::ordered_json runs = nlohmann::ordered_json::array();
	for (const AdviseCell &c : a.cells)
		runs.push_back(cell_json(a, c));
	j["runs"] = std::move(runs);
	if (a.pick) {
		const AdviseCell &p = a.cells[*a.pick];
		nlohmann::ordered_json r = cell_json(a, p);
		r.erase("meets");
		r["free"] = std::round((1 - p.setting.util) * 1e9) / 1e9;
		if (const AdviseCell *h = a.evictions.front().empty()
						  ? nullptr
						  : best_hit_at(a, p.setting.util)) {
			const double top = *run_hit_ratio(h->run);
			r["hit_ratio_cost"] = std::max(0.0, top - run_hit_ratio(p.run).value_or(0));
			r["best_hit_ratio"] = {{"evict", h->setting.evict},
					       {"hit_ratio", top},
					       {"waf", h->run.waf}};
			if (!h->setting.marks.empty())
				r["best_hit_ratio"]["marks"] = h->setting.marks;
			if (const AdviseCell *m = least_media_at(a, p.setting.util)) {
				r["least_media"] = {
					{"evict", m->setting.evict},
					{"placement", placement_name(m->setting.placement)},
					{"media_bytes", m->run.media_bytes},
					{"hit_ratio", run_hit_ratio(m->run).value_or(0)}};
				if (!m->setting.marks.empty())
					r["least_media"]["marks"] = m->setting.marks;
			}
		}
		if (!a.check.empty())
			r["check"] = a.check;
		j["recommendation"] = std::move(r);
	} else {
		j["recommendation"] = nullptr;
	}
	if (!a.cells.empty()) {
		nlohmann::ordered_json b = cell_json(a, a.cells[a.best]);
		b.erase("meets");
		j["best"] = std::move(b);
	}
	return j;
}

}  // namespace kvfdp::sim
