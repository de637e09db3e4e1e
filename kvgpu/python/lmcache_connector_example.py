"""How an LMCache-style storage connector calls libkvgpu's bounded store.

A KV chunk is one 512-token slice of a layer stack; its key is the engine's chunk hash. The
connector hands libkvgpu a directory and a capacity; libkvgpu keeps the index, evicts in write
order (FIFO: every reclaimed flash unit is empty, WAF 1) and answers contains() from memory.
Each chunk's expected lifetime maps to an RWH class: shared system-prompt prefixes live long,
conversation context medium, one-off query KV short. On a GPU host pass
(tensor.data_ptr(), tensor.nbytes) and torch.cuda.current_stream().cuda_stream instead of bytes.

Run the short demo, or replay the Mooncake trace through the store (hit ratio, checksums):
  KVGPU_LIB=build/lib/libkvgpu.so python3 kvgpu/python/lmcache_connector_example.py DIR
  KVGPU_LIB=build/lib/libkvgpu.so python3 kvgpu/python/lmcache_connector_example.py DIR \\
      --replay model/workload/data/mooncake-conversation.jsonl.gz --requests 2000 \\
      --chunk-bytes 4096 --capacity-chunks 4000 --evict fifo
"""
import argparse
import collections
import gzip
import hashlib
import json
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kvgpu  # noqa: E402


class KvgpuConnector:
    """The calls an LMCache storage backend makes, on top of a bounded kvgpu.Store."""

    LIFETIME = {"prefix": kvgpu.LONG, "context": kvgpu.MEDIUM, "query": kvgpu.SHORT}

    def __init__(self, directory, capacity_bytes=0, evict_policy="fifo", **options):
        self.store = kvgpu.Store(directory, capacity_bytes=capacity_bytes,
                                 evict_policy=evict_policy, **options)
        self.inflight = {}

    def put(self, key, kv_chunk, kind="context", stream=0):
        """Non-blocking: the chunk appears under key once written (crash-safe); the store
        evicts by its policy to make room."""
        self.inflight[key] = self.store.evict(kv_chunk, key, self.LIFETIME[kind], stream)

    def flush(self):
        self.store.wait(0)
        self.inflight.clear()

    def contains(self, key):
        """From the store's index: no I/O."""
        return key in self.inflight or self.store.contains(key)

    def prefetch(self, keys):
        """Stages chunks in pinned buffers ahead of the get; returns how many."""
        return self.store.prefetch(keys)

    def get(self, key):
        t = self.inflight.pop(key, None)
        if t is not None:
            self.store.wait(t)
        return self.store.get(key)

    def get_many(self, keys):
        """One batched load: the reads are in flight together. None where a chunk is absent."""
        if any(k in self.inflight for k in keys):
            self.flush()
        return self.store.get_many(keys)

    def remove(self, key):
        return self.store.remove(key)

    def capacity(self):
        """(capacity_bytes, used_bytes, chunks)."""
        return self.store.capacity()

    def stats(self):
        return self.store.stats()

    def close(self):
        self.store.close()


def demo(directory):
    conn = KvgpuConnector(directory, capacity_bytes=1 << 20)
    chunks = {"prefix-%d" % i: os.urandom(4096 * i + 17) for i in range(1, 4)}
    chunks["query-x"] = os.urandom(1)
    for key, data in chunks.items():
        conn.put(key, data, kind=key.split("-")[0])
    conn.flush()
    assert conn.prefetch(list(chunks)) == len(chunks)
    for key, data in chunks.items():
        assert conn.contains(key), key
        assert conn.get(key) == data, key
    assert conn.get_many(list(chunks)) == list(chunks.values())
    assert conn.remove("query-x")
    assert not conn.contains("query-x") and conn.get("query-x") is None
    stats = conn.stats()
    cap, used, n = conn.capacity()
    conn.close()
    print("connector example ok: %d evicts, %d loads, %d from prefetch, %d/%d bytes in %d chunks, "
          "direct_io=%d" % (stats["evicts"], stats["loads"], stats["prefetch_hits"], used, cap, n,
                            stats["direct_io"]))


def chunk_payload(hash_id, n):
    """The bytes stored for a hash id: fixed by the id, so every load can be checked."""
    seed = hashlib.blake2b(b"%d" % hash_id, digest_size=32).digest()
    return (seed * (n // 32 + 1))[:n]


def read_trace(path, requests):
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt") as f:
        for line in f:
            out.append(json.loads(line)["hash_ids"])
            if requests and len(out) >= requests:
                break
    return out


def model_hits(trace, capacity_chunks, policy):
    """The same replay on a plain queue of chunk ids: the hits the store must reproduce."""
    q = collections.OrderedDict()  # oldest first
    hits = lookups = 0
    for ids in trace:
        found = [h for h in ids if h in q]
        lookups += len(ids)
        hits += len(found)
        for h in found:
            if policy == "lru":
                q.move_to_end(h)
            else:
                q[h] += 1
        for h in ids:
            if h in q:
                continue
            while len(q) >= capacity_chunks:
                old, n = next(iter(q.items()))
                if policy == "fifo2" and n > 0:
                    del q[old]
                    q[old] = 0  # second chance: rewritten as the newest
                else:
                    del q[old]
            q[h] = 0
    return hits, lookups


def replay(directory, trace, chunk_bytes, capacity_chunks, policy, prefetch=True):
    """Each request: contains() for every block, prefetch + one batched get of the cached ones
    (each checked against its CRC32), then a put of every miss. Returns a summary dict."""
    file_bytes = 4096 + (chunk_bytes + 4095) // 4096 * 4096
    conn = KvgpuConnector(directory, capacity_bytes=capacity_chunks * file_bytes,
                          evict_policy=policy, slot_bytes=max(65536, file_bytes))
    expect_crc = {}
    verified = over = 0
    for ids in trace:
        keys = ["mc/%d" % h for h in ids]
        cached = [k for k in keys if conn.contains(k)]
        if cached:
            if prefetch:
                conn.prefetch(cached)
            for k, data in zip(cached, conn.get_many(cached)):
                h = int(k[3:])
                if data is None or zlib.crc32(data) != expect_crc[h]:
                    raise SystemExit("FAIL: chunk %s came back %s" % (k, "missing" if data is None else "damaged"))
                verified += 1
        for k, h in zip(keys, ids):
            if conn.contains(k):
                continue  # cached (or already put by this request)
            data = chunk_payload(h, chunk_bytes)
            expect_crc[h] = zlib.crc32(data)
            conn.put(k, data, kind="prefix" if k == keys[0] else "context")
        conn.flush()
        cap, used, _ = conn.capacity()
        over += used > cap
    st = conn.stats()
    conn.close()
    return {"policy": policy, "requests": len(trace), "lookups": sum(len(t) for t in trace),
            "hits": verified, "hit_ratio": verified / max(1, sum(len(t) for t in trace)),
            "verified": verified, "puts": st["evicts"], "evictions": st["evictions"],
            "reinserts": st["reinserts"], "prefetch_hits": st["prefetch_hits"],
            "batches": st["batches"], "over_capacity": over, "checksum_failures": st["checksum_failures"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("directory")
    ap.add_argument("--replay", help="a Mooncake trace (.jsonl or .jsonl.gz) to replay through the store")
    ap.add_argument("--requests", type=int, default=2000, help="replay the first N requests (0 = all)")
    ap.add_argument("--chunk-bytes", type=int, default=4096)
    ap.add_argument("--capacity-chunks", type=int, default=4000)
    ap.add_argument("--evict", default="fifo,lru,fifo2", help="policies to replay, comma-separated")
    a = ap.parse_args()
    if not a.replay:
        demo(a.directory)
        return
    trace = read_trace(a.replay, a.requests)
    for policy in a.evict.split(","):
        sub = os.path.join(a.directory, "replay-" + policy)
        os.makedirs(sub, exist_ok=True)
        r = replay(sub, trace, a.chunk_bytes, a.capacity_chunks, policy)
        want, lookups = model_hits(trace, a.capacity_chunks, policy)
        print("replay %-5s requests %d lookups %d hits %d hit_ratio %.4f (model %.4f) puts %d "
              "evictions %d reinserts %d prefetch_hits %d checksums verified %d over_capacity %d" % (
                  policy, r["requests"], lookups, r["hits"], r["hit_ratio"], want / lookups, r["puts"],
                  r["evictions"], r["reinserts"], r["prefetch_hits"], r["verified"], r["over_capacity"]))
        if r["hits"] != want or r["over_capacity"] or r["checksum_failures"]:
            raise SystemExit("FAIL: %s: the store's hits %d differ from the model's %d, or it went "
                             "over capacity (%d) or failed a checksum" % (policy, r["hits"], want,
                                                                         r["over_capacity"]))


if __name__ == "__main__":
    main()
