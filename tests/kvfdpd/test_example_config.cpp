// The shipped example config (kvfdpd/service/kvfdp.toml, installed as
// /etc/kvfdp/kvfdp.toml) parses and validates against a real model device, as shipped and
// with every commented-out example key switched on.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "kvfdpd/daemon/ctl/backend.hpp"
#include "placement/config.hpp"
#include "kvfdpd/daemon/policy_table.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;

namespace {

std::string read_example()
{
	std::ifstream in(KVFDP_EXAMPLE_CONFIG);
	REQUIRE_MESSAGE(in.good(), "cannot read " KVFDP_EXAMPLE_CONFIG);
	std::stringstream ss;
	ss << in.rdbuf();
	return ss.str();
}

// Lines '#key...' or '#[table]' (a '#' directly followed by no space) are the examples.
std::string uncomment_examples(const std::string &text, int &switched)
{
	std::istringstream in(text);
	std::string line, out;
	switched = 0;
	while (std::getline(in, line)) {
		if (line.size() > 1 && line[0] == '#' && line[1] != ' ' && line[1] != '#') {
			line.erase(0, 1);
			switched++;
		}
		out += line + '\n';
	}
	return out;
}

// Placement handles of the model backend (the FDP SSD model) with nruh handles.
uint16_t model_handles(uint16_t nruh)
{
	BackendOptions o;
	o.kind = "model";
	o.file = "/tmp/kvfdp-test-example-" + std::to_string(getpid()) + ".img";
	o.size = 64ull << 20;
	o.nruh = nruh;
	auto dev = open_backend(o);
	::unlink(o.file.c_str());
	REQUIRE_MESSAGE(dev.ok(), dev.error().message());
	auto hs = (*dev)->handles();
	REQUIRE(hs.ok());
	return static_cast<uint16_t>(hs->size());
}

// The model's 8 handles.
uint16_t device_handles()
{
	const uint16_t n = model_handles(8);
	CHECK(n == 8);
	return n;
}

}  // namespace

TEST_CASE("example config: as shipped it parses and validates on any device")
{
	const std::string text = read_example();
	auto cfg = placement::parse_config(text, KVFDP_EXAMPLE_CONFIG);
	REQUIRE_MESSAGE(cfg.ok(), cfg.error().message());
	CHECK(cfg->watch_dir == "/mnt/kv");
	CHECK(cfg->rules.empty());
	const uint16_t nruh = device_handles();
	for (uint16_t n : {nruh, uint16_t{4}, uint16_t{1}, uint16_t{0}}) {
		auto p = make_policy(*cfg, n);
		CHECK_MESSAGE(p.ok(), "nruh ", n);
		if (p.ok())
			CHECK(p->handle == kvfdp::placement::default_map(n));
	}
}

TEST_CASE("example config: every commented-out example key is valid and says the default")
{
	int switched = 0;
	const std::string text = uncomment_examples(read_example(), switched);
	CHECK(switched >= 12);  // six classes, two rules of three lines, their blank separator
	auto cfg = placement::parse_config(text, "kvfdp.toml (examples on)");
	REQUIRE_MESSAGE(cfg.ok(), cfg.error().message());
	for (unsigned c = 0; c < placement::kNumClasses; c++)
		CHECK_MESSAGE(cfg->handle[c].has_value(), "class ", c, " has no example key");
	REQUIRE(cfg->rules.size() == 2);
	CHECK(cfg->rules[0].path == "/mnt/kv/prefix");
	CHECK(cfg->rules[0].cls == KVFDP_CLASS_EXTREME);
	CHECK(cfg->rules[1].cls == KVFDP_CLASS_SHORT);
	const uint16_t nruh = device_handles();
	auto p = make_policy(*cfg, nruh);
	REQUIRE_MESSAGE(p.ok(), p.error().message());
	// The example values are the built-in map, so switching them on changes nothing.
	CHECK(p->handle == kvfdp::placement::default_map(nruh));
	// With fewer handles than the example names, the error names the key and what to do.
	auto small = make_policy(*cfg, 4);
	REQUIRE(!small.ok());
	CHECK(small.error().message().find(
		      "placement.extreme: handle 4 out of range (device has 4 handles: use 0..3)") !=
	      std::string::npos);
}
