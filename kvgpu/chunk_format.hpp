// The chunk file format (header + padded payload) and the key -> file name mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvfdp::gpu {

// O_DIRECT alignment of offsets, lengths and buffers; also the header's size on disk.
inline constexpr size_t kBlock = 4096;
// The payload starts here; the header block is written last, after every payload block.
inline constexpr uint64_t kDataOffset = kBlock;
inline constexpr char kMagic[8] = {'K', 'V', 'G', 'P', 'U', 'C', 'H', '1'};
inline constexpr uint32_t kVersion = 1;
// flags bit 0: payload_crc is valid.
inline constexpr uint32_t kFlagChecksum = 1u;

// The fixed part of block 0 of a chunk file, little-endian; the key follows it, then zeros.
struct ChunkHeader {
	char magic[8];           // kMagic
	uint32_t version;        // kVersion
	uint32_t header_bytes;   // kBlock: where the payload starts
	uint64_t payload_bytes;  // the true length; the payload is zero-padded to a kBlock multiple
	uint32_t flags;          // kFlagChecksum
	uint32_t payload_crc;    // CRC32C of payload_bytes bytes (0 without kFlagChecksum)
	uint32_t lifetime;       // the RWH value the file was written with
	uint32_t key_len;        // bytes of key after this struct
	uint64_t created_ns;     // CLOCK_REALTIME at evict
	uint32_t reserved[3];
	uint32_t header_crc;  // CRC32C of this struct (this field as 0) and the key
};
static_assert(sizeof(ChunkHeader) == 64, "chunk header is 64 bytes on disk");
static_assert(sizeof(ChunkHeader) + 1024 <= kBlock, "header and longest key fit block 0");

// Rounds n up to a kBlock multiple.
[[nodiscard]] constexpr uint64_t align_up(uint64_t n)
{
	return (n + kBlock - 1) & ~uint64_t(kBlock - 1);
}

// The file's size on disk for a payload of n bytes: header block + padded payload.
[[nodiscard]] constexpr uint64_t file_bytes(uint64_t n)
{
	return kDataOffset + align_up(n);
}

// Fills block (kBlock bytes) with the header for key: zeros, struct, key, header_crc.
void encode_header(void *block, std::string_view key, uint64_t payload_bytes, uint32_t lifetime,
		   bool checksum, uint32_t payload_crc, uint64_t created_ns);

// Checks block (kBlock bytes): magic, version, header crc, key equal to key.
// Returns 0 with *out filled, or -EBADMSG (corrupt) / -ENOENT (another key: a hash collision).
[[nodiscard]] int decode_header(const void *block, std::string_view key, ChunkHeader *out);
// The same checks without a key to compare: *key points at the stored key inside block.
[[nodiscard]] int decode_header_any(const void *block, ChunkHeader *out, std::string_view *key);

// The file name for a key (which must be 1..1024 bytes without NUL): "k-" + the key with
// every byte outside [A-Za-z0-9_-] as %XX when that is at most kMaxEscaped bytes, else
// "h-" + 32 hex digits of a 128-bit hash (the header's key resolves collisions).
// Never starts with '.', never contains '/', so temp names (".tmp-...") cannot collide.
[[nodiscard]] std::string key_to_name(std::string_view key);
inline constexpr size_t kMaxEscaped = 200;

// The temp file name for one evict: ".tmp-<pid>-<seq>".
[[nodiscard]] std::string temp_name(int pid, uint64_t seq);

// A file name in a fixed buffer, so the worker and load paths build names without allocating.
struct FileName {
	char str[kMaxEscaped + 56];  // the longest escaped name, a hashed or a temp name, and NUL
	[[nodiscard]] const char *c_str() const { return str; }
};
// key_to_name and temp_name into *out.
void key_to_name(std::string_view key, FileName *out);
void temp_name(int pid, uint64_t seq, FileName *out);
// The pid in a temp name, or -1 when name is not a temp name.
[[nodiscard]] int temp_name_pid(std::string_view name);
// True for a temp file whose writer process is gone (never another live process's).
[[nodiscard]] bool is_stale_temp(const char *name);

// A 64-bit hash of bytes with a seed (multiply-xorshift mixing of 8-byte words).
[[nodiscard]] uint64_t hash64(std::string_view bytes, uint64_t seed);

}  // namespace kvfdp::gpu
