// The twin_window reply's JSON.
#include "proto/twin_window.hpp"

#include "proto/json_read.hpp"

namespace kvfdp::proto {

using nlohmann::json;

namespace {

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

void to_json(json &j, const TwinWindowRequest &r)
{
	j = json::object();
	if (r.from)
		j["from"] = *r.from;
	j["max"] = r.max;
}

bool parse_twin_window_request(const json &args, TwinWindowRequest &r, std::string &error)
{
	r = {};
	for (const char *key : {"from", "max"}) {
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
		if (key[0] == 'f')
			r.from = v;
		else
			r.max = v == 0 || v > kTwinWindowPage ? kTwinWindowPage : v;
	}
	return true;
}

void to_json(json &j, const TwinWindowModel &v)
{
	j = {{"logical_bytes", v.logical_bytes},
	     {"ru_size", v.ru_size},
	     {"lba_size", v.lba_size},
	     {"mapping_unit", v.mapping_unit},
	     {"handles", v.handles},
	     {"op", v.op},
	     {"gc", v.gc}};
}

void from_json(const json &j, TwinWindowModel &v)
{
	read_field(j, "logical_bytes", v.logical_bytes);
	read_field(j, "ru_size", v.ru_size);
	read_field(j, "lba_size", v.lba_size);
	read_field(j, "mapping_unit", v.mapping_unit);
	read_field(j, "handles", v.handles);
	read_field(j, "op", v.op);
	read_field(j, "gc", v.gc);
}

void to_json(json &j, const TwinWindow &v)
{
	json recs = json::array();
	for (const TwinWindowRecord &r : v.records)
		recs.push_back(json::array({r.lba, r.nlb, r.handle, static_cast<unsigned>(r.op)}));
	j = {{"rate", v.rate},         {"model", v.model},
	     {"capacity", v.capacity}, {"total", v.total},
	     {"dropped", v.dropped},   {"span_ms", v.span_ms},
	     {"age_ms", v.age_ms},     {"first", v.first},
	     {"next", v.next},         {"records", std::move(recs)}};
}

void from_json(const json &j, TwinWindow &v)
{
	read_field(j, "rate", v.rate);
	read_field(j, "model", v.model);
	read_field(j, "capacity", v.capacity);
	read_field(j, "total", v.total);
	read_field(j, "dropped", v.dropped);
	read_field(j, "span_ms", v.span_ms);
	read_field(j, "age_ms", v.age_ms);
	read_field(j, "first", v.first);
	read_field(j, "next", v.next);
	v.records.clear();
	const auto it = j.is_object() ? j.find("records") : j.end();
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
