"""How an LMCache-style storage connector (put/get/exists/remove of KV chunks by key) calls libkvgpu.

A KV chunk is one 256-token slice of a layer stack; its key is the engine's chunk hash. The
connector maps each chunk's expected lifetime to an RWH class: shared system-prompt prefixes
live long, conversation context medium, one-off query KV short. On a GPU host pass
(tensor.data_ptr(), tensor.nbytes) and torch.cuda.current_stream().cuda_stream instead of bytes.
Run: KVGPU_LIB=build/lib/libkvgpu.so python3 kvgpu/python/lmcache_connector_example.py DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kvgpu  # noqa: E402


class KvgpuConnector:
    """The four calls an LMCache storage backend makes, on top of kvgpu.Store."""

    LIFETIME = {"prefix": kvgpu.LONG, "context": kvgpu.MEDIUM, "query": kvgpu.SHORT}

    def __init__(self, directory, **options):
        self.store = kvgpu.Store(directory, **options)
        self.inflight = {}

    def put(self, key, kv_chunk, kind="context", stream=0):
        """Non-blocking: the chunk appears under key once written (crash-safe)."""
        self.inflight[key] = self.store.evict(kv_chunk, key, self.LIFETIME[kind], stream)

    def flush(self):
        self.store.wait(0)
        self.inflight.clear()

    def exists(self, key):
        return self.store.exists(key)

    def get(self, key):
        t = self.inflight.pop(key, None)
        if t is not None:
            self.store.wait(t)
        return self.store.get(key)

    def remove(self, key):
        return self.store.remove(key)

    def close(self):
        self.store.close()


def main(directory):
    conn = KvgpuConnector(directory)
    chunks = {"prefix-%d" % i: os.urandom(4096 * i + 17) for i in range(1, 4)}
    chunks["query-x"] = os.urandom(1)
    for key, data in chunks.items():
        conn.put(key, data, kind=key.split("-")[0])
    conn.flush()
    for key, data in chunks.items():
        assert conn.exists(key), key
        assert conn.get(key) == data, key
    assert conn.remove("query-x")
    assert not conn.exists("query-x") and conn.get("query-x") is None
    stats = conn.store.stats()
    conn.close()
    print("connector example ok: %d evicts, %d loads, direct_io=%d" %
          (stats["evicts"], stats["loads"], stats["direct_io"]))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
