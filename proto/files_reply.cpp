// The `files` reply's JSON.
#include "proto/files_reply.hpp"

#include "proto/json_read.hpp"

namespace kvfdp::proto {

using nlohmann::json;

void to_json(json &j, const FileRow &v)
{
	j = {{"dev", v.dev},
	     {"ino", v.ino},
	     {"class", v.cls},
	     {"class_from", v.class_from},
	     {"bytes", v.bytes},
	     {"birth", opt_json(v.birth)},
	     {"death", opt_json(v.death)},
	     {"lifetime_s", opt_json(v.lifetime_s)},
	     {"pid", v.pid},
	     {"comm", v.comm},
	     {"writer_id", v.writer_id},
	     {"cgroup_id", v.cgroup_id}};
	if (v.writer)
		j["writer"] = *v.writer;
	if (v.path)
		j["path"] = *v.path;
	if (v.state)
		j["state"] = *v.state;
	if (v.age_s)
		j["age_s"] = *v.age_s;
}

void from_json(const json &j, FileRow &v)
{
	read_field(j, "dev", v.dev);
	read_field(j, "ino", v.ino);
	read_field(j, "class", v.cls);
	read_field(j, "class_from", v.class_from);
	read_field(j, "bytes", v.bytes);
	read_field(j, "birth", v.birth);
	read_field(j, "death", v.death);
	read_field(j, "lifetime_s", v.lifetime_s);
	read_field(j, "pid", v.pid);
	read_field(j, "comm", v.comm);
	read_field(j, "writer_id", v.writer_id);
	read_field(j, "cgroup_id", v.cgroup_id);
	read_field(j, "writer", v.writer);
	read_field(j, "path", v.path);
	read_field(j, "state", v.state);
	read_field(j, "age_s", v.age_s);
}

void to_json(json &j, const ClassLifetime &v)
{
	j = {{"class", v.cls}, {"count", v.count}, {"mean_s", opt_json(v.mean_s)}};
}

void from_json(const json &j, ClassLifetime &v)
{
	read_field(j, "class", v.cls);
	read_field(j, "count", v.count);
	read_field(j, "mean_s", v.mean_s);
}

void to_json(json &j, const FilesReply &v)
{
	j = {{"available", v.available}, {"files", v.files}};
	if (v.reason)
		j["reason"] = *v.reason;
	if (v.live)
		j["live"] = *v.live;
	if (v.deleted)
		j["deleted"] = *v.deleted;
	if (v.matched)
		j["matched"] = *v.matched;
	if (v.lifetimes)
		j["lifetimes"] = *v.lifetimes;
	if (v.limit)
		j["limit"] = *v.limit;
}

void from_json(const json &j, FilesReply &v)
{
	read_field(j, "available", v.available);
	read_field(j, "reason", v.reason);
	read_field(j, "live", v.live);
	read_field(j, "deleted", v.deleted);
	read_field(j, "matched", v.matched);
	read_array(j, "files", v.files);
	read_array(j, "lifetimes", v.lifetimes);
	read_field(j, "limit", v.limit);
}

}  // namespace kvfdp::proto
