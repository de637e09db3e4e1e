// placement: class names, size parsing and the default class -> handle map.
#include <doctest/doctest.h>

#include "placement/classes.hpp"
#include "placement/handle_map.hpp"
#include "placement/size.hpp"

using namespace kvfdp::placement;

TEST_CASE("placement: class names parse both ways, any case, and as digits")
{
	for (unsigned c = 0; c < kNumClasses; c++)
		CHECK(parse_class(class_name(c)) == c);
	CHECK(parse_class("LONG") == KVFDP_CLASS_LONG);
	CHECK(parse_class("Not-Set") == KVFDP_CLASS_NOT_SET);
	CHECK(parse_class("5") == KVFDP_CLASS_EXTREME);
	CHECK_FALSE(parse_class("6"));
	CHECK_FALSE(parse_class("forever"));
	CHECK_FALSE(parse_class(""));
	CHECK(std::string(class_name(9)) == "?");
	CHECK(class_names_list() == "not_set, none, short, medium, long, extreme");
}

TEST_CASE("placement: sizes are exact, binary, and refuse what is not a whole byte count")
{
	CHECK(*parse_size("4096") == 4096u);
	CHECK(*parse_size("0") == 0u);
	CHECK(*parse_size("512B") == 512u);
	CHECK(*parse_size("64KiB") == 65536u);
	CHECK(*parse_size("1MiB") == 1048576u);
	CHECK(*parse_size("1.5GiB") == 1610612736u);
	CHECK(*parse_size("0.25k") == 256u);
	CHECK(*parse_size("8G") == 8ull << 30);
	CHECK(*parse_size("2tib") == 2ull << 40);
	// K, KB and KiB are one binary kilobyte, as kvfdpd's options have always read them.
	for (const char *k : {"512K", "512KB", "512KiB", "512kb", "512kib", "0.5MB", "0.5M"})
		CHECK_MESSAGE(*parse_size(k) == 524288u, k);
	CHECK(*parse_size("1GB") == 1ull << 30);
	CHECK(*parse_size("3TB") == 3ull << 40);
	CHECK(*parse_size("18446744073709551615") == UINT64_MAX);
	for (const char *bad : {"", "GiB", "-1GiB", "1XB", "1.3B", "1.", ".5GiB",
				"99999999999999999999", "20000000TiB", "16777216TiB",
				"1.0000000001GiB", " 1", "1Ki", "1KBB", "1kiB ", "1PB", "1 K"}) {
		auto r = parse_size(bad);
		CHECK_MESSAGE(!r.ok(), bad);
		if (!r.ok()) {
			CHECK(r.error().message().find("KiB, MiB, GiB or TiB") !=
			      std::string::npos);
			CHECK(r.error().message().find('\n') == std::string::npos);
		}
	}
}

TEST_CASE("placement: default map: 5+ handles one class each, fewer share evenly, 0 stays alone")
{
	const std::array<uint16_t, kNumClasses> eight{0, 0, 1, 2, 3, 4};
	CHECK(default_map(8) == eight);
	CHECK(default_map(5) == eight);
	CHECK(default_map(128) == eight);
	CHECK(default_map(4) == std::array<uint16_t, kNumClasses>{0, 0, 1, 1, 2, 3});
	CHECK(default_map(3) == std::array<uint16_t, kNumClasses>{0, 0, 1, 1, 2, 2});
	CHECK(default_map(2) == std::array<uint16_t, kNumClasses>{0, 0, 1, 1, 1, 1});
	CHECK(default_map(1) == std::array<uint16_t, kNumClasses>{});
	CHECK(default_map(0) == std::array<uint16_t, kNumClasses>{});
	for (uint16_t n = 1; n <= 16; n++) {
		auto m = default_map(n);
		for (unsigned c = 1; c < kNumClasses; c++) {
			CHECK(m[c] < n);
			CHECK(m[c] >= m[c - 1]);
		}
		if (n >= 2)
			CHECK(m[KVFDP_CLASS_SHORT] == 1);
		CHECK(default_handle(KVFDP_CLASS_LONG, n) == m[KVFDP_CLASS_LONG]);
		CHECK(default_handle(200, n) == 0);
	}
}
