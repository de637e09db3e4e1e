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

template <class T> inline constexpr bool kIsVector = false;
template <class T> inline constexpr bool kIsVector<std::vector<T>> = true;

// v into out when v holds a value of out's type (an unsigned field takes a non-negative
// integer only; a struct, an object or an array, through its from_json). An array into a
// vector keeps the elements of its type: strings; integers from 0 to INT64_MAX; objects, each
// through from_json. Returns whether it did.
template <class T> bool read_value(const nlohmann::json &v, T &out)
{
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
	} else if constexpr (kIsVector<T>) {
		using E = typename T::value_type;
		if (!v.is_array())
			return false;
		out.clear();
		for (const nlohmann::json &e : v) {
			if constexpr (std::is_same_v<E, std::string>) {
				if (e.is_string())
					out.push_back(e.get<std::string>());
			} else if constexpr (std::is_integral_v<E> && std::is_unsigned_v<E>) {
				if (e.is_number_integer() && e.get<int64_t>() >= 0)
					out.push_back(static_cast<E>(e.get<int64_t>()));
			} else if (e.is_object()) {
				E x{};
				from_json(e, x);  // a reply struct (ADL)
				out.push_back(std::move(x));
			}
		}
	} else if constexpr (std::is_same_v<T, nlohmann::json>) {
		out = v;
	} else {
		if (!v.is_object() && !v.is_array())
			return false;
		from_json(v, out);  // a reply struct (ADL: proto/control.hpp)
	}
	return true;
}

// j[key] into out when j is an object holding a value of out's type (read_value). Returns
// whether it did.
template <class T> bool read_field(const nlohmann::json &j, const char *key, T &out)
{
	if (!j.is_object())
		return false;
	const auto it = j.find(key);
	return it != j.end() && read_value(*it, out);
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

}  // namespace kvfdp::proto
