"""The ctypes binding and the connector example against the built libkvgpu.so (KVGPU_LIB)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(HERE, "..", "..", "kvgpu", "python")
sys.path.insert(0, PY)
import kvgpu  # noqa: E402

with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
    with kvgpu.Store(d, engine=1) as s:
        for n in (1, 4095, 4096, 4097, (1 << 20) + 3):
            data = os.urandom(n)
            s.put(data, "py-%d" % n, kvgpu.LONG)
            assert s.get("py-%d" % n) == data, n
        buf = bytearray(10)
        try:
            s.load_into("py-4096", buf)
            raise SystemExit("FAIL: small buffer accepted")
        except kvgpu.KvgpuError as e:
            assert e.code == -3, e
        assert s.get("missing") is None
        assert s.remove("py-1") and not s.exists("py-1")
        try:
            s.put(b"", "empty")
            raise SystemExit("FAIL: size 0 accepted")
        except kvgpu.KvgpuError as e:
            assert e.code == -3, e
        st = s.stats()
        assert st["evicts"] == 5 and st["loads"] == 5, st
    out = subprocess.run([sys.executable, os.path.join(PY, "lmcache_connector_example.py"), d],
                         check=True, capture_output=True, text=True).stdout
    assert "connector example ok" in out, out
    print(out.strip())

# The bounded store through Python: capacity, contains, prefetch, batched get, stats.
with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
    try:
        kvgpu.Store(d, engine=1, capacity_bytes=4096)
        raise SystemExit("FAIL: a capacity below one chunk accepted")
    except kvgpu.KvgpuError as e:
        assert e.code == kvgpu.ERR_CAPACITY and "capacity" in str(e), e
    with kvgpu.Store(d, engine=1, capacity_bytes=4 * 8192, evict_policy="fifo") as s:
        data = {"b%d" % i: os.urandom(4000 + i) for i in range(6)}
        for k, v in data.items():
            s.put(v, k)
        cap, used, n = s.capacity()
        assert (cap, used, n) == (4 * 8192, 4 * 8192, 4), (cap, used, n)
        assert not s.contains("b0") and not s.contains("b1") and s.contains("b5")
        assert s.prefetch(["b2", "b3", "nope"]) == 2
        assert s.get_many(["b2", "b3", "b0", "b5"]) == [data["b2"], data["b3"], None, data["b5"]]
        st = s.stats()
        assert st["prefetch_hits"] == 2 and st["evictions"] == 2 and st["batches"] == 1, st
    with kvgpu.Store(d, engine=1, capacity_bytes=4 * 8192) as s:  # reopened: the index is back
        assert s.capacity()[2] == 4 and s.get("b4") == data["b4"]

# The connector replaying the head of the Mooncake trace: store, evict and load with every
# chunk's checksum verified; it fails when the store's hits differ from a plain queue model.
TRACE = os.path.join(HERE, "..", "..", "model", "workload", "data", "mooncake-conversation.jsonl.gz")
with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
    out = subprocess.run([sys.executable, os.path.join(PY, "lmcache_connector_example.py"), d,
                          "--replay", TRACE, "--requests", "300", "--capacity-chunks", "600",
                          "--evict", "fifo,lru,fifo2"], check=True, capture_output=True, text=True).stdout
    assert out.count("over_capacity 0") == 3, out
    print(out.strip())
print("python binding ok")
