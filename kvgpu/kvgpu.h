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
	KVGPU_ERR_INVAL = -1,        /* a null pointer or a bad option */
	KVGPU_ERR_KEY = -2,          /* empty key or longer than KVGPU_MAX_KEY */
	KVGPU_ERR_SIZE = -3,         /* size 0, or the destination is smaller than the chunk */
	KVGPU_ERR_LIFETIME = -4,     /* lifetime outside 0..5 */
	KVGPU_ERR_NOT_FOUND = -5,    /* no chunk under this key */
	KVGPU_ERR_NO_SPACE = -6,     /* the filesystem is full (ENOSPC / EDQUOT) */
	KVGPU_ERR_IO = -7,           /* a read, write, fsync or rename failed; see kvgpu_stats.last_errno */
	KVGPU_ERR_CORRUPT = -8,      /* the chunk file has a bad header or is short */
	KVGPU_ERR_CHECKSUM = -9,     /* the payload does not match its stored CRC32C */
	KVGPU_ERR_NOMEM = -10,       /* staging memory could not be allocated */
	KVGPU_ERR_CUDA = -11,        /* a CUDA runtime call failed */
	KVGPU_ERR_NO_DEVICE = -12,   /* the CUDA engine was asked for but there is no usable GPU */
	KVGPU_ERR_NOT_BUILT = -13,   /* the CUDA engine was asked for but libkvgpu was built without CUDA */
	KVGPU_ERR_TICKET = -14,      /* a ticket this context never issued */
	KVGPU_ERR_EXPIRED = -15,     /* the ticket's result was recycled: wait within max_jobs tickets */
	KVGPU_ERR_DIRECT = -16,      /* direct_io = KVGPU_DIRECT_ON but the filesystem refuses O_DIRECT */
	KVGPU_ERR_DIR = -17,         /* the directory does not exist, is not a directory, or is not writable */
	KVGPU_ERR_URING = -18,       /* io_uring could not be set up */
	KVGPU_ERR_PERM = -19,        /* permission denied on a chunk file */
};

/* Longest key in bytes. Keys are arbitrary bytes except NUL; the file name is derived safely. */
#define KVGPU_MAX_KEY 1024

enum kvgpu_engine {
	KVGPU_ENGINE_AUTO = 0, /* CUDA when built with it and a GPU is present, else host */
	KVGPU_ENGINE_HOST = 1, /* host memory stands in for device memory (memcpy on a copy thread) */
	KVGPU_ENGINE_CUDA = 2, /* cudaMemcpyAsync on a dedicated stream; src/dst may be device or host */
};

enum kvgpu_durability {
	KVGPU_DURABLE_NONE = 0,  /* rename only: atomic, survives a process crash, not a power loss */
	KVGPU_DURABLE_FSYNC = 1, /* fsync the file before rename and the directory after it */
};

enum kvgpu_direct {
	KVGPU_DIRECT_AUTO = 0, /* O_DIRECT, buffered where the filesystem refuses it (tmpfs) */
	KVGPU_DIRECT_ON = 1,   /* O_DIRECT or fail with KVGPU_ERR_DIRECT */
	KVGPU_DIRECT_OFF = 2,  /* always buffered */
};

/* Options for kvgpu_open. Fill with kvgpu_options_init, then change what you need. */
typedef struct kvgpu_options {
	uint32_t struct_size;  /* sizeof(kvgpu_options); set by kvgpu_options_init */
	uint32_t engine;       /* enum kvgpu_engine */
	int32_t cuda_device;   /* CUDA device ordinal for the CUDA engine */
	uint32_t slot_bytes;   /* bytes per staging slot, a multiple of 4096 (default 4 MiB) */
	uint32_t slots;        /* staging slots (default 8); slots * slot_bytes is pinned */
	uint32_t queue_depth;  /* io_uring entries (default 64, at least slots + 8) */
	uint32_t max_jobs;     /* evicts + loads in flight; also how long a ticket's result is kept (default 64) */
	uint32_t durability;   /* enum kvgpu_durability (default NONE) */
	uint32_t checksum;     /* 1: store a CRC32C of the payload and verify it on load (default 1) */
	uint32_t direct_io;    /* enum kvgpu_direct (default AUTO) */
} kvgpu_options;

/* Counters since kvgpu_open; a snapshot, summed when read by kvgpu_stats(). */
typedef struct kvgpu_stats_s {
	uint64_t evicts;             /* evicts completed successfully */
	uint64_t evict_bytes;        /* payload bytes of those */
	uint64_t evict_errors;
	uint64_t loads;              /* loads completed successfully */
	uint64_t load_bytes;
	uint64_t load_errors;
	uint64_t removes;
	uint64_t checksum_failures;
	uint64_t direct_files;       /* chunk files written or read with O_DIRECT */
	uint64_t buffered_files;     /* chunk files that fell back to buffered I/O */
	uint64_t hint_failures;      /* F_SET_RW_HINT refused (the write still happens) */
	uint64_t writes;             /* io_uring writes completed */
	uint64_t reads;              /* io_uring reads completed */
	uint64_t max_io_in_flight;   /* most io_uring ops in flight at once (overlap evidence) */
	uint64_t max_copies_in_flight; /* most staging copies in flight at once */
	uint64_t stale_temps_removed; /* temp files of dead processes removed at open */
	int32_t direct_io;           /* 1 if the directory accepted O_DIRECT at open, 0 if not */
	int32_t engine;              /* the engine in use: KVGPU_ENGINE_HOST or KVGPU_ENGINE_CUDA */
	int32_t last_errno;          /* errno of the most recent KVGPU_ERR_IO / NO_SPACE, or 0 */
	int32_t reserved;
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
KVGPU_API int64_t kvgpu_load(kvgpu_ctx *ctx, const char *key, void *dst, size_t bytes, void *stream);

/* Returns the length of the chunk under key (>= 0), or KVGPU_ERR_NOT_FOUND / an error. */
KVGPU_API int64_t kvgpu_lookup(kvgpu_ctx *ctx, const char *key);

/* Removes the chunk under key. Does not cancel an evict of that key still in flight. */
KVGPU_API int kvgpu_remove(kvgpu_ctx *ctx, const char *key);

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
