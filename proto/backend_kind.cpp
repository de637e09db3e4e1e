// The backend table.
#include "proto/backend_kind.hpp"

namespace kvfdp::proto {

const std::vector<BackendCaps> &backends()
{
	static const std::vector<BackendCaps> table = {
		{BackendKind::passthru, "passthru", false, true, true, true},
		{BackendKind::streams, "streams", false, false, false, false},
		{BackendKind::model, "model", true, false, false, true},
		{BackendKind::file, "file", true, false, false, false},
	};
	return table;
}

const BackendCaps &caps(BackendKind k)
{
	for (const BackendCaps &c : backends())
		if (c.kind == k)
			return c;
	return backends().front();
}

const char *backend_name(BackendKind k)
{
	return caps(k).name;
}

std::optional<BackendKind> parse_backend(std::string_view name)
{
	for (const BackendCaps &c : backends())
		if (name == c.name)
			return c.kind;
	return std::nullopt;
}

namespace {

template <class F> bool cap_of(std::string_view name, F f)
{
	const auto k = parse_backend(name);
	return k && f(caps(*k));
}

}  // namespace

bool backend_by_file(std::string_view n)
{
	return cap_of(n, [](const BackendCaps &c) { return c.by_file; });
}

bool backend_passthru_logs(std::string_view n)
{
	return cap_of(n, [](const BackendCaps &c) { return c.passthru_logs; });
}

bool backend_zero_copy(std::string_view n)
{
	return cap_of(n, [](const BackendCaps &c) { return c.zero_copy; });
}

std::vector<std::string> backend_names(bool cli_direct_only)
{
	std::vector<std::string> v;
	for (const BackendCaps &c : backends())
		if (!cli_direct_only || c.cli_direct)
			v.emplace_back(c.name);
	return v;
}

std::string backend_list(bool cli_direct_only)
{
	const auto v = backend_names(cli_direct_only);
	std::string s;
	for (size_t i = 0; i < v.size(); i++)
		s += (i == 0 ? "" : i + 1 == v.size() ? " or " : ", ") + v[i];
	return s;
}

}  // namespace kvfdp::proto
