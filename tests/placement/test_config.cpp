// placement: the policy config parser: [[writer]], rule checks (globs, PATH_MAX, conflicting
// duplicates), one-line errors naming file:line and key, validation against handles, metrics_listen,
// require_tagger.
#include <doctest/doctest.h>

#include <string>

#include "placement/config.hpp"
#include "placement/policy.hpp"

using namespace kvfdp::placement;

namespace {

std::string error_of(const std::string &text)
{
	auto cfg = parse_config(text, "kvfdp.toml");
	if (cfg.ok())
		return "(parsed)";
	const std::string msg = cfg.error().message();
	CHECK_MESSAGE(msg.find('\n') == std::string::npos, msg);
	return msg;
}

}  // namespace

TEST_CASE("config: writers by cgroup and by directory, with a fixed class or handle")
{
	const char *text = R"(
[[writer]]
name = "engine-a"
cgroup = "/kv.slice/vllm-a.service"

[[writer]]
dir = "/mnt/kv//staging/"
class = "short"

[[writer]]
cgroup = "/system.slice/logrotate.service"
handle = 7
)";
	auto cfg = parse_config(text, "kvfdp.toml");
	REQUIRE_MESSAGE(cfg.ok(), cfg.error().message());
	REQUIRE(cfg->writers.size() == 3);
	CHECK(cfg->writers[0].name == "engine-a");
	CHECK(cfg->writers[0].cgroup == "/kv.slice/vllm-a.service");
	CHECK(cfg->writers[0].dir.empty());
	CHECK(!cfg->writers[0].cls);
	CHECK(!cfg->writers[0].handle);
	CHECK(cfg->writers[0].line == 2);
	CHECK(cfg->writers[1].dir == "/mnt/kv/staging");   // normalised
	CHECK(cfg->writers[1].name == "/mnt/kv/staging");  // the path when unnamed
	CHECK(cfg->writers[1].cls == KVFDP_CLASS_SHORT);
	CHECK(cfg->writers[2].handle == 7);

	auto p = make_policy(*cfg, 8);
	REQUIRE(p.ok());
	CHECK(!fixed_handle(cfg->writers[0], *p));
	CHECK(fixed_handle(cfg->writers[1], *p) == p->handle[KVFDP_CLASS_SHORT]);
	CHECK(fixed_handle(cfg->writers[2], *p) == 7);
	auto small = make_policy(*cfg, 4);
	REQUIRE(!small.ok());
	CHECK_MESSAGE(
		small.error().message().find(
			"kvfdp.toml:10: writer[2].handle: handle 7 out of range (device has 4 handles") !=
			std::string::npos,
		small.error().message());
}

TEST_CASE("config: writer mistakes are one line naming the key")
{
	CHECK(error_of("[[writer]]\nname = \"x\"\n")
		      .find("kvfdp.toml:1: writer[0]: give exactly one of cgroup") !=
	      std::string::npos);
	CHECK(error_of("[[writer]]\ncgroup = \"/a\"\ndir = \"/b\"\n")
		      .find("writer[0]: give exactly one") != std::string::npos);
	CHECK(error_of("[[writer]]\ndir = \"/a\"\nclass = \"short\"\nhandle = 1\n")
		      .find("give class or handle, not both") != std::string::npos);
	CHECK(error_of("[[writer]]\ndir = \"/a\"\nclass = \"soon\"\n")
		      .find("kvfdp.toml:3: writer[0].class: unknown class") != std::string::npos);
	CHECK(error_of("[[writer]]\ndir = \"/a\"\nhandle = -2\n")
		      .find("kvfdp.toml:3: writer[0].handle: must be a handle index") !=
	      std::string::npos);
	CHECK(error_of("[[writer]]\ndir = \"/a\"\nprio = 1\n")
		      .find("writer[0].prio: unknown key (known: name, cgroup, cgroup_pattern, dir, "
			    "class, handle)") != std::string::npos);
	CHECK(error_of("[[writer]]\ndir = \"relative\"\n")
		      .find("writer[0].dir: must be an absolute path") != std::string::npos);
	CHECK(error_of("writer = 1\n").find("writer: must be an array of tables") !=
	      std::string::npos);
}

TEST_CASE("config: writers by cgroup pattern, with or without a directory")
{
	auto cfg = parse_config(R"([[writer]]
name = "engine"
cgroup_pattern = "/kubepods.slice/*/*pod*/cri-containerd-*.scope"
dir = "/mnt/kv/engine/"

[[writer]]
cgroup_pattern = "/kubepods.slice/**"
class = "long"
)",
				"kvfdp.toml");
	REQUIRE_MESSAGE(cfg.ok(), cfg.error().message());
	REQUIRE(cfg->writers.size() == 2);
	CHECK(cfg->writers[0].cgroup_pattern == "/kubepods.slice/*/*pod*/cri-containerd-*.scope");
	CHECK(cfg->writers[0].dir == "/mnt/kv/engine");
	CHECK(cfg->writers[0].cgroup.empty());
	CHECK(cfg->writers[0].name == "engine");
	CHECK(cfg->writers[1].dir.empty());
	CHECK(cfg->writers[1].name == "/kubepods.slice/**");  // the pattern when unnamed
	CHECK(cfg->writers[1].cls == KVFDP_CLASS_LONG);
	CHECK(writer_rule_label(cfg->writers[0]) ==
	      "/kubepods.slice/*/*pod*/cri-containerd-*.scope@/mnt/kv/engine");

	CHECK(error_of("[[writer]]\ncgroup_pattern = \"/a/*\"\ncgroup = \"/a/b\"\n")
		      .find("kvfdp.toml:1: writer[0]: give cgroup (one cgroup) or cgroup_pattern, "
			    "not both") != std::string::npos);
	CHECK(error_of("[[writer]]\ncgroup_pattern = \"/a/pod?\"\n")
		      .find("kvfdp.toml:2: writer[0].cgroup_pattern: contains ? [ or ]") !=
	      std::string::npos);
	CHECK(error_of("[[writer]]\ncgroup_pattern = \"kubepods/*\"\n")
		      .find("writer[0].cgroup_pattern: must be an absolute path") !=
	      std::string::npos);
	// An exact cgroup is still one cgroup: no '*' there.
	CHECK(error_of("[[writer]]\ncgroup = \"/kubepods.slice/*\"\n")
		      .find("writer[0].cgroup: contains a glob character") != std::string::npos);
	CHECK(error_of("[[writer]]\ncgroup_pattern = \"/a/*\"\nclass = \"short\"\n"
		       "[[writer]]\ncgroup_pattern = \"/a/*\"\nclass = \"long\"\n")
		      .find("writer[1]: cgroup_pattern /a/* is already writer[0]") !=
	      std::string::npos);
}

TEST_CASE("config: rule paths with glob characters are refused")
{
	for (const char *p : {"/mnt/kv/*", "/mnt/kv/chunk?", "/mnt/[ab]"}) {
		const std::string msg = error_of(std::string("[[rule]]\npath = \"") + p +
						 "\"\nclass = \"short\"\n");
		CHECK_MESSAGE(msg.find("kvfdp.toml:2: rule[0].path: contains a glob character") !=
				      std::string::npos,
			      msg);
	}
	CHECK(error_of("[[writer]]\ndir = \"/mnt/*\"\n")
		      .find("writer[0].dir: contains a glob character") != std::string::npos);
}

TEST_CASE("config: a path of PATH_MAX bytes or more is refused, its length named")
{
	const std::string longpath = "/" + std::string(70000, 'a');
	const std::string msg =
		error_of("[[rule]]\npath = \"" + longpath + "\"\nclass = \"short\"\n");
	CHECK(msg.find("rule[0].path: is 70001 bytes long; a path must be shorter than 4096") !=
	      std::string::npos);
	CHECK(msg.size() < 300);  // the path itself is not echoed
	const std::string ok_path = "/" + std::string(4000, 'b');
	CHECK(error_of("[[rule]]\npath = \"" + ok_path + "\"\nclass = \"short\"\n") == "(parsed)");
}

TEST_CASE("config: the same directory twice with different classes is refused naming both lines")
{
	const std::string msg = error_of(
		"[[rule]]\npath = \"/mnt/kv/a\"\nclass = \"short\"\n\n[[rule]]\npath = \"/mnt/kv/a/\"\nclass = \"long\"\n");
	CHECK_MESSAGE(
		msg.find(
			"kvfdp.toml:5: rule[1].path: /mnt/kv/a already has class short (rule[0], line 1)") !=
			std::string::npos,
		msg);
	// The same class twice is harmless.
	CHECK(error_of(
		      "[[rule]]\npath = \"/a\"\nclass = \"short\"\n[[rule]]\npath = \"/a\"\nclass = \"SHORT\"\n") ==
	      "(parsed)");
	const std::string w = error_of(
		"[[writer]]\ncgroup = \"/a.slice\"\nhandle = 1\n[[writer]]\ncgroup = \"/a.slice\"\nhandle = 2\n");
	CHECK_MESSAGE(
		w.find("writer[1]: cgroup /a.slice is already writer[0] (line 1) with a different class or handle") !=
			std::string::npos,
		w);
}

TEST_CASE("config: dot components are refused, duplicate slashes normalised")
{
	CHECK(error_of("[[rule]]\npath = \"/mnt/../etc\"\nclass = \"short\"\n")
		      .find("has a \"..\" component") != std::string::npos);
	auto cfg = parse_config("[[rule]]\npath = \"//mnt///kv/\"\nclass = \"long\"\n", "f");
	REQUIRE(cfg.ok());
	CHECK(cfg->rules[0].path == "/mnt/kv");
}

TEST_CASE("config: the example kvfdp.toml's keys still parse, and an unknown table lists writer")
{
	CHECK(error_of("[writers]\n")
		      .find("unknown table (known: placement, watch, rule, writer, device)") !=
	      std::string::npos);
	CHECK(error_of("[placement]\nshort = 2\n[watch]\ndir = \"/mnt/kv\"\n") == "(parsed)");
}

TEST_CASE("config: [device] paths (a stripe when two or more) and stripe_size")
{
	auto cfg = parse_config(
		"[device]\npaths = [\"/dev/ng0n1\", \"/dev/ng1n1\"]\nstripe_size = \"1M\"\n", "f");
	REQUIRE(cfg.ok());
	CHECK(cfg->devices == std::vector<std::string>{"/dev/ng0n1", "/dev/ng1n1"});
	CHECK(cfg->stripe_bytes == 1u << 20);
	cfg = parse_config("[device]\nstripe_size = 262144\n", "f");
	REQUIRE(cfg.ok());
	CHECK(cfg->stripe_bytes == 262144);
	CHECK(cfg->devices.empty());
	CHECK(error_of("[device]\npaths = \"/dev/ng0n1\"\n")
		      .find("kvfdp.toml:2: device.paths: must be a list") != std::string::npos);
	CHECK(error_of("[device]\npaths = [\"ng0n1\"]\n")
		      .find("device.paths[0]: must be an absolute path") != std::string::npos);
	CHECK(error_of("[device]\nstripe_size = \"6000\"\n")
		      .find("device.stripe_size: must be a size that is a "
			    "multiple of 4096") != std::string::npos);
	CHECK(error_of("[device]\nstripe_size = \"lots\"\n").find("device.stripe_size") !=
	      std::string::npos);
	CHECK(error_of("[device]\nstripe = 1\n")
		      .find("device.stripe: unknown key (known: paths, stripe_size)") !=
	      std::string::npos);
}

TEST_CASE("config: twin_memory, a top-level key, is kvfdpd's --twin-memory from the file")
{
	auto cfg = parse_config("twin_memory = \"256M\"\n[placement]\nshort = 1\n", "f");
	REQUIRE(cfg.ok());
	REQUIRE(cfg->twin_memory.has_value());
	CHECK(*cfg->twin_memory == 256ull << 20);
	CHECK(cfg->twin_memory_line == 1);
	cfg = parse_config("# no twin\ntwin_memory = 0\n", "f");
	REQUIRE(cfg.ok());
	CHECK(cfg->twin_memory == std::optional<uint64_t>(0));
	CHECK(cfg->twin_memory_line == 2);
	cfg = parse_config("twin_memory = 67108864\n", "f");
	REQUIRE(cfg.ok());
	CHECK(cfg->twin_memory == std::optional<uint64_t>(64ull << 20));
	cfg = parse_config("[placement]\nshort = 1\n", "f");
	REQUIRE(cfg.ok());
	CHECK(!cfg->twin_memory.has_value());
	for (const char *bad : {"twin_memory = \"lots\"\n", "twin_memory = -1\n",
				"twin_memory = true\n", "twin_memory = 1.5\n"})
		CHECK(error_of(bad).find(
			      "kvfdp.toml:1: twin_memory: must be a size above the first "
			      "[table], such as \"64M\"") != std::string::npos);
	CHECK(error_of("[placement]\ntwin_memory = \"64M\"\n").find("placement.twin_memory") !=
	      std::string::npos);
}

TEST_CASE("config: metrics_listen, a top-level key, is kvfdpd's --metrics-listen from the file")
{
	auto cfg = parse_config(
		"# comment\nmetrics_listen = \"127.0.0.1:9477\"\n[placement]\nshort = 1\n", "f");
	REQUIRE(cfg.ok());
	CHECK(cfg->metrics_listen == "127.0.0.1:9477");
	CHECK(cfg->metrics_listen_line == 2);
	cfg = parse_config("[placement]\nshort = 1\n", "f");
	REQUIRE(cfg.ok());
	CHECK(cfg->metrics_listen.empty());
	CHECK(error_of("metrics_listen = 9477\n")
		      .find("kvfdp.toml:1: metrics_listen: must be a listen address "
			    "string above the first [table]") != std::string::npos);
	CHECK(error_of("metrics_listen = \"\"\n").find("metrics_listen: must be") !=
	      std::string::npos);
	// Below a table header the key belongs to that table: refused there, naming the table's keys.
	CHECK(error_of("[watch]\nmetrics_listen = \"9477\"\n")
		      .find("watch.metrics_listen: unknown key") != std::string::npos);
	CHECK(error_of("metrics = 1\n")
		      .find("or top-level key (known: metrics_listen, require_tagger, twin_memory)") !=
	      std::string::npos);
}

TEST_CASE("config: require_tagger, a top-level boolean, is kvfdpd's --require-tagger from the file")
{
	auto cfg = parse_config("# comment\nrequire_tagger = true\n[placement]\nshort = 1\n", "f");
	REQUIRE(cfg.ok());
	CHECK(cfg->require_tagger);
	CHECK(cfg->require_tagger_line == 2);
	cfg = parse_config("require_tagger = false\n", "f");
	REQUIRE(cfg.ok());
	CHECK_FALSE(cfg->require_tagger);
	cfg = parse_config("[placement]\nshort = 1\n", "f");
	REQUIRE(cfg.ok());
	CHECK_FALSE(cfg->require_tagger);
	CHECK(error_of("require_tagger = \"yes\"\n") ==
	      "kvfdp.toml:1: require_tagger: must be true or false, above the first [table]");
	CHECK(error_of("require_tagger = 1\n").find("require_tagger: must be true or false") !=
	      std::string::npos);
	CHECK(error_of("[placement]\nrequire_tagger = true\n").find("placement.require_tagger") !=
	      std::string::npos);
}
