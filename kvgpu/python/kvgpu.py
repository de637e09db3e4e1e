"""ctypes binding of libkvgpu (no pip): evict KV chunks into lifetime-tagged files, load them back."""
import ctypes
import os

NOT_SET, NONE, SHORT, MEDIUM, LONG, EXTREME = range(6)
EVICT_FIFO, EVICT_LRU, EVICT_FIFO2 = range(3)
EVICT = {"fifo": EVICT_FIFO, "lru": EVICT_LRU, "fifo2": EVICT_FIFO2}
ERR_NOT_FOUND = -5
ERR_TICKET = -14
ERR_EXPIRED = -15
ERR_CAPACITY = -20


class KvgpuError(OSError):
    def __init__(self, code, what):
        super().__init__(code, "%s: %s" % (what, _lib().kvgpu_strerror(code).decode()))
        self.code = code


class Options(ctypes.Structure):
    _fields_ = [(n, t) for n, t in [
        ("struct_size", ctypes.c_uint32), ("engine", ctypes.c_uint32), ("cuda_device", ctypes.c_int32),
        ("slot_bytes", ctypes.c_uint32), ("slots", ctypes.c_uint32), ("queue_depth", ctypes.c_uint32),
        ("max_jobs", ctypes.c_uint32), ("durability", ctypes.c_uint32), ("checksum", ctypes.c_uint32),
        ("direct_io", ctypes.c_uint32), ("capacity_bytes", ctypes.c_uint64),
        ("evict_policy", ctypes.c_uint32), ("reinsert_hits", ctypes.c_uint32),
        ("prefetch_slots", ctypes.c_uint32), ("reclaim", ctypes.c_uint32)]]


class Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "evicts", "evict_bytes", "evict_errors", "loads", "load_bytes", "load_errors", "removes",
        "checksum_failures", "direct_files", "buffered_files", "hint_failures", "writes", "reads",
        "max_io_in_flight", "max_copies_in_flight", "stale_temps_removed")] + [
        (n, ctypes.c_int32) for n in ("direct_io", "engine", "last_errno", "reserved")] + [
        (n, ctypes.c_uint64) for n in (
            "capacity_bytes", "used_bytes", "chunks", "evictions", "evicted_bytes", "reinserts",
            "reinserted_bytes", "hits", "misses", "dropped", "adopted", "index_records",
            "index_rebuilds", "open_ns", "batches", "prefetches", "prefetch_hits")] + [
        (n, ctypes.c_int32) for n in ("index_error", "reserved1")]


_LIB = None


def _lib():
    """Loads libkvgpu.so from $KVGPU_LIB, else the build tree's lib/, else the loader path."""
    global _LIB
    if _LIB is None:
        path = os.environ.get("KVGPU_LIB") or "libkvgpu.so"
        lib = ctypes.CDLL(path)
        vp, sz, i64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64
        lib.kvgpu_options_init.argtypes = [ctypes.POINTER(Options)]
        lib.kvgpu_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(Options), ctypes.POINTER(vp)]
        lib.kvgpu_close.argtypes = [vp]
        lib.kvgpu_evict.argtypes = [vp, vp, sz, ctypes.c_char_p, ctypes.c_int, vp]
        lib.kvgpu_evict.restype = i64
        lib.kvgpu_wait.argtypes = [vp, i64]
        lib.kvgpu_load.argtypes = [vp, ctypes.c_char_p, vp, sz, vp]
        lib.kvgpu_load.restype = i64
        lib.kvgpu_lookup.argtypes = [vp, ctypes.c_char_p]
        lib.kvgpu_lookup.restype = i64
        lib.kvgpu_remove.argtypes = [vp, ctypes.c_char_p]
        lib.kvgpu_stats.argtypes = [vp, ctypes.POINTER(Stats)]
        lib.kvgpu_contains.argtypes = [vp, ctypes.c_char_p]
        ptrs = ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(vp)
        lib.kvgpu_load_batch.argtypes = [vp, sz, ptrs[0], ptrs[1], ctypes.POINTER(sz),
                                         ctypes.POINTER(i64), vp]
        lib.kvgpu_load_batch.restype = i64
        lib.kvgpu_batch_wait.argtypes = [vp, i64]
        lib.kvgpu_batch_poll.argtypes = [vp, i64]
        lib.kvgpu_prefetch.argtypes = [vp, sz, ptrs[0]]
        lib.kvgpu_strerror.argtypes = [ctypes.c_int]
        lib.kvgpu_strerror.restype = ctypes.c_char_p
        _LIB = lib
    return _LIB


def _key(key):
    return key.encode() if isinstance(key, str) else bytes(key)


class Store:
    """A libkvgpu context on a directory. Buffers are bytes-like objects or (pointer, size) pairs
    (e.g. (tensor.data_ptr(), tensor.nbytes) on the CUDA engine); stream is a cudaStream_t as int."""

    def __init__(self, directory, **options):
        """options: kvgpu_options fields as keywords; capacity_bytes > 0 makes a bounded store,
        evict_policy may be "fifo", "lru" or "fifo2" (or the EVICT_ number)."""
        lib = _lib()
        opts = Options()
        lib.kvgpu_options_init(ctypes.byref(opts))
        for k, v in options.items():
            if k == "evict_policy" and isinstance(v, str):
                v = EVICT[v]
            setattr(opts, k, v)
        self._ctx = ctypes.c_void_p()
        rc = lib.kvgpu_open(os.fsencode(directory), ctypes.byref(opts), ctypes.byref(self._ctx))
        if rc != 0:
            raise KvgpuError(rc, "kvgpu_open %s" % directory)
        self._pinned = {}  # ticket -> buffer kept alive until wait

    def close(self):
        if self._ctx:
            rc = _lib().kvgpu_close(self._ctx)
            self._ctx = None
            self._pinned.clear()
            if rc != 0:
                raise KvgpuError(rc, "kvgpu_close")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @staticmethod
    def _ptr(buf, writable):
        if isinstance(buf, tuple):
            return ctypes.c_void_p(buf[0]), buf[1], None
        if isinstance(buf, bytes) and not writable:
            holder = ctypes.c_char_p(buf)
            return ctypes.cast(holder, ctypes.c_void_p), len(buf), (buf, holder)
        c = (ctypes.c_char * len(memoryview(buf).cast("B"))).from_buffer(buf)
        return ctypes.cast(c, ctypes.c_void_p), len(c), c

    def evict(self, buf, key, lifetime=SHORT, stream=0):
        """Starts an evict; returns a ticket for wait(). buf is kept alive until then."""
        ptr, n, keep = self._ptr(buf, False)
        t = _lib().kvgpu_evict(self._ctx, ptr, n, _key(key), lifetime, ctypes.c_void_p(stream or None))
        if t < 0:
            raise KvgpuError(int(t), "kvgpu_evict %r" % (key,))
        self._pinned[t] = keep
        return t

    def wait(self, ticket=0):
        rc = _lib().kvgpu_wait(self._ctx, ticket)
        if ticket:
            self._pinned.pop(ticket, None)
        else:
            self._pinned.clear()
        if rc != 0:
            raise KvgpuError(rc, "kvgpu_wait %d" % ticket)

    def put(self, buf, key, lifetime=SHORT, stream=0):
        self.wait(self.evict(buf, key, lifetime, stream))

    def load_into(self, key, buf, stream=0):
        """Loads into a writable buffer; returns the chunk length."""
        ptr, n, _keep = self._ptr(buf, True)
        r = _lib().kvgpu_load(self._ctx, _key(key), ptr, n, ctypes.c_void_p(stream or None))
        if r < 0:
            raise KvgpuError(int(r), "kvgpu_load %r" % (key,))
        return r

    def get(self, key):
        """The chunk under key as bytes, or None when there is none."""
        n = self.size(key)
        if n is None:
            return None
        out = bytearray(n)
        self.load_into(key, out)
        return bytes(out)

    def size(self, key):
        r = _lib().kvgpu_lookup(self._ctx, _key(key))
        if r == ERR_NOT_FOUND:
            return None
        if r < 0:
            raise KvgpuError(int(r), "kvgpu_lookup %r" % (key,))
        return r

    def exists(self, key):
        return self.size(key) is not None

    def contains(self, key):
        """True when a chunk is stored under key (a bounded store answers from its index, no I/O)."""
        rc = _lib().kvgpu_contains(self._ctx, _key(key))
        if rc < 0:
            raise KvgpuError(rc, "kvgpu_contains %r" % (key,))
        return rc == 1

    def load_batch(self, keys, bufs, stream=0):
        """Starts loading keys[i] into the writable bufs[i] together; returns a Batch whose
        wait() gives each chunk's length or its negative kvgpu error (one per key)."""
        n = len(keys)
        karr = (ctypes.c_char_p * n)(*[_key(k) for k in keys])
        ptrs = [self._ptr(b, True) for b in bufs]
        darr = (ctypes.c_void_p * n)(*[p[0].value for p in ptrs])
        sarr = (ctypes.c_size_t * n)(*[p[1] for p in ptrs])
        res = (ctypes.c_int64 * n)()
        t = _lib().kvgpu_load_batch(self._ctx, n, karr, darr, sarr, res, ctypes.c_void_p(stream or None))
        if t < 0:
            raise KvgpuError(int(t), "kvgpu_load_batch")
        return Batch(self, t, (karr, darr, sarr, res, ptrs))

    def get_many(self, keys):
        """The chunks under keys as a list of bytes (None where absent or damaged), loaded as one batch."""
        sizes = [self.size(k) for k in keys]
        bufs = [bytearray(n or 1) for n in sizes]
        results = self.load_batch(keys, bufs).wait()
        return [bytes(b[:r]) if n is not None and r >= 0 else None
                for b, n, r in zip(bufs, sizes, results)]

    def prefetch(self, keys):
        """Stages chunks in pinned buffers ahead of their load; returns how many are staged."""
        n = len(keys)
        karr = (ctypes.c_char_p * n)(*[_key(k) for k in keys])
        rc = _lib().kvgpu_prefetch(self._ctx, n, karr)
        if rc < 0:
            raise KvgpuError(rc, "kvgpu_prefetch")
        return rc

    def capacity(self):
        """(capacity_bytes, used_bytes, chunks) of a bounded store; capacity 0 when unbounded."""
        st = self.stats()
        return st["capacity_bytes"], st["used_bytes"], st["chunks"]

    def remove(self, key):
        rc = _lib().kvgpu_remove(self._ctx, _key(key))
        if rc == ERR_NOT_FOUND:
            return False
        if rc != 0:
            raise KvgpuError(rc, "kvgpu_remove %r" % (key,))
        return True

    def stats(self):
        s = Stats()
        _lib().kvgpu_stats(self._ctx, ctypes.byref(s))
        return {name: getattr(s, name) for name, _ in Stats._fields_ if not name.startswith("reserved")}


class Batch:
    """A kvgpu_load_batch in flight; keeps its arrays and buffers alive until wait()."""

    def __init__(self, store, ticket, keep):
        self.store, self.ticket, self._keep = store, ticket, keep

    def poll(self):
        rc = _lib().kvgpu_batch_poll(self.store._ctx, self.ticket)
        if rc < 0:
            raise KvgpuError(rc, "kvgpu_batch_poll")
        return rc == 1

    def wait(self):
        """Per key: the chunk's length, or its negative kvgpu error code."""
        rc = _lib().kvgpu_batch_wait(self.store._ctx, self.ticket)
        if rc in (ERR_TICKET, ERR_EXPIRED):  # about the batch itself, not one of its chunks
            raise KvgpuError(rc, "kvgpu_batch_wait")
        results = list(self._keep[3])
        self._keep = None
        return results
