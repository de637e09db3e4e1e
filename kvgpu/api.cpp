// The C API: argument checks, option defaults, error strings; the work is in Context.
#include <cstring>
#include <memory>
#include <new>

#include "kvgpu/context.hpp"
#include "kvgpu/kvgpu.h"

struct kvgpu_ctx {
	std::unique_ptr<kvfdp::gpu::Context> impl;
};

namespace {

constexpr uint32_t kMiB = 1u << 20;

// A key is 1..KVGPU_MAX_KEY bytes; returns its length or KVGPU_ERR_KEY / KVGPU_ERR_INVAL.
long check_key(const char *key)
{
	if (!key)
		return KVGPU_ERR_INVAL;
	size_t n = ::strnlen(key, KVGPU_MAX_KEY + 1);
	if (n == 0 || n > KVGPU_MAX_KEY)
		return KVGPU_ERR_KEY;
	return static_cast<long>(n);
}

// Fills unset (0) fields with defaults and checks the rest.
int normalize(kvgpu_options *o)
{
	if (o->slot_bytes == 0)
		o->slot_bytes = 4 * kMiB;
	if (o->slots == 0)
		o->slots = 8;
	if (o->max_jobs == 0)
		o->max_jobs = 64;
	if (o->queue_depth == 0)
		o->queue_depth = 64;
	if (o->reinsert_hits == 0)
		o->reinsert_hits = 1;
	if (o->evict_policy > KVGPU_EVICT_FIFO2 || o->prefetch_slots > 1024 ||
	    o->reclaim > KVGPU_RECLAIM_INLINE)
		return KVGPU_ERR_INVAL;
	// A bounded store smaller than the smallest chunk file (header block + one block) holds nothing.
	if (o->capacity_bytes > 0 && o->capacity_bytes < kvfdp::gpu::file_bytes(1))
		return KVGPU_ERR_CAPACITY;
	if (o->slot_bytes % kvfdp::gpu::kBlock != 0 || o->slot_bytes > 1024 * kMiB ||
	    o->slots > 4096 || o->max_jobs > 65536 || o->queue_depth > 32768 ||
	    o->engine > KVGPU_ENGINE_CUDA || o->durability > KVGPU_DURABLE_FSYNC ||
	    o->checksum > 1 || o->direct_io > KVGPU_DIRECT_OFF || o->cuda_device < 0)
		return KVGPU_ERR_INVAL;
	if (o->queue_depth < o->slots + 8)
		o->queue_depth = o->slots + 8;
	return 0;
}

}  // namespace

extern "C" {

void kvgpu_options_init(kvgpu_options *opts)
{
	if (!opts)
		return;
	std::memset(opts, 0, sizeof(*opts));
	opts->struct_size = sizeof(*opts);
	opts->engine = KVGPU_ENGINE_AUTO;
	opts->slot_bytes = 4 * kMiB;
	opts->slots = 8;
	opts->queue_depth = 64;
	opts->max_jobs = 64;
	opts->durability = KVGPU_DURABLE_NONE;
	opts->checksum = 1;
	opts->direct_io = KVGPU_DIRECT_AUTO;
	opts->capacity_bytes = 0;
	opts->evict_policy = KVGPU_EVICT_FIFO;
	opts->reinsert_hits = 1;
	opts->prefetch_slots = 8;
}

int kvgpu_open(const char *dir, const kvgpu_options *opts, kvgpu_ctx **out)
{
	if (!dir || !out || !*dir)
		return KVGPU_ERR_INVAL;
	*out = nullptr;
	kvgpu_options o;
	kvgpu_options_init(&o);
	if (opts) {
		// An older caller passes a shorter struct: take what it has, default the rest.
		if (opts->struct_size < offsetof(kvgpu_options, engine) ||
		    opts->struct_size > sizeof(o))
			return KVGPU_ERR_INVAL;
		std::memcpy(&o, opts, opts->struct_size);
	}
	if (int rc = normalize(&o); rc < 0)
		return rc;
	auto *ctx = new (std::nothrow) kvgpu_ctx;
	if (!ctx)
		return KVGPU_ERR_NOMEM;
	if (int rc = kvfdp::gpu::Context::create(dir, o, &ctx->impl); rc < 0) {
		delete ctx;
		return rc;
	}
	*out = ctx;
	return 0;
}

int kvgpu_close(kvgpu_ctx *ctx)
{
	if (!ctx)
		return 0;
	int rc = ctx->impl->shutdown();
	delete ctx;
	return rc;
}

int64_t kvgpu_evict(kvgpu_ctx *ctx, const void *src, size_t bytes, const char *key, int lifetime,
		    void *stream)
{
	if (!ctx || !src)
		return KVGPU_ERR_INVAL;
	long klen = check_key(key);
	if (klen < 0)
		return klen;
	if (bytes == 0 || bytes > (size_t(1) << 48))
		return KVGPU_ERR_SIZE;
	if (lifetime < KVGPU_LIFETIME_NOT_SET || lifetime > KVGPU_LIFETIME_EXTREME)
		return KVGPU_ERR_LIFETIME;
	return ctx->impl->evict(src, bytes, std::string_view(key, size_t(klen)), lifetime, stream);
}

int kvgpu_wait(kvgpu_ctx *ctx, int64_t ticket)
{
	if (!ctx)
		return KVGPU_ERR_INVAL;
	return ctx->impl->wait(ticket);
}

int64_t kvgpu_load(kvgpu_ctx *ctx, const char *key, void *dst, size_t bytes, void *stream)
{
	if (!ctx || !dst)
		return KVGPU_ERR_INVAL;
	long klen = check_key(key);
	if (klen < 0)
		return klen;
	if (bytes == 0)
		return KVGPU_ERR_SIZE;
	return ctx->impl->load(std::string_view(key, size_t(klen)), dst, bytes, stream);
}

int64_t kvgpu_lookup(kvgpu_ctx *ctx, const char *key)
{
	if (!ctx)
		return KVGPU_ERR_INVAL;
	long klen = check_key(key);
	if (klen < 0)
		return klen;
	return ctx->impl->lookup(std::string_view(key, size_t(klen)));
}

int kvgpu_remove(kvgpu_ctx *ctx, const char *key)
{
	if (!ctx)
		return KVGPU_ERR_INVAL;
	long klen = check_key(key);
	if (klen < 0)
		return static_cast<int>(klen);
	return ctx->impl->remove(std::string_view(key, size_t(klen)));
}

int kvgpu_contains(kvgpu_ctx *ctx, const char *key)
{
	if (!ctx)
		return KVGPU_ERR_INVAL;
	long klen = check_key(key);
	if (klen < 0)
		return static_cast<int>(klen);
	return ctx->impl->contains(std::string_view(key, size_t(klen)));
}

int64_t kvgpu_load_batch(kvgpu_ctx *ctx, size_t n, const char *const *keys, void *const *dsts,
			 const size_t *sizes, int64_t *results, void *stream)
{
	if (!ctx || (n > 0 && (!keys || !dsts || !sizes || !results)))
		return KVGPU_ERR_INVAL;
	return ctx->impl->load_batch(n, keys, dsts, sizes, results, stream);
}

int kvgpu_batch_wait(kvgpu_ctx *ctx, int64_t batch)
{
	if (!ctx)
		return KVGPU_ERR_INVAL;
	return ctx->impl->batch_wait(batch);
}

int kvgpu_batch_poll(kvgpu_ctx *ctx, int64_t batch)
{
	if (!ctx)
		return KVGPU_ERR_INVAL;
	return ctx->impl->batch_poll(batch);
}

int kvgpu_prefetch(kvgpu_ctx *ctx, size_t n, const char *const *keys)
{
	if (!ctx || (n > 0 && !keys))
		return KVGPU_ERR_INVAL;
	return ctx->impl->prefetch(n, keys);
}

int kvgpu_stats(kvgpu_ctx *ctx, kvgpu_stats_t *out)
{
	if (!ctx || !out)
		return KVGPU_ERR_INVAL;
	ctx->impl->stats(out);
	return 0;
}

const char *kvgpu_strerror(int code)
{
	switch (code) {
	case KVGPU_OK: return "success";
	case KVGPU_ERR_INVAL: return "invalid argument (a null pointer or a bad option)";
	case KVGPU_ERR_KEY: return "bad key: use 1 to 1024 bytes";
	case KVGPU_ERR_SIZE:
		return "bad size: 0 bytes, or the destination is smaller than the chunk (ask kvgpu_lookup)";
	case KVGPU_ERR_LIFETIME: return "bad lifetime: use 0 (NOT_SET) to 5 (EXTREME)";
	case KVGPU_ERR_NOT_FOUND: return "no chunk under this key";
	case KVGPU_ERR_NO_SPACE:
		return "the filesystem is full: remove chunks or use a larger directory";
	case KVGPU_ERR_IO: return "I/O error on a chunk file (see kvgpu_stats.last_errno)";
	case KVGPU_ERR_CORRUPT: return "corrupt chunk file (bad header or short): remove it";
	case KVGPU_ERR_CHECKSUM:
		return "chunk checksum mismatch: the data on disk is damaged; remove it";
	case KVGPU_ERR_NOMEM:
		return "out of memory for the staging ring: lower slots or slot_bytes";
	case KVGPU_ERR_CUDA: return "a CUDA runtime call failed";
	case KVGPU_ERR_NO_DEVICE:
		return "no usable CUDA device: use engine KVGPU_ENGINE_HOST or AUTO";
	case KVGPU_ERR_NOT_BUILT:
		return "libkvgpu was built without CUDA: rebuild with nvcc, or use the host engine";
	case KVGPU_ERR_TICKET: return "unknown ticket";
	case KVGPU_ERR_EXPIRED:
		return "the ticket's result was recycled: wait within max_jobs evicts";
	case KVGPU_ERR_DIRECT: return "the filesystem refuses O_DIRECT: use direct_io AUTO or OFF";
	case KVGPU_ERR_DIR: return "the directory is missing, not a directory, or not writable";
	case KVGPU_ERR_URING:
		return "io_uring setup failed (kernel too old, or io_uring disabled?)";
	case KVGPU_ERR_PERM: return "permission denied on a chunk file";
	case KVGPU_ERR_CAPACITY:
		return "capacity too small: capacity_bytes must hold at least one chunk file (4096 + roundup(bytes, 4096))";
	case KVGPU_ERR_BUSY:
		return "the store is open in another context or process: one context per store directory";
	case KVGPU_ERR_INDEX:
		return "the store's index was corrupt: it was rebuilt from the chunk headers (nothing lost but damaged chunks)";
	default: return "unknown kvgpu error code";
	}
}

int kvgpu_has_cuda(void)
{
	return kvfdp::gpu::cuda_device_count() == KVGPU_ERR_NOT_BUILT ? 0 : 1;
}

}  // extern "C"
