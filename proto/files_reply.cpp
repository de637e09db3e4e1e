// The `files` reply's JSON: one field table per struct (proto/json_fields.hpp).
#include "proto/files_reply.hpp"

#include "proto/json_fields.hpp"

namespace kvfdp::proto {

namespace {

constexpr auto kFileRow = std::tuple{field("dev", &FileRow::dev),
				     field("ino", &FileRow::ino),
				     field("class", &FileRow::cls),
				     field("class_from", &FileRow::class_from),
				     field("bytes", &FileRow::bytes),
				     nullable("birth", &FileRow::birth),
				     nullable("death", &FileRow::death),
				     nullable("lifetime_s", &FileRow::lifetime_s),
				     field("pid", &FileRow::pid),
				     field("comm", &FileRow::comm),
				     field("writer_id", &FileRow::writer_id),
				     field("cgroup_id", &FileRow::cgroup_id),
				     field("writer", &FileRow::writer),
				     field("path", &FileRow::path),
				     field("state", &FileRow::state),
				     field("age_s", &FileRow::age_s)};

constexpr auto kClassLifetime =
	std::tuple{field("class", &ClassLifetime::cls), field("count", &ClassLifetime::count),
		   nullable("mean_s", &ClassLifetime::mean_s)};

constexpr auto kFilesReply = std::tuple{
	field("available", &FilesReply::available), field("reason", &FilesReply::reason),
	field("live", &FilesReply::live),           field("deleted", &FilesReply::deleted),
	field("matched", &FilesReply::matched),     field("files", &FilesReply::files),
	field("lifetimes", &FilesReply::lifetimes), field("limit", &FilesReply::limit)};

}  // namespace

KVFDP_JSON_FIELDS(FileRow, kFileRow);
KVFDP_JSON_FIELDS(ClassLifetime, kClassLifetime);
KVFDP_JSON_FIELDS(FilesReply, kFilesReply);

}  // namespace kvfdp::proto
