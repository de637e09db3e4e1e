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
print("python binding ok")
