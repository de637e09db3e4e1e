/* libkvgpu C API: evict GPU (or host) KV blocks into lifetime-tagged chunk files, load them back. */
#ifndef KVGPU_H
#define KVGPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KVGPU_API __attribute__((visibility("default")))
#else
#define KVGPU_API
#endif

/* Lifetimes are the RWH values of fcntl(F_SET_RW_HINT); the file gets the hint before its first write. */
enum kvgpu_lifetime {
	KVGPU_LIFETIME_NOT_SET = 0,
	KVGPU_LIFETIME_NONE = 1,
	KVGPU_LIFETIME_SHORT = 2,
	KVGPU_LIFETIME_MEDIUM = 3,
	KVGPU_LIFETIME_LONG = 4,
	KVGPU_LIFETIME_EXTREME = 5,
};

/* Error codes: every call returns 0 (or a positive value) on success, one of these on failure. */
enum kvgpu_error {
	KVGPU_OK = 0,
	KVGPU_ERR_INVAL = -1,     /* a null pointer or a bad option */
	KVGPU_ERR_KEY = -2,       /* empty key or longer than KVGPU_MAX_KEY */
	KVGPU_ERR_SIZE = -3,      /* size 0, or the destination is smaller than the chunk */
	KVGPU_ERR_LIFETIME = -4,  /* lifetime outside 0..5 */
	KVGPU_ERR_NOT_FOUND = -5, /* no chunk under this key */
	KVGPU_ERR_NO_SPACE = -6,  /* the filesystem is full (ENOSPC / EDQUOT) */
	KVGPU_ERR_IO = -7, /* a read, write, fsync or rename failed; see kvgpu_stats.last_errno */
	KVGPU_ERR_CORRUPT = -8,    /* the chunk file has a bad header or is short */
	KVGPU_ERR_CHECKSUM = -9,   /* the payload does not match its stored CRC32C */
	KVGPU_ERR_NOMEM = -10,     /* staging memory could not be allocated */
	KVGPU_ERR_CUDA = -11,      /* a CUDA runtime call failed */
	KVGPU_ERR_NO_DEVICE = -12, /* the CUDA engine was asked for but there is no usable GPU */
	KVGPU_ERR_NOT_BUILT =
		-13, /* the CUDA engine was asked for but libkvgpu was built without CUDA */
	KVGPU_ERR_TICKET = -14, /* a ticket this context never issued */
	KVGPU_ERR_EXPIRED =
		-15, /* the ticket's result was recycled: wait within max_jobs tickets */
	KVGPU_ERR_DIRECT =
		-16, /* direct_io = KVGPU_DIRECT_ON but the filesystem refuses O_DIRECT */
	KVGPU_ERR_DIR =
		-17, /* the directory does not exist, is not a directory, or is not writable */
	KVGPU_ERR_URING = -18, /* io_uring could not be set up */
	KVGPU_ERR_PERM = -19,  /* permission denied on a chunk file */
	KVGPU_ERR_CAPACITY =
		-20, /* capacity_bytes below one chunk, or a chunk larger than the capacity */
	KVGPU_ERR_BUSY = -21,  /* another context (this or another process) has the store open */
	KVGPU_ERR_INDEX = -22, /* (kvgpu_stats.index_error) the index was corrupt and was rebuilt */
};

/* Longest key in bytes. Keys are arbitrary bytes except NUL; the file name is derived safely. */
#define KVGPU_MAX_KEY 1024

enum kvgpu_engine {
	KVGPU_ENGINE_AUTO = 0, /* CUDA when built with it and a GPU is present, else host */
	KVGPU_ENGINE_HOST =
		1, /* host memory stands in for device memory (memcpy on a copy thread) */
	KVGPU_ENGINE_CUDA =
		2, /* cudaMemcpyAsync on a dedicated stream; src/dst may be device or host */
};

enum kvgpu_durability {
	KVGPU_DURABLE_NONE =
		0, /* rename only: atomic, survives a process crash, not a power loss */
	KVGPU_DURABLE_FSYNC = 1, /* fsync the file before rename and the directory after it */
};

enum kvgpu_direct {
	KVGPU_DIRECT_AUTO = 0, /* O_DIRECT, buffered where the filesystem refuses it (tmpfs) */
	KVGPU_DIRECT_ON = 1,   /* O_DIRECT or fail with KVGPU_ERR_DIRECT */
	KVGPU_DIRECT_OFF = 2,  /* always buffered */
};

/* Eviction order of a bounded store (capacity_bytes > 0). */
enum kvgpu_evict_policy {
	KVGPU_EVICT_FIFO =
		0, /* write order: the oldest chunk goes first (default: flash-friendly) */
	KVGPU_EVICT_LRU = 1,   /* least recently loaded first */
	KVGPU_EVICT_FIFO2 = 2, /* write order with a second chance: a chunk loaded >= reinsert_hits
				  times since it was written is rewritten in place (new age) instead */
};

/* Who unlinks the chunks a bounded store evicts. */
enum kvgpu_reclaim {
	KVGPU_RECLAIM_BACKGROUND = 0, /* renamed away in the put, unlinked by the store's reclaimer
					 thread (default); the disk may hold capacity/8 + one chunk
					 file more than capacity_bytes until it catches up */
	KVGPU_RECLAIM_INLINE = 1, /* unlinked by the put that evicts it, in the caller's thread */
};

/* Options for kvgpu_open. Fill with kvgpu_options_init, then change what you need. */
typedef struct kvgpu_options {
	uint32_t struct_size; /* sizeof(kvgpu_options); set by kvgpu_options_init */
	uint32_t engine;      /* enum kvgpu_engine */
	int32_t cuda_device;  /* CUDA device ordinal for the CUDA engine */
	uint32_t slot_bytes;  /* bytes per staging slot, a multiple of 4096 (default 4 MiB) */
	uint32_t slots;       /* staging slots (default 8); slots * slot_bytes is pinned */
	uint32_t queue_depth; /* io_uring entries (default 64, at least slots + 8) */
	uint32_t
		max_jobs; /* evicts + loads in flight; also how long a ticket's result is kept (default 64) */
	uint32_t durability; /* enum kvgpu_durability (default NONE) */
	uint32_t checksum;  /* 1: store a CRC32C of the payload and verify it on load (default 1) */
	uint32_t direct_io; /* enum kvgpu_direct (default AUTO) */
	/* Bounded store (0 = unbounded: no index, no eviction). The bytes of chunk files on disk
	 * (4096 + roundup(n, 4096) per chunk) never exceed it; evicts make room by policy. */
	uint64_t capacity_bytes;
	uint32_t evict_policy;  /* enum kvgpu_evict_policy (default FIFO) */
	uint32_t reinsert_hits; /* FIFO2: loads that earn a second chance (default 1) */
	uint32_t
		prefetch_slots; /* slot_bytes buffers that kvgpu_prefetch stages into (default 8; max 1024) */
	uint32_t reclaim; /* enum kvgpu_reclaim (default BACKGROUND) */
} kvgpu_options;

/* Counters since kvgpu_open; a snapshot, summed when read by kvgpu_stats(). */
typedef struct kvgpu_stats_s {
	uint64_t evicts;      /* evicts completed successfully */
	uint64_t evict_bytes; /* payload bytes of those */
	uint64_t evict_errors;
	uint64_t loads; /* loads completed successfully */
	uint64_t load_bytes;
	uint64_t load_errors;
	uint64_t removes;
	uint64_t checksum_failures;
	uint64_t direct_files;         /* chunk files written or read with O_DIRECT */
	uint64_t buffered_files;       /* chunk files that fell back to buffered I/O */
	uint64_t hint_failures;        /* F_SET_RW_HINT refused (the write still happens) */
	uint64_t writes;               /* io_uring writes completed */
	uint64_t reads;                /* io_uring reads completed */
	uint64_t max_io_in_flight;     /* most io_uring ops in flight at once (overlap evidence) */
	uint64_t max_copies_in_flight; /* most staging copies in flight at once */
	uint64_t stale_temps_removed;  /* temp files of dead processes removed at open */
	int32_t direct_io;             /* 1 if the directory accepted O_DIRECT at open, 0 if not */
	int32_t engine;     /* the engine in use: KVGPU_ENGINE_HOST or KVGPU_ENGINE_CUDA */
	int32_t last_errno; /* errno of the most recent KVGPU_ERR_IO / NO_SPACE, or 0 */
	int32_t reserved;
	/* Bounded store (zeros when capacity_bytes is 0). */
	uint64_t capacity_bytes; /* the store's capacity */
	uint64_t used_bytes;     /* bytes of chunk files in the index (+ evicts in flight) */
	uint64_t chunks;         /* chunks in the index */
	uint64_t evictions;      /* chunks unlinked to make room */
	uint64_t evicted_bytes;
	uint64_t reinserts; /* FIFO2 second chances (chunks rewritten in place) */
	uint64_t reinserted_bytes;
	uint64_t hits;    /* loads (and batch members) that found their key */
	uint64_t misses;  /* loads that did not (KVGPU_ERR_NOT_FOUND) */
	uint64_t dropped; /* chunks dropped from the index: missing, corrupt or bad checksum */
	uint64_t adopted; /* complete chunk files found at open that the index lacked */
	uint64_t index_records;  /* records in the index journal now */
	uint64_t index_rebuilds; /* index rebuilt from chunk headers (missing or corrupt journal) */
	uint64_t open_ns;        /* how long kvgpu_open took (index replay included) */
	uint64_t batches;        /* kvgpu_load_batch calls */
	uint64_t prefetches;     /* chunks staged by kvgpu_prefetch */
	uint64_t prefetch_hits;  /* loads served from a staged chunk (no read) */
	int32_t index_error;     /* KVGPU_ERR_INDEX when the journal was corrupt at open, else 0 */
	int32_t reserved1;
} kvgpu_stats_t;

typedef struct kvgpu_ctx kvgpu_ctx;

/* Fills *opts with the defaults. */
KVGPU_API void kvgpu_options_init(kvgpu_options *opts);

/* Opens a store on the directory dir (must exist). opts may be NULL (defaults).
 * Removes temp files left by dead processes. On success *out is set and 0 returned. */
KVGPU_API int kvgpu_open(const char *dir, const kvgpu_options *opts, kvgpu_ctx **out);

/* Finishes every evict in flight, then frees the context. NULL is ignored. Returns 0 or the
 * last error of an evict nobody waited for. */
KVGPU_API int kvgpu_close(kvgpu_ctx *ctx);

/* Starts writing bytes at src (device memory on the CUDA engine, or any host memory) under key
 * with a lifetime (enum kvgpu_lifetime). stream is a cudaStream_t (NULL = legacy default):
 * the copy starts after the work queued on it so far; the host engine ignores it.
 * src must stay valid and unchanged until kvgpu_wait on the ticket returns.
 * Returns a ticket (> 0) or an error. The chunk becomes visible under key only when complete;
 * an earlier chunk under the same key is replaced atomically. */
KVGPU_API int64_t kvgpu_evict(kvgpu_ctx *ctx, const void *src, size_t bytes, const char *key,
			      int lifetime, void *stream);

/* Waits for the evict with this ticket; returns 0 or its error. ticket 0 waits for every
 * evict issued so far and returns 0 or the last error among those not yet waited for. */
KVGPU_API int kvgpu_wait(kvgpu_ctx *ctx, int64_t ticket);

/* Reads the chunk under key into dst (bytes available there; device memory on the CUDA
 * engine). Blocks until the data is in dst, then makes stream wait for nothing further.
 * Returns the chunk's length (>= 0) or an error; dst is undefined on error. */
KVGPU_API int64_t kvgpu_load(kvgpu_ctx *ctx, const char *key, void *dst, size_t bytes,
			     void *stream);

/* Returns the length of the chunk under key (>= 0), or KVGPU_ERR_NOT_FOUND / an error. */
KVGPU_API int64_t kvgpu_lookup(kvgpu_ctx *ctx, const char *key);

/* Removes the chunk under key. Does not cancel an evict of that key still in flight. */
KVGPU_API int kvgpu_remove(kvgpu_ctx *ctx, const char *key);

/* 1 if a chunk is stored under key, 0 if not, or an error. With capacity_bytes > 0 it answers
 * from the in-memory index without I/O; otherwise it looks for the file. */
KVGPU_API int kvgpu_contains(kvgpu_ctx *ctx, const char *key);

/* Starts loading n chunks at once: keys[i] into dsts[i], which has room for sizes[i] bytes.
 * Reads of the batch are in flight together (io_uring, up to queue_depth and the staging
 * ring) and the copies to dsts overlap the reads. When the batch is done results[i] holds the
 * chunk's length or its own error (a missing or damaged chunk fails only its entry).
 * keys may be freed on return; dsts and results must stay valid until kvgpu_batch_wait.
 * Returns a batch ticket (> 0) or an error (then nothing was started). */
KVGPU_API int64_t kvgpu_load_batch(kvgpu_ctx *ctx, size_t n, const char *const *keys,
				   void *const *dsts, const size_t *sizes, int64_t *results,
				   void *stream);

/* Waits for a batch; returns 0 when every entry loaded, else the first entry's error. */
KVGPU_API int kvgpu_batch_wait(kvgpu_ctx *ctx, int64_t batch);

/* 1 when the batch is done (results filled), 0 while in flight, or KVGPU_ERR_TICKET. */
KVGPU_API int kvgpu_batch_poll(kvgpu_ctx *ctx, int64_t batch);

/* Starts reading up to n chunks into the pinned prefetch buffers (prefetch_slots of
 * slot_bytes; chunks larger than slot_bytes or not found are skipped). A later kvgpu_load or
 * kvgpu_load_batch of a staged key copies from the buffer without reading the file. Returns
 * how many chunks are now staged or being staged, or an error. Never blocks on I/O. */
KVGPU_API int kvgpu_prefetch(kvgpu_ctx *ctx, size_t n, const char *const *keys);

/* Copies the counters into *out. */
KVGPU_API int kvgpu_stats(kvgpu_ctx *ctx, kvgpu_stats_t *out);

/* A short English description of an error code (never NULL). */
KVGPU_API const char *kvgpu_strerror(int code);

/* 1 if this libkvgpu was built with the CUDA engine, else 0. */
KVGPU_API int kvgpu_has_cuda(void);

#ifdef __cplusplus
}
#endif

#endif
