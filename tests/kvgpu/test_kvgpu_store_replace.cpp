// libkvgpu's bounded store: a key put again while a batch load has its old chunk open.
// load_batch opens a group's chunk files and checks their headers (open_batch) before it looks
// each key up and queues its load (start_load). A key evicted or rewritten in that window must
// not cost the new chunk: what the old file showed (missing, damaged, another length) is never
// charged to the new version, which loads. The window is reached through Context's test seam
// (set_batch_opened_hook), so each case is one thread's fixed order of steps.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/context.hpp"
#include "kvgpu/kvgpu.h"
#include "tests/kvgpu/kvgpu_store_util.hpp"

using namespace kvfdp::gpu;
using namespace kvfdp::gpu::test;

namespace {

constexpr uint64_t kCap = 64 * file_bytes(3 * kBlock);  // room for both versions and more
const std::string kKey = "layer/7";

// Version v of the key's payload, n bytes: the old (1) and the new (2) never compare equal.
std::vector<unsigned char> version(int v, size_t n)
{
	return pattern(n, 0x5eed0000ull + uint64_t(v));
}

int put(Context &c, int v, size_t n)
{
	auto data = version(v, n);
	int64_t t = c.evict(data.data(), data.size(), kKey, KVGPU_LIFETIME_SHORT, nullptr);
	return t < 0 ? int(t) : c.wait(t);
}

// What the old chunk's file looks like when load_batch opens it.
enum class Old { intact, missing, bad_header, bad_payload };

// Damages the key's chunk file behind the store's back; true when done.
bool damage(const std::string &dir, Old how)
{
	std::string path = dir + "/" + key_to_name(kKey);
	if (how == Old::missing)
		return ::unlink(path.c_str()) == 0;
	int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char x = 'X';
	// The magic's first byte, or the payload's first byte (its CRC then fails).
	off_t off = how == Old::bad_header ? 0 : off_t(kDataOffset);
	bool ok = ::pwrite(fd, &x, 1, off) == 1;
	return ::close(fd) == 0 && ok;
}

// The seam's argument: puts version 2 of the key once, inside load_batch's window.
struct Replace {
	Context *c = nullptr;
	size_t bytes = 0;
	int rc = 1;  // put's code; 1: the hook did not run
};

void replace_key(void *arg)
{
	auto *r = static_cast<Replace *>(arg);
	if (r->rc == 1)
		r->rc = put(*r->c, 2, r->bytes);
}

// Puts version 1 (old_n bytes), shapes its file by how, then batch-loads the key while the hook
// puts version 2 (new_n bytes): the batch, the index and the disk must all hold version 2.
void check_replaced(Old how, size_t old_n, size_t new_n)
{
	TempDir dir;
	REQUIRE(dir.ok());
	std::unique_ptr<Context> c;
	REQUIRE(Context::create(dir.path.c_str(), store_options(kCap), &c) == 0);
	REQUIRE(put(*c, 1, old_n) == 0);
	if (how != Old::intact)
		REQUIRE(damage(dir.path, how));

	Replace r{c.get(), new_n};
	c->set_batch_opened_hook(replace_key, &r);
	std::vector<unsigned char> got(3 * kBlock, 0);
	const char *keys[] = {kKey.c_str()};
	void *dsts[] = {got.data()};
	size_t sizes[] = {got.size()};
	int64_t results[] = {0};
	int64_t b = c->load_batch(1, keys, dsts, sizes, results, nullptr);
	REQUIRE(b > 0);
	CHECK(c->batch_wait(b) == 0);
	c->set_batch_opened_hook(nullptr, nullptr);
	REQUIRE(r.rc == 0);

	// The batch loaded the chunk the key holds when its load was queued: version 2.
	CHECK(results[0] == int64_t(new_n));
	got.resize(new_n);
	CHECK(got == version(2, new_n));
	// The index kept version 2 at its own length; nothing was dropped or re-sized.
	CHECK(c->lookup(kKey) == int64_t(new_n));
	kvgpu_stats_t s{};
	c->stats(&s);
	CHECK(s.dropped == 0);
	CHECK(s.chunks == 1);
	CHECK(s.used_bytes == file_bytes(new_n));
	DiskUse u = disk_use(dir.path);
	CHECK(u.files == 1);
	CHECK(u.bytes == s.used_bytes);
	// And it loads again, by itself.
	std::vector<unsigned char> again(new_n);
	CHECK(c->load(kKey, again.data(), again.size(), nullptr) == int64_t(new_n));
	CHECK(again == version(2, new_n));
}

}  // namespace

TEST_CASE(
	"store replace: a key put again after load_batch found its file missing keeps the new chunk")
{
	check_replaced(Old::missing, 5000, 5000);
}

TEST_CASE(
	"store replace: a key put again after load_batch found its header damaged keeps the new chunk")
{
	check_replaced(Old::bad_header, 5000, 5000);
}

TEST_CASE(
	"store replace: a key put again after load_batch opened a chunk failing its CRC keeps the new chunk")
{
	check_replaced(Old::bad_payload, 5000, 5000);
}

TEST_CASE(
	"store replace: a key put again at another length after load_batch opened it keeps the new length")
{
	check_replaced(Old::intact, 5000, 2 * kBlock + 100);
}
