// Writer identity (common/writer_identity.hpp): normalised cgroup paths of the container
// runtimes and systemd units kvfdp meets, identity strings and their ids (bpf/tagger.h),
// cgroup patterns; the LRU map the name caches use; the /proc/PID/cgroup line.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "bpf/tagger.h"
#include "common/cgroups.hpp"
#include "common/lru_map.hpp"
#include "common/writer_identity.hpp"

using namespace kvfdp;

namespace {
constexpr const char *kCid1 = "4f0c2b7a9d1e3f5a6b8c0d2e4f6a8b0c1d3e5f7a9b1c3d5e7f9a1b3c5d7e9f1a";
constexpr const char *kCid2 = "a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8";
}  // namespace

TEST_CASE("identity: Kubernetes pods lose their pod UID and container id (systemd driver)")
{
	const std::string a =
		std::string("/kubepods.slice/kubepods-burstable.slice/"
			    "kubepods-burstable-pod3f1c9b2e_8d4a_4c1e_9f2b_7a6d5c4b3a21.slice/"
			    "cri-containerd-") +
		kCid1 + ".scope";
	const std::string b =
		std::string("/kubepods.slice/kubepods-burstable.slice/"
			    "kubepods-burstable-pod0b7e6d5c_4a3b_4c2d_8e1f_9a8b7c6d5e4f.slice/"
			    "cri-containerd-") +
		kCid2 + ".scope";
	const std::string want = "/kubepods.slice/kubepods-burstable.slice/"
				 "kubepods-burstable-pod*.slice/cri-containerd-*.scope";
	CHECK(normalise_cgroup_path(a) == want);
	CHECK(normalise_cgroup_path(b) == want);
	// Guaranteed QoS pods sit directly under kubepods.slice; CRI-O names its scopes crio-.
	CHECK(normalise_cgroup_path(
		      std::string("/kubepods.slice/"
				  "kubepods-pod3f1c9b2e_8d4a_4c1e_9f2b_7a6d5c4b3a21.slice/"
				  "crio-") +
		      kCid1 + ".scope") == "/kubepods.slice/kubepods-pod*.slice/crio-*.scope");
	// A static pod's UID is 32 hex digits without dashes.
	CHECK(normalise_cgroup_path(
		      "/kubepods.slice/kubepods-besteffort.slice/"
		      "kubepods-besteffort-pod6c1e3a5b7d9f1b3d5f7a9c1e3b5d7f9a.slice") ==
	      "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod*.slice");
}

TEST_CASE("identity: Kubernetes pods under the cgroupfs driver")
{
	CHECK(normalise_cgroup_path(std::string("/kubepods/burstable/"
						"pod3f1c9b2e-8d4a-4c1e-9f2b-7a6d5c4b3a21/") +
				    kCid1) == "/kubepods/burstable/pod*/*");
	CHECK(normalise_cgroup_path(
		      std::string("/kubepods/pod3f1c9b2e-8d4a-4c1e-9f2b-7a6d5c4b3a21/") + kCid2) ==
	      "/kubepods/pod*/*");
}

TEST_CASE("identity: Docker and Podman containers lose their id")
{
	CHECK(normalise_cgroup_path(std::string("/system.slice/docker-") + kCid1 + ".scope") ==
	      "/system.slice/docker-*.scope");
	CHECK(normalise_cgroup_path(std::string("/docker/") + kCid2) == "/docker/*");
	CHECK(normalise_cgroup_path(std::string("/machine.slice/libpod-") + kCid1 + ".scope") ==
	      "/machine.slice/libpod-*.scope");
	CHECK(normalise_cgroup_path(std::string("/machine.slice/libpod-conmon-") + kCid1 +
				    ".scope") == "/machine.slice/libpod-conmon-*.scope");
	CHECK(normalise_cgroup_path(std::string("/libpod_parent/libpod-") + kCid2) ==
	      "/libpod_parent/libpod-*");
	CHECK(normalise_cgroup_path(std::string("/system.slice/containerd-") + kCid2 + ".scope") ==
	      "/system.slice/containerd-*.scope");
	// 63 or 65 hex digits are not a container id.
	const std::string c63 = std::string(kCid1).substr(0, 63);
	CHECK(normalise_cgroup_path("/x/" + c63) == "/x/" + c63);
	CHECK(normalise_cgroup_path("/x/" + std::string(kCid1) + "0") ==
	      "/x/" + std::string(kCid1) + "0");
}

TEST_CASE("identity: systemd transient units lose their number; services are kept")
{
	CHECK(normalise_cgroup_path("/system.slice/run-r3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a.scope") ==
	      "/system.slice/run-r*.scope");
	CHECK(normalise_cgroup_path("/system.slice/run-u42.service") ==
	      "/system.slice/run-u*.service");
	CHECK(normalise_cgroup_path("/user.slice/user-1000.slice/user@1000.service/app.slice/"
				    "run-p1234-i1235.scope") ==
	      "/user.slice/user-1000.slice/user@1000.service/app.slice/run-p*-i*.scope");
	CHECK(normalise_cgroup_path("/user.slice/user-1000.slice/session-17.scope") ==
	      "/user.slice/user-1000.slice/session-*.scope");
	CHECK(normalise_cgroup_path("/user.slice/user-120.slice/session-c2.scope") ==
	      "/user.slice/user-120.slice/session-*.scope");
	for (const char *kept : {"/kv.slice/vllm.service", "/system.slice/kvcache@1.service",
				 "/system.slice/run-user-1000.mount", "/", "/session-x.scope",
				 "/system.slice/run-u.service"})
		CHECK(normalise_cgroup_path(kept) == kept);
}

TEST_CASE("identity: the identity string and its id")
{
	CHECK(writer_identity("/kv.slice/vllm.service", "vllm-cache") ==
	      "/kv.slice/vllm.service@vllm-cache");
	CHECK(writer_identity("/kv.slice/vllm.service", "") == "/kv.slice/vllm.service");
	const std::string pod1 = std::string("/kubepods/burstable/pod3f1c9b2e-8d4a-4c1e-9f2b-"
					     "7a6d5c4b3a21/") +
				 kCid1;
	const std::string pod2 = std::string("/kubepods/burstable/pod0b7e6d5c-4a3b-4c2d-8e1f-"
					     "9a8b7c6d5e4f/") +
				 kCid2;
	const uint32_t id1 =
		kvfdp_writer_of_identity(identity_hash(writer_identity(pod1, "engine")));
	const uint32_t id2 =
		kvfdp_writer_of_identity(identity_hash(writer_identity(pod2, "engine")));
	const uint32_t other =
		kvfdp_writer_of_identity(identity_hash(writer_identity(pod2, "staging")));
	CHECK(id1 == id2);  // a restarted pod writing under the same directory
	CHECK(id1 != other);
	CHECK((id1 & KVFDP_WRITER_IDENT) != 0);
	CHECK((id1 & KVFDP_WRITER_NAMED) == 0);
	CHECK((id1 & KVFDP_WRITER_ID_MASK) != 0);
	CHECK_FALSE(kvfdp_writer_is_raw(id1));
}

TEST_CASE("identity: raw cgroup ids fold into 30 bits and never collide with the other spaces")
{
	for (uint64_t id : {1ull, 2ull, 0x3fffffffull, 0x40000000ull, 0x80000000ull, 0xffffffffull,
			    0x123456789abcdefull, ~0ull}) {
		const uint32_t w = kvfdp_writer_of_cgroup(id);
		CHECK_MESSAGE(w != 0, id);
		CHECK_MESSAGE((w & (KVFDP_WRITER_NAMED | KVFDP_WRITER_IDENT)) == 0, id);
		CHECK(kvfdp_writer_is_raw(w));
	}
	// Below 2^30 the raw id is the cgroup id itself (what `kvfdp files` shows).
	CHECK(kvfdp_writer_of_cgroup(12345) == 12345);
	CHECK_FALSE(kvfdp_writer_is_raw(0));
	CHECK_FALSE(kvfdp_writer_is_raw(KVFDP_WRITER_NAMED | 1));
	// Every hash gives a nonzero identity id with bit 30 set.
	CHECK(kvfdp_writer_of_identity(0) == (KVFDP_WRITER_IDENT | 1));
}

TEST_CASE("identity: cgroup patterns")
{
	const std::string pod =
		std::string("/kubepods.slice/kubepods-burstable.slice/"
			    "kubepods-burstable-pod3f1c9b2e_8d4a.slice/cri-containerd-") +
		kCid1 + ".scope";
	CHECK(cgroup_pattern_matches("/kubepods.slice/*/*pod*/cri-containerd-*.scope", pod));
	CHECK_FALSE(cgroup_pattern_matches("/kubepods.slice/*pod*/cri-containerd-*.scope", pod));
	CHECK(cgroup_pattern_matches("/kubepods.slice/**/cri-containerd-*.scope", pod));
	CHECK(cgroup_pattern_matches("/kubepods.slice/**", pod));
	CHECK_FALSE(cgroup_pattern_matches("/kubepods.slice/*", pod));
	CHECK(cgroup_pattern_matches("/kv.slice/vllm.service", "/kv.slice/vllm.service"));
	CHECK_FALSE(cgroup_pattern_matches("/kv.slice/vllm.service", "/kv.slice/vllm.service/x"));
	CHECK(cgroup_pattern_matches("/kv.slice/vllm@*.service", "/kv.slice/vllm@2.service"));
	CHECK_FALSE(cgroup_pattern_matches("/kv.slice/vllm@*.service", "/kv.slice/sglang.service"));
	CHECK(cgroup_pattern_matches("*", ""));
	CHECK_FALSE(cgroup_pattern_matches("", "/"));
}

TEST_CASE("identity: the cgroup v2 line of /proc/PID/cgroup")
{
	CHECK(cgroup_v2_line("0::/kv.slice/vllm.service\n") == "/kv.slice/vllm.service");
	CHECK(cgroup_v2_line("12:pids:/x\n1:name=systemd:/y\n0::/z\n") == "/z");
	CHECK(cgroup_v2_line("12:pids:/x\n") == "");
}

TEST_CASE("LruMap: bounded, drops the least recently used and counts it")
{
	LruMap<int, std::string> m(3);
	m.put(1, "a");
	m.put(2, "b");
	m.put(3, "c");
	REQUIRE(m.find(1) != nullptr);  // 1 is now the most recent: 2 goes first
	m.put(4, "d");
	CHECK(m.size() == 3);
	CHECK(m.evictions() == 1);
	CHECK(m.peek(2) == nullptr);
	CHECK(*m.peek(1) == "a");
	m.put(4, "e");  // a replace evicts nothing
	CHECK(m.evictions() == 1);
	CHECK(*m.peek(4) == "e");
	for (int i = 10; i < 1010; i++)
		m.put(i, "x");
	CHECK(m.size() == 3);
	CHECK(m.evictions() == 1001);
	CHECK(m.erase(1009));
	CHECK_FALSE(m.erase(1009));
	CHECK(m.size() == 2);
}
