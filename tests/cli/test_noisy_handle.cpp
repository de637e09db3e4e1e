// The noisy-handle rule (proto/noisy_handle.hpp): when `kvfdp status` names a handle whose
// reclaim units the twin's GC copies from, and when it stays quiet.
#include <doctest/doctest.h>

#include "proto/noisy_handle.hpp"

using namespace kvfdp::proto;

namespace {

constexpr uint64_t kGiB = 1ull << 30;

}  // namespace

TEST_CASE(
	"noisy handle: one handle with most of the relocations and 4x the next is named, with its shares")
{
	const std::vector<TwinHandle> h = {
		{0, 2 * kGiB, kGiB / 16}, {1, 4 * kGiB, kGiB / 8}, {3, 2 * kGiB, kGiB}};
	const auto n = find_noisy_handle(h);
	REQUIRE(n);
	CHECK(n->handle == 3);
	CHECK(n->relocated_share == doctest::Approx(16.0 / 19));
	CHECK(n->host_share == doctest::Approx(0.25));
	const std::string line = noisy_handle_line(*n);
	CHECK(line.rfind("handle 3 takes 84% of the twin's GC relocations (25% of host writes): ",
			 0) == 0);
	CHECK(line.find('\n') == std::string::npos);
	CHECK(line.find("docs/twin.md") != std::string::npos);
	CHECK(noisy_handle_json(*n)["handle"] == 3);
	CHECK(noisy_handle_json(*n)["warning"] == line);
}

TEST_CASE(
	"noisy handle: the rule is scale-free: the same shares at a thousandth of the bytes give the same answer")
{
	const std::vector<TwinHandle> big = {{0, 3000 * kGiB, 900 * kGiB},
					     {1, 1000 * kGiB, 100 * kGiB}};
	const std::vector<TwinHandle> small = {{0, 3 * kGiB, 900 * kGiB / 1000},
					       {1, kGiB, 100 * kGiB / 1000}};
	REQUIRE(find_noisy_handle(big));
	REQUIRE(find_noisy_handle(small));
	CHECK(find_noisy_handle(big)->relocated_share ==
	      doctest::Approx(find_noisy_handle(small)->relocated_share));
}

TEST_CASE("noisy handle: balanced, short of half or of 4x the next: none")
{
	CHECK_FALSE(find_noisy_handle({{0, kGiB, kGiB / 4}, {1, kGiB, kGiB / 4}}));
	// 60% but only 3x the next.
	const uint64_t u = kGiB >> 4;
	CHECK_FALSE(find_noisy_handle({{0, kGiB, 6 * u}, {1, kGiB, 2 * u}, {2, kGiB, 2 * u}}));
	// 4x the next but only 50% (three more handles share the rest).
	const uint64_t q = kGiB >> 2;
	CHECK_FALSE(find_noisy_handle(
		{{0, q, 8 * u}, {1, q, 2 * u}, {2, q, 2 * u}, {3, q, 2 * u}, {4, q, 2 * u}}));
	// 4x the next exactly, and over half: named.
	CHECK(find_noisy_handle({{0, q, 8 * u}, {1, q, 2 * u}}));
}

TEST_CASE("noisy handle: an idle twin, GC below 5% of host bytes, or one handle written: none")
{
	CHECK_FALSE(find_noisy_handle({}));
	CHECK_FALSE(find_noisy_handle({{0, 0, 0}, {1, 0, 0}}));
	// All the relocations on handle 0, but they are 4% of what the host wrote.
	CHECK_FALSE(find_noisy_handle({{0, 50 * kGiB, 4 * kGiB}, {1, 50 * kGiB, 0}}));
	CHECK(find_noisy_handle({{0, 50 * kGiB, 6 * kGiB}, {1, 50 * kGiB, 0}}));
	// Every write on one handle: nothing to separate.
	CHECK_FALSE(find_noisy_handle({{0, 0, 0}, {1, 10 * kGiB, 5 * kGiB}}));
}

TEST_CASE("noisy handle: the drive's own figures first, the twin's where the drive names none")
{
	const std::vector<TwinHandle> noisy3 = {{0, 2 * kGiB, kGiB / 16}, {3, 2 * kGiB, kGiB}};
	const std::vector<TwinHandle> noisy0 = {{0, 2 * kGiB, kGiB}, {3, 2 * kGiB, kGiB / 16}};
	const std::vector<TwinHandle> quiet = {{0, 2 * kGiB, 0}, {3, 2 * kGiB, 0}};
	const auto d = find_noisy_handle(std::optional(noisy0), noisy3);
	REQUIRE(d);
	CHECK(d->handle == 0);
	CHECK(d->drive);
	CHECK(noisy_handle_json(*d)["source"] == "drive");
	CHECK(noisy_handle_line(*d).find("of the drive's (FDP events log) GC relocations") !=
	      std::string::npos);
	const auto t = find_noisy_handle(std::optional(quiet), noisy3);
	REQUIRE(t);
	CHECK(t->handle == 3);
	CHECK_FALSE(t->drive);
	CHECK(noisy_handle_line(*t).find("of the twin's GC relocations") != std::string::npos);
	CHECK(find_noisy_handle(std::nullopt, noisy3)->handle == 3);
	CHECK_FALSE(find_noisy_handle(std::optional(quiet), quiet));
}
