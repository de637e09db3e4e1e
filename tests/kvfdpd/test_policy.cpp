// kvfdpd policy: default class -> handle map, config parsing, validation errors naming keys.
#include <doctest/doctest.h>

#include "placement/config.hpp"
#include "kvfdpd/daemon/policy_table.hpp"

using namespace kvfdp::daemon;

TEST_CASE("policy: default map follows ARCHITECTURE decision 4 with 5+ handles")
{
	auto m = kvfdp::placement::default_map(8);
	CHECK(m[KVFDP_CLASS_NOT_SET] == 0);
	CHECK(m[KVFDP_CLASS_NONE] == 0);
	CHECK(m[KVFDP_CLASS_SHORT] == 1);
	CHECK(m[KVFDP_CLASS_MEDIUM] == 2);
	CHECK(m[KVFDP_CLASS_LONG] == 3);
	CHECK(m[KVFDP_CLASS_EXTREME] == 4);
	CHECK(kvfdp::placement::default_map(5) == m);
}

TEST_CASE("policy: with fewer handles neighbouring classes share, default stays alone")
{
	auto m1 = kvfdp::placement::default_map(1);
	for (auto h : m1)
		CHECK(h == 0);
	auto m2 = kvfdp::placement::default_map(2);
	CHECK(m2[KVFDP_CLASS_NOT_SET] == 0);
	CHECK(m2[KVFDP_CLASS_SHORT] == 1);
	CHECK(m2[KVFDP_CLASS_EXTREME] == 1);
	auto m3 = kvfdp::placement::default_map(3);
	CHECK(m3[KVFDP_CLASS_SHORT] == 1);
	CHECK(m3[KVFDP_CLASS_MEDIUM] == 1);
	CHECK(m3[KVFDP_CLASS_LONG] == 2);
	CHECK(m3[KVFDP_CLASS_EXTREME] == 2);
	auto m4 = kvfdp::placement::default_map(4);
	CHECK(m4[KVFDP_CLASS_SHORT] == 1);
	CHECK(m4[KVFDP_CLASS_MEDIUM] == 1);
	CHECK(m4[KVFDP_CLASS_LONG] == 2);
	CHECK(m4[KVFDP_CLASS_EXTREME] == 3);
	for (uint16_t n = 1; n <= 16; n++) {
		auto m = kvfdp::placement::default_map(n);
		for (unsigned c = 1; c < kvfdp::placement::kNumClasses; c++) {
			CHECK(m[c] < n);
			CHECK(m[c] >=
			      m[c - 1]);  // monotone: longer lifetimes never get a lower handle
		}
	}
}

TEST_CASE("config: a full config parses")
{
	const char *text = R"(
[placement]
short = 2
long = 5

[watch]
dir = "/mnt/kv"

[[rule]]
path = "/mnt/kv/prefix"
class = "extreme"

[[rule]]
path = "/mnt/kv/scratch"
class = "SHORT"
)";
	auto cfg = kvfdp::placement::parse_config(text, "kvfdp.toml");
	REQUIRE(cfg.ok());
	CHECK(*cfg->handle[KVFDP_CLASS_SHORT] == 2);
	CHECK(cfg->line[KVFDP_CLASS_SHORT] == 3);
	CHECK(!cfg->handle[KVFDP_CLASS_MEDIUM]);
	CHECK(cfg->watch_dir == "/mnt/kv");
	REQUIRE(cfg->rules.size() == 2);
	CHECK(cfg->rules[0].path == "/mnt/kv/prefix");
	CHECK(cfg->rules[0].cls == KVFDP_CLASS_EXTREME);
	CHECK(cfg->rules[1].cls == KVFDP_CLASS_SHORT);

	auto p = make_policy(*cfg, 8);
	REQUIRE(p.ok());
	CHECK(p->handle[KVFDP_CLASS_SHORT] == 2);
	CHECK(p->handle[KVFDP_CLASS_LONG] == 5);
	CHECK(p->handle[KVFDP_CLASS_MEDIUM] == 2);  // default map where unset
	CHECK(p->handle[KVFDP_CLASS_EXTREME] == 4);
}

TEST_CASE("config: an empty file is the default policy")
{
	auto cfg = kvfdp::placement::parse_config("", "x.toml");
	REQUIRE(cfg.ok());
	auto p = make_policy(*cfg, 8);
	REQUIRE(p.ok());
	CHECK(p->handle == kvfdp::placement::default_map(8));
}

// Each bad config is refused with one line naming file:line and the key.
TEST_CASE("config: errors name the file, line and key")
{
	struct Case {
		const char *text;
		const char *want;
	};
	const Case cases[] = {
		{"[placement]\nshort = \"one\"\n",
		 "kvfdp.toml:2: placement.short: must be a handle index"},
		{"[placement]\nshort = -1\n", "kvfdp.toml:2: placement.short"},
		{"[placement]\nshrt = 1\n", "kvfdp.toml:2: placement.shrt: unknown class"},
		{"[plcement]\nshort = 1\n", "kvfdp.toml:1: plcement: unknown table"},
		{"placement = 3\n", "kvfdp.toml:1: placement: must be a table"},
		{"[watch]\ndir = \"relative\"\n",
		 "kvfdp.toml:2: watch.dir: must be an absolute directory path"},
		{"[watch]\ndisk = \"/dev/x\"\n", "kvfdp.toml:2: watch.disk: unknown key"},
		{"[[rule]]\npath = \"/a\"\nclass = \"forever\"\n",
		 "kvfdp.toml:3: rule[0].class: unknown class"},
		{"[[rule]]\nclass = \"short\"\n", "rule[0].path: missing"},
		{"[[rule]]\npath = \"/a\"\n", "rule[0].class: missing"},
		{"[[rule]]\npath = \"/a\"\nclass = \"short\"\nprio = 1\n",
		 "kvfdp.toml:4: rule[0].prio: unknown key"},
		{"[placement\n", "kvfdp.toml:1: "},
		{"[placement]\nshort = \n", "(not valid TOML: fix that line"},
	};
	for (const Case &c : cases) {
		auto cfg = kvfdp::placement::parse_config(c.text, "kvfdp.toml");
		REQUIRE_MESSAGE(!cfg.ok(), c.text);
		const std::string msg = cfg.error().message();
		CHECK_MESSAGE(msg.find(c.want) != std::string::npos, msg);
		CHECK(msg.find('\n') == std::string::npos);
	}
}

TEST_CASE("policy: a handle beyond the device's handles is refused naming the key")
{
	auto cfg = kvfdp::placement::parse_config("[placement]\n\nlong = 9\n",
						  "/etc/kvfdp/kvfdp.toml");
	REQUIRE(cfg.ok());
	auto p = make_policy(*cfg, 8);
	REQUIRE(!p.ok());
	const std::string msg = p.error().message();
	CHECK(msg.find(
		      "/etc/kvfdp/kvfdp.toml:3: placement.long: handle 9 out of range (device has 8 handles") !=
	      std::string::npos);
	CHECK(make_policy(*cfg, 10).ok());
	// A backend without placement takes only handle 0.
	CHECK(!make_policy(*cfg, 0).ok());
	auto zero = kvfdp::placement::parse_config("[placement]\nshort = 0\n", "f");
	REQUIRE(zero.ok());
	CHECK(make_policy(*zero, 0).ok());
}

TEST_CASE("config: a missing file is the default only when allowed")
{
	auto a = kvfdp::placement::load_config("/nonexistent/kvfdp.toml", true);
	REQUIRE(a.ok());
	CHECK(a->source.empty());
	auto b = kvfdp::placement::load_config("/nonexistent/kvfdp.toml", false);
	REQUIRE(!b.ok());
	CHECK(b.error().message().find("/nonexistent/kvfdp.toml") != std::string::npos);
}

TEST_CASE("policy: the published table is what queue threads read")
{
	PolicyTable t;
	CHECK(t.generation() == 0);
	t.publish(kvfdp::placement::default_map(8));
	CHECK(t.handle_of(KVFDP_CLASS_LONG) == 3);
	CHECK(t.handle_of(200) == 0);  // out-of-range class reads the default
	auto m = kvfdp::placement::default_map(8);
	m[KVFDP_CLASS_LONG] = 7;
	t.publish(m);
	CHECK(t.handle_of(KVFDP_CLASS_LONG) == 7);
	CHECK(t.generation() == 2);
}
