// A struct's JSON keys in one list: a table of fields, each a key and the member it names,
// that write_fields writes the struct's object from and read_fields reads it back by, as
// leniently as read_field (proto/json_read.hpp). A struct with an irregular key (one written
// only under a condition, or worked out from other members) writes and reads that key in its
// own lines beside its table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/json_read.hpp"
#include "proto/u128_json.hpp"

namespace kvfdp::proto {

// How a field's member goes on the wire.
enum class FieldKind : uint8_t {
	value,     // as itself, read by read_field; an empty optional is left out
	nullable,  // an optional as its value, null when empty (opt_json)
	u128,      // a 128-bit counter (u128_json); 0 when absent or bad
	// an array of structs with a row for every element: one that is not an object is a
	// default row (value leaves it out), numbered by its place when the field names a number
	every_row,
};

// One field: S's member (of type M) under key. number: every_row's member of a row that
// its place in the array numbers before the element is read (nullptr: none).
template <FieldKind K, class S, class M, class N = std::nullptr_t> struct Field {
	const char *key;
	M S::*member;
	N number = nullptr;
};

template <class S, class M> constexpr Field<FieldKind::value, S, M> field(const char *key, M S::*m)
{
	return {key, m};
}

template <class S, class M>
constexpr Field<FieldKind::nullable, S, std::optional<M>> nullable(const char *key,
								   std::optional<M> S::*m)
{
	return {key, m};
}

template <class S>
constexpr Field<FieldKind::u128, S, nvme::u128> u128_field(const char *key, nvme::u128 S::*m)
{
	return {key, m};
}

template <class S, class M>
constexpr Field<FieldKind::every_row, S, M> every_row(const char *key, M S::*m)
{
	return {key, m};
}

template <class S, class M, class R, class N>
constexpr Field<FieldKind::every_row, S, M, N R::*> every_row(const char *key, M S::*m,
							      N R::*number)
{
	return {key, m, number};
}

namespace detail {

template <class T> inline constexpr bool kIsOptional = false;
template <class T> inline constexpr bool kIsOptional<std::optional<T>> = true;

template <FieldKind K, class S, class M, class N>
void write_one(nlohmann::json &j, const S &v, const Field<K, S, M, N> &f)
{
	const M &m = v.*f.member;
	if constexpr (K == FieldKind::nullable) {
		j[f.key] = opt_json(m);
	} else if constexpr (K == FieldKind::u128) {
		j[f.key] = u128_json(m);
	} else if constexpr (kIsOptional<M>) {
		if (m)
			j[f.key] = *m;
	} else {
		j[f.key] = m;
	}
}

// Every element of array a as a row of out, numbered by its place (number) first.
template <class R, class N>
void read_every_row(const nlohmann::json &a, std::vector<R> &out, N number)
{
	out.clear();
	for (const nlohmann::json &e : a) {
		R r{};
		if constexpr (!std::is_same_v<N, std::nullptr_t>)
			r.*number = static_cast<std::remove_reference_t<decltype(r.*number)>>(
				out.size());
		if (e.is_object())
			from_json(e, r);  // a reply struct (ADL)
		out.push_back(std::move(r));
	}
}

template <FieldKind K, class S, class M, class N>
void read_one(const nlohmann::json &j, S &v, const Field<K, S, M, N> &f)
{
	M &m = v.*f.member;
	if constexpr (K == FieldKind::value || K == FieldKind::nullable) {
		read_field(j, f.key, m);
	} else {
		const auto it = j.is_object() ? j.find(f.key) : j.end();
		if constexpr (K == FieldKind::u128) {
			m = it != j.end() ? u128_from_json(*it) : 0;
		} else if (it != j.end() && it->is_array()) {
			if constexpr (kIsOptional<M>)
				read_every_row(*it, m.emplace(), f.number);
			else
				read_every_row(*it, m, f.number);
		}
	}
}

}  // namespace detail

// j becomes the object of v's fields in table.
template <class S, class... F>
void write_fields(nlohmann::json &j, const S &v, const std::tuple<F...> &table)
{
	j = nlohmann::json::object();
	std::apply([&](const auto &...f) { (detail::write_one(j, v, f), ...); }, table);
}

// v's fields in table from j; a key j lacks (or holds mistyped) leaves its member as it was.
template <class S, class... F>
void read_fields(const nlohmann::json &j, S &v, const std::tuple<F...> &table)
{
	std::apply([&](const auto &...f) { (detail::read_one(j, v, f), ...); }, table);
}

// Whether j is an object holding every key of table.
template <class... F> bool has_keys(const nlohmann::json &j, const std::tuple<F...> &table)
{
	return j.is_object() &&
	       std::apply([&](const auto &...f) { return (j.contains(f.key) && ...); }, table);
}

}  // namespace kvfdp::proto

// T's to_json and from_json (declared beside T) as write_fields and read_fields over table,
// for a struct whose every key is in its table.
#define KVFDP_JSON_FIELDS(T, table)                                                                \
	void to_json(nlohmann::json &j, const T &v)                                                \
	{                                                                                          \
		write_fields(j, v, table);                                                         \
	}                                                                                          \
	void from_json(const nlohmann::json &j, T &v)                                              \
	{                                                                                          \
		read_fields(j, v, table);                                                          \
	}                                                                                          \
	static_assert(true)
