// The tagger's pinned sets in the running kernel (root, bpffs): a pinned set outlives its
// Tagger and is re-opened (nothing loaded), a set of other options is replaced, unpin()
// removes it. kill -9 of kvfdpd with a pinned set under load is vm_daemon_kill9.
#include <doctest/doctest.h>

#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/user/pins.hpp"
#include "bpf/user/tagger.hpp"
#include "tests/support/skip.hpp"

using namespace kvfdp::bpf;

static const kvfdp::test::Requires need_root("root", kvfdp::test::probe_root("loading BPF"));
static const kvfdp::test::Requires need_btf("btf", kvfdp::test::probe_btf());

namespace {

bool exists(const std::string &p)
{
	struct stat st {};
	return ::stat(p.c_str(), &st) == 0;
}

TaggerOptions options(const std::string &dir, uint32_t depth)
{
	TaggerOptions o;
	o.queues = 2;
	o.depth = depth;
	o.pin_dir = dir;
	return o;
}

}  // namespace

TEST_CASE("pins: a pinned set outlives its tagger, is re-opened, replaced when other, and unpinned")
{
	const std::string dir = "/sys/fs/bpf/kvfdp-test-" + std::to_string(::getpid()) + "/ublkb99";
	REQUIRE(remove_pin_dir(dir));
	std::string first_sources;
	{
		auto t = Tagger::load(options(dir, 16));
		REQUIRE_MESSAGE(t, t.error().message());
		CHECK_FALSE(t->reopened());
		CHECK(t->pinned_at() == dir);
		CHECK(exists(dir + "/meta"));
		CHECK(exists(dir + "/link_kvfdp_rq_issue"));
		CHECK(exists(dir + "/map_slots"));
		REQUIRE(t->add_inode_policy(7, 42, 3));
		first_sources = t->sources().describe();
	}
	// Gone with its Tagger, the set stays, links attached and maps filled.
	CHECK(exists(dir + "/link_kvfdp_rq_issue"));
	{
		auto t = Tagger::load(options(dir, 16));
		REQUIRE_MESSAGE(t, t.error().message());
		CHECK(t->reopened());
		CHECK(t->inode_policy(7, 42) == 3);               // the same map, not a new one
		CHECK(t->sources().describe() == first_sources);  // from the set's meta
		CHECK((t->slots().slot(0, 0) != nullptr));
	}
	{
		// Other options (depth): the set is replaced, not re-opened.
		auto t = Tagger::load(options(dir, 32));
		REQUIRE_MESSAGE(t, t.error().message());
		CHECK_FALSE(t->reopened());
		CHECK(t->inode_policy(7, 42) == -1);
		REQUIRE(t->unpin());
		CHECK_FALSE(exists(dir));
		CHECK(t->pinned_at().empty());
	}
	CHECK_FALSE(exists(dir));
	::rmdir(dir.substr(0, dir.rfind('/')).c_str());
}
