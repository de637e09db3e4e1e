// The twin_window reply's JSON: a field table per struct (proto/json_fields.hpp) and the
// records, each an array.
#include "proto/twin_window.hpp"

#include "proto/json_fields.hpp"

namespace kvfdp::proto {

using nlohmann::json;

namespace {

constexpr auto kTwinWindowModel =
	std::tuple{field("logical_bytes", &TwinWindowModel::logical_bytes),
		   field("ru_size", &TwinWindowModel::ru_size),
		   field("lba_size", &TwinWindowModel::lba_size),
		   field("mapping_unit", &TwinWindowModel::mapping_unit),
		   field("handles", &TwinWindowModel::handles),
		   field("op", &TwinWindowModel::op),
		   field("gc", &TwinWindowModel::gc)};

constexpr auto kTwinWindow =
	std::tuple{field("rate", &TwinWindow::rate),         field("model", &TwinWindow::model),
		   field("capacity", &TwinWindow::capacity), field("total", &TwinWindow::total),
		   field("dropped", &TwinWindow::dropped),   field("span_ms", &TwinWindow::span_ms),
		   field("age_ms", &TwinWindow::age_ms),     field("first", &TwinWindow::first),
		   field("next", &TwinWindow::next)};
// The records, [lba, nlb, handle, op] each (read_record).
constexpr const char *kRecords = "records";

// r from [lba, nlb, handle, op]; false when e is not that.
bool read_record(const json &e, TwinWindowRecord &r)
{
	if (!e.is_array() || e.size() != 4)
		return false;
	for (const json &x : e)
		if (!x.is_number_unsigned() && !(x.is_number_integer() && x.get<int64_t>() >= 0))
			return false;
	const uint64_t op = e[3].get<uint64_t>();
	if (op < 1 || op > 3 || e[1].get<uint64_t>() > UINT32_MAX ||
	    e[2].get<uint64_t>() > UINT16_MAX)
		return false;
	r = {e[0].get<uint64_t>(), static_cast<uint32_t>(e[1].get<uint64_t>()),
	     static_cast<uint16_t>(e[2].get<uint64_t>()), static_cast<TwinWindowOp>(op)};
	return true;
}

}  // namespace

// The request's keys, each spelled once for the parser, the writer and the errors.
constexpr const char *kFrom = "from";
constexpr const char *kMax = "max";

void to_json(json &j, const TwinWindowRequest &r)
{
	j = json::object();
	if (r.from)
		j[kFrom] = *r.from;
	j[kMax] = r.max;
}

bool parse_twin_window_request(const json &args, TwinWindowRequest &r, std::string &error)
{
	r = {};
	for (const char *key : {kFrom, kMax}) {
		const auto it = args.is_object() ? args.find(key) : args.end();
		if (it == args.end() || it->is_null())
			continue;
		if (!it->is_number_unsigned() &&
		    !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
			error = std::string("twin_window.") + key +
				" must be a non-negative integer";
			return false;
		}
		const uint64_t v = it->get<uint64_t>();
		if (key == kFrom)
			r.from = v;
		else
			r.max = v == 0 || v > kTwinWindowPage ? kTwinWindowPage : v;
	}
	return true;
}

KVFDP_JSON_FIELDS(TwinWindowModel, kTwinWindowModel);

void to_json(json &j, const TwinWindow &v)
{
	write_fields(j, v, kTwinWindow);
	json recs = json::array();
	for (const TwinWindowRecord &r : v.records)
		recs.push_back(json::array({r.lba, r.nlb, r.handle, static_cast<unsigned>(r.op)}));
	j[kRecords] = std::move(recs);
}

void from_json(const json &j, TwinWindow &v)
{
	read_fields(j, v, kTwinWindow);
	v.records.clear();
	const auto it = j.is_object() ? j.find(kRecords) : j.end();
	if (it == j.end() || !it->is_array())
		return;
	v.records.reserve(it->size());
	for (const json &e : *it) {
		TwinWindowRecord r;
		if (read_record(e, r))
			v.records.push_back(r);
	}
}

}  // namespace kvfdp::proto
