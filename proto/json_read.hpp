// Reading a reply's fields leniently: a key that is missing, null or of another type leaves
// the field as it was (its default), so a reader never throws on what a peer sent. And
// opt_json, an optional written as its value or null.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvfdp::proto {

// j[key] into out when j is an object holding a value of out's type (an unsigned field takes
// a non-negative integer only). Returns whether it did.
template <class T> bool read_field(const nlohmann::json &j, const char *key, T &out)
{
	if (!j.is_object())
		return false;
	const auto it = j.find(key);
	if (it == j.end())
		return false;
	const nlohmann::json &v = *it;
	if constexpr (std::is_same_v<T, bool>) {
		if (!v.is_boolean())
			return false;
		out = v.get<bool>();
	} else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
		if (v.is_number_unsigned())
			out = static_cast<T>(v.get<uint64_t>());
		else if (v.is_number_integer() && v.get<int64_t>() >= 0)
			out = static_cast<T>(v.get<int64_t>());
		else
			return false;
	} else if constexpr (std::is_integral_v<T>) {
		if (!v.is_number_integer())
			return false;
		out = static_cast<T>(v.get<int64_t>());
	} else if constexpr (std::is_floating_point_v<T>) {
		if (!v.is_number())
			return false;
		out = v.get<T>();
	} else if constexpr (std::is_same_v<T, std::string>) {
		if (!v.is_string())
			return false;
		out = v.get<std::string>();
	} else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
		if (!v.is_array())
			return false;
		out.clear();
		for (const auto &e : v)
			if (e.is_string())
				out.push_back(e.get<std::string>());
	} else if constexpr (std::is_same_v<T, nlohmann::json>) {
		out = v;
	} else {
		if (!v.is_object() && !v.is_array())
			return false;
		from_json(v, out);  // a reply struct (ADL: proto/control.hpp)
	}
	return true;
}

// The same into an optional: set when the key holds a value of T's type, else left empty.
template <class T> bool read_field(const nlohmann::json &j, const char *key, std::optional<T> &out)
{
	T v{};
	if (!read_field(j, key, v))
		return false;
	out = std::move(v);
	return true;
}

// v as JSON, null when empty (the writing side of read_field's optional).
template <class T> nlohmann::json opt_json(const std::optional<T> &v)
{
	return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// j[key]'s objects into out, each through from_json (an element that is not an object is
// skipped). Returns whether j[key] was an array.
template <class T> bool read_array(const nlohmann::json &j, const char *key, std::vector<T> &out)
{
	if (!j.is_object())
		return false;
	const auto it = j.find(key);
	if (it == j.end() || !it->is_array())
		return false;
	out.clear();
	for (const nlohmann::json &e : *it) {
		if (!e.is_object())
			continue;
		T v{};
		from_json(e, v);  // a reply struct (ADL)
		out.push_back(std::move(v));
	}
	return true;
}

// The same into an optional array: set when j[key] is an array.
template <class T>
bool read_array(const nlohmann::json &j, const char *key, std::optional<std::vector<T>> &out)
{
	std::vector<T> v;
	if (!read_array(j, key, v))
		return false;
	out = std::move(v);
	return true;
}

}  // namespace kvfdp::proto
