// The `policy` reply's JSON.
#include "proto/policy_reply.hpp"

#include "proto/json_read.hpp"

namespace kvfdp::proto {

using nlohmann::json;

void to_json(json &j, const PolicyMapRow &v)
{
	j = {{"class", v.cls}, {"handle", v.handle}, {"pid", opt_json(v.pid)}};
	if (v.from)
		j["from"] = *v.from;
}

void from_json(const json &j, PolicyMapRow &v)
{
	read_field(j, "class", v.cls);
	read_field(j, "handle", v.handle);
	read_field(j, "pid", v.pid);
	read_field(j, "from", v.from);
}

void to_json(json &j, const PolicyRule &v)
{
	j = {{"path", v.path}, {"class", v.cls}};
	if (v.line)
		j["line"] = *v.line;
}

void from_json(const json &j, PolicyRule &v)
{
	read_field(j, "path", v.path);
	read_field(j, "class", v.cls);
	read_field(j, "line", v.line);
}

void to_json(json &j, const PolicyWriter &v)
{
	j = {{"name", v.name},
	     {"cgroup", opt_json(v.cgroup)},
	     {"dir", opt_json(v.dir)},
	     {"handle", opt_json(v.handle)}};
}

void from_json(const json &j, PolicyWriter &v)
{
	read_field(j, "name", v.name);
	read_field(j, "cgroup", v.cgroup);
	read_field(j, "dir", v.dir);
	read_field(j, "handle", v.handle);
}

void to_json(json &j, const PolicyWatch &v)
{
	j = {{"dir", v.dir}};
	if (v.disk)
		j["disk"] = *v.disk;
}

void from_json(const json &j, PolicyWatch &v)
{
	read_field(j, "disk", v.disk);
	read_field(j, "dir", v.dir);
}

void to_json(json &j, const LearnedKey &v)
{
	j = {{"writer_id", v.writer_id},
	     {"writer", opt_json(v.writer)},
	     {"class", v.cls},
	     {"group", v.group},
	     {"handle", v.handle},
	     {"pinned", v.pinned},
	     {"lifetime_bytes", v.lifetime_bytes},
	     {"lifetime_s", v.lifetime_s},
	     {"write_share", v.write_share},
	     {"live_bytes", v.live_bytes},
	     {"written_bytes", v.written_bytes},
	     {"died_bytes", v.died_bytes}};
}

void from_json(const json &j, LearnedKey &v)
{
	read_field(j, "writer_id", v.writer_id);
	read_field(j, "writer", v.writer);
	read_field(j, "class", v.cls);
	read_field(j, "group", v.group);
	read_field(j, "handle", v.handle);
	read_field(j, "pinned", v.pinned);
	read_field(j, "lifetime_bytes", v.lifetime_bytes);
	read_field(j, "lifetime_s", v.lifetime_s);
	read_field(j, "write_share", v.write_share);
	read_field(j, "live_bytes", v.live_bytes);
	read_field(j, "written_bytes", v.written_bytes);
	read_field(j, "died_bytes", v.died_bytes);
}

void to_json(json &j, const LearnedPolicy &v)
{
	j = {{"mode", v.mode},
	     {"groups", v.groups},
	     {"handles_used", v.handles_used},
	     {"generation", v.generation},
	     {"clock_bytes", v.clock_bytes},
	     {"recomputes", v.recomputes},
	     {"ruh_updates", v.ruh_updates},
	     {"ruh_update_refused", v.ruh_update_refused},
	     {"overflow_bytes", v.overflow_bytes},
	     {"key_count", v.key_count},
	     {"max_keys", v.max_keys},
	     {"retired_keys", v.retired_keys},
	     {"state_path", v.state_path},
	     {"keys", v.keys}};
}

void from_json(const json &j, LearnedPolicy &v)
{
	read_field(j, "mode", v.mode);
	read_field(j, "groups", v.groups);
	if (j.contains("handles_used") && j["handles_used"].is_array()) {
		v.handles_used.clear();
		for (const json &h : j["handles_used"])
			if (h.is_number_integer() && h.get<int64_t>() >= 0)
				v.handles_used.push_back(h.get<uint16_t>());
	}
	read_field(j, "generation", v.generation);
	read_field(j, "clock_bytes", v.clock_bytes);
	read_field(j, "recomputes", v.recomputes);
	read_field(j, "ruh_updates", v.ruh_updates);
	read_field(j, "ruh_update_refused", v.ruh_update_refused);
	read_field(j, "overflow_bytes", v.overflow_bytes);
	read_field(j, "key_count", v.key_count);
	read_field(j, "max_keys", v.max_keys);
	read_field(j, "retired_keys", v.retired_keys);
	read_field(j, "state_path", v.state_path);
	read_array(j, "keys", v.keys);
}

void to_json(json &j, const PolicyReply &v)
{
	j = {{"config", v.config}};
	if (v.valid)
		j["valid"] = *v.valid;
	if (v.checked_against_device)
		j["checked_against_device"] = *v.checked_against_device;
	if (v.error)
		j["error"] = *v.error;
	if (v.brief)
		return;
	if (v.generation)
		j["generation"] = *v.generation;
	if (v.loaded_at)
		j["loaded_at"] = *v.loaded_at;
	j["nruh"] = opt_json(v.nruh);
	j["map"] = v.map;
	j["rules"] = v.rules;
	if (v.writers)
		j["writers"] = *v.writers;
	if (v.placement)
		j["placement"] = *v.placement;
	j["watch"] = v.watch;
	if (v.learned)
		j["learned"] = *v.learned;
}

void from_json(const json &j, PolicyReply &v)
{
	read_field(j, "config", v.config);
	read_field(j, "valid", v.valid);
	read_field(j, "checked_against_device", v.checked_against_device);
	read_field(j, "error", v.error);
	read_field(j, "generation", v.generation);
	read_field(j, "loaded_at", v.loaded_at);
	read_field(j, "nruh", v.nruh);
	read_array(j, "map", v.map);
	read_array(j, "rules", v.rules);
	read_array(j, "writers", v.writers);
	read_field(j, "placement", v.placement);
	read_field(j, "watch", v.watch);
	read_field(j, "learned", v.learned);
}

}  // namespace kvfdp::proto
