// kvfdpd's learner state per device (kvfdpd/daemon/learned.*): the namespace's identity
// from Identify (nvme/discovery.hpp namespace_identity), a file per identity in a state
// directory, a file of another device or a corrupt one set aside as <file>.rejected (only
// the last one kept) with learning started fresh, and the saved file's mode 0600. The
// device is the FDP SSD model (its identity: the data file's device and inode).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "nvme/discovery.hpp"
#include "model/ftl/model_device.hpp"
#include "placement/learner.hpp"
#include "tests/kvfdpd/learned_model.hpp"
#include "tests/support/temp_files.hpp"
#include "kvfdpd/daemon/learned.hpp"
#include "kvfdpd/daemon/writers.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;

namespace {

constexpr uint32_t kLba = 4096;
constexpr uint64_t kMiB = 1 << 20;

std::unique_ptr<nvme::Device> make_model(const std::string &data)
{
	return test::learned_model(data, 64 * kMiB);
}

// Two writers write 32 MiB between them, then the learner regroups and saves.
void write_some(LearnedPlacement &lp)
{
	const uint32_t per = kMiB / kLba;
	for (uint64_t i = 0; i < 32; i++)
		(void)lp.place(i % 2 ? 101 : 202, KVFDP_CLASS_NOT_SET, (i % 16) * per, per);
	(void)lp.recompute_now();
}

bool exists(const std::string &p)
{
	return ::access(p.c_str(), F_OK) == 0;
}

std::string read_all(const std::string &p)
{
	std::ifstream in(p);
	return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("learned state: the namespace identity is the NGUID, else the EUI-64, else serial + NSID")
{
	std::array<uint8_t, 4096> ctrl{}, ns{};
	std::memcpy(ctrl.data() + 4, "  QEMU FDP/1 x       ", 20);  // SN, bytes 23:04
	CHECK(nvme::namespace_identity(ctrl, ns, 3) == "sn-QEMU_FDP_1_x-ns3");
	ns[120] = 0x52;  // EUI64, bytes 127:120
	ns[127] = 0x01;
	CHECK(nvme::namespace_identity(ctrl, ns, 3) == "eui64-5200000000000001");
	ns[104] = 0xab;  // NGUID, bytes 119:104
	CHECK(nvme::namespace_identity(ctrl, ns, 3) == "nguid-ab000000000000000000000000000000");
	std::array<uint8_t, 4096> blank{};
	CHECK(nvme::namespace_identity(blank, blank, 1).empty());
	CHECK(nvme::namespace_identity(std::span<const uint8_t>(), std::span<const uint8_t>(), 1)
		      .empty());
}

TEST_CASE("learned state: a state directory holds one file per device identity")
{
	CHECK(state_file_for("/var/lib/kvfdp/", "nguid-ab") ==
	      "/var/lib/kvfdp/learned-nguid-ab.state");
	CHECK(state_file_for("/var/lib/kvfdp/", "sn-a b-ns1,eui64-01") ==
	      "/var/lib/kvfdp/learned-sn-a_b-ns1+eui64-01.state");
	CHECK(state_file_for("/tmp/x.state", "nguid-ab") == "/tmp/x.state");
	CHECK(state_file_for("", "nguid-ab").empty());
	const std::string longer(200, 'a');
	const std::string f = state_file_for("/s/", longer);
	CHECK(f.size() == std::string("/s/learned-.state").size() + 16);
	test::TempDir dir;
	CHECK(state_file_for(dir.path, "nguid-ab") == dir.path + "/learned-nguid-ab.state");
}

TEST_CASE("learned state: saved per device with mode 0600; another device's or a corrupt file "
	  "is set aside and learning starts fresh")
{
	test::TempDir dir;
	const std::string data = dir.path + "/model.data";
	auto dev = make_model(data);
	const std::string id = device_identity(dev->info());
	CHECK(id.rfind("file-", 0) == 0);  // the model reports none: its data file's
	WriterNames names;
	LearnedOptions o;
	o.state_path = dir.path + "/";
	const std::string file = dir.path + "/learned-" + id + ".state";
	{
		auto lp = LearnedPlacement::create(*dev, 4, o);
		CHECK(lp->policy(names).state_path == file);
		write_some(*lp);
		CHECK(lp->policy(names).keys.size() == 2);
	}
	REQUIRE(exists(file));
	struct stat st {};
	REQUIRE(::stat(file.c_str(), &st) == 0);
	CHECK((st.st_mode & 0777) == 0600);
	CHECK(read_all(file).find("\ndevice " + id + "\n") != std::string::npos);
	{
		auto lp = LearnedPlacement::create(*dev, 4, o);  // resumes
		CHECK(lp->policy(names).keys.size() == 2);
	}

	// The file of another device at this device's path: set aside, not loaded.
	const std::string saved = read_all(file);
	placement::LearnerConfig lc;
	lc.nruh = 4;
	lc.capacity_bytes = 64 * kMiB;
	lc.ru_bytes = kMiB;
	placement::Learner other(lc);
	other.set_device_identity("nguid-ff");
	(void)other.place({9, 0}, kMiB);
	(void)other.recompute(1);
	REQUIRE(other.save(file).ok());
	{
		auto lp = LearnedPlacement::create(*dev, 4, o);
		CHECK(lp->policy(names).keys.empty());
	}
	CHECK_FALSE(exists(file));
	REQUIRE(exists(file + ".rejected"));
	CHECK(read_all(file + ".rejected").find("\ndevice nguid-ff\n") != std::string::npos);

	// A corrupt one replaces it: only the last file set aside is kept.
	std::string bad = saved;
	bad[bad.size() / 2] ^= 1;
	test::write_file(file, bad);
	{
		auto lp = LearnedPlacement::create(*dev, 4, o);
		CHECK(lp->policy(names).keys.empty());
		write_some(*lp);  // and it saves its own again
	}
	CHECK(read_all(file + ".rejected") == bad);
	CHECK(read_all(file).find("\ndevice " + id + "\n") != std::string::npos);
	unsigned rejected = 0;
	for (const auto &e : std::filesystem::directory_iterator(dir.path))
		rejected += e.path().filename().string().find(".rejected") != std::string::npos;
	CHECK(rejected == 1);
}
