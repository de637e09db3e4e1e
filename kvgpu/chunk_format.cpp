// Chunk header encoding and checking, and the key -> file name mapping.
#include "kvgpu/chunk_format.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kvgpu/crc32c.hpp"

namespace kvfdp::gpu {
namespace {

uint32_t header_crc_of(const ChunkHeader &h, std::string_view key)
{
	ChunkHeader tmp = h;
	tmp.header_crc = 0;
	uint32_t c = crc32c(0, &tmp, sizeof(tmp));
	return crc32c(c, key.data(), key.size());
}

bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

}  // namespace

void encode_header(void *block, std::string_view key, uint64_t payload_bytes, uint32_t lifetime,
		   bool checksum, uint32_t payload_crc, uint64_t created_ns)
{
	std::memset(block, 0, kBlock);
	ChunkHeader h{};
	std::memcpy(h.magic, kMagic, sizeof(h.magic));
	h.version = kVersion;
	h.header_bytes = kBlock;
	h.payload_bytes = payload_bytes;
	h.flags = checksum ? kFlagChecksum : 0;
	h.payload_crc = checksum ? payload_crc : 0;
	h.lifetime = lifetime;
	h.key_len = static_cast<uint32_t>(key.size());
	h.created_ns = created_ns;
	h.header_crc = header_crc_of(h, key);
	auto *b = static_cast<char *>(block);
	std::memcpy(b, &h, sizeof(h));
	std::memcpy(b + sizeof(h), key.data(), key.size());
}

int decode_header_any(const void *block, ChunkHeader *out, std::string_view *key)
{
	const auto *b = static_cast<const char *>(block);
	ChunkHeader h;
	std::memcpy(&h, b, sizeof(h));
	if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0 || h.version != kVersion ||
	    h.header_bytes != kBlock || h.key_len == 0 || h.key_len > kBlock - sizeof(h))
		return -EBADMSG;
	std::string_view stored(b + sizeof(h), h.key_len);
	if (header_crc_of(h, stored) != h.header_crc)
		return -EBADMSG;
	*out = h;
	*key = stored;
	return 0;
}

int decode_header(const void *block, std::string_view key, ChunkHeader *out)
{
	ChunkHeader h;
	std::string_view stored;
	if (int rc = decode_header_any(block, &h, &stored); rc < 0)
		return rc;
	if (stored != key)
		return -ENOENT;
	*out = h;
	return 0;
}

uint64_t hash64(std::string_view bytes, uint64_t seed)
{
	uint64_t h = mix(seed ^ (bytes.size() * 0x9e3779b97f4a7c15ull));
	size_t i = 0;
	for (; i + 8 <= bytes.size(); i += 8) {
		uint64_t w;
		std::memcpy(&w, bytes.data() + i, 8);
		h = mix(h ^ mix(w + 0x9e3779b97f4a7c15ull)) * 5 + 0x52dce729;
	}
	uint64_t tail = 0;
	std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
	return mix(h ^ mix(tail ^ 0x27d4eb2f165667c5ull));
}

void key_to_name(std::string_view key, FileName *out)
{
	static constexpr char kHex[] = "0123456789abcdef";
	char *n = out->str;
	size_t len = 2;
	n[0] = 'k';
	n[1] = '-';
	for (unsigned char c : key) {
		if (len > kMaxEscaped)
			break;
		if (plain_byte(c)) {
			n[len++] = static_cast<char>(c);
		} else {
			n[len++] = '%';
			n[len++] = kHex[c >> 4];
			n[len++] = kHex[c & 15];
		}
	}
	if (len <= kMaxEscaped) {
		n[len] = '\0';
		return;
	}
	std::snprintf(n, sizeof(out->str), "h-%016llx%016llx",
		      static_cast<unsigned long long>(hash64(key, 0x6b7667707531ull)),
		      static_cast<unsigned long long>(hash64(key, 0x3141592653589793ull)));
}

std::string key_to_name(std::string_view key)
{
	FileName n;
	key_to_name(key, &n);
	return n.str;
}

void temp_name(int pid, uint64_t seq, FileName *out)
{
	std::snprintf(out->str, sizeof(out->str), ".tmp-%d-%llu", pid,
		      static_cast<unsigned long long>(seq));
}

std::string temp_name(int pid, uint64_t seq)
{
	FileName n;
	temp_name(pid, seq, &n);
	return n.str;
}

int temp_name_pid(std::string_view name)
{
	constexpr std::string_view kPrefix = ".tmp-";
	if (name.substr(0, kPrefix.size()) != kPrefix)
		return -1;
	long pid = 0;
	size_t i = kPrefix.size();
	if (i >= name.size())
		return -1;
	for (; i < name.size() && name[i] != '-'; i++) {
		if (name[i] < '0' || name[i] > '9' || pid > 1 << 30)
			return -1;
		pid = pid * 10 + (name[i] - '0');
	}
	if (i >= name.size() || pid <= 0)
		return -1;
	return static_cast<int>(pid);
}

bool is_stale_temp(const char *name)
{
	int pid = temp_name_pid(name);
	return pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace kvfdp::gpu
