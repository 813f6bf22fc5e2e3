"""The GEMM kernels' machine code kept between processes (engine/ops/kernels/object_cache.py): a
second process loads what the first compiled, a damaged file is never loaded, and the
kernels give the same sums either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hexscope.engine.ops.kernels import igemm, object_cache


def test_an_object_round_trips_and_a_damaged_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("HEXSCOPE_CACHE_DIR", str(tmp_path))
    name = object_cache.key("source", 1, (22, 1), "znver4")
    assert name != object_cache.key("source", 1, (22, 1), "skylake")
    assert object_cache.read(name) is None
    object_cache.write(name, b"\x7fELF object bytes")
    assert object_cache.read(name) == b"\x7fELF object bytes"
    path = tmp_path / name
    for damaged in (path.read_bytes()[:-1], path.read_bytes()[:-1] + b"X", b"", b"short"):
        path.write_bytes(damaged)
        assert object_cache.read(name) is None


def test_an_unwritable_directory_means_no_cache_not_an_error(tmp_path, monkeypatch):
    target = tmp_path / "file-not-dir"
    target.write_text("x")
    monkeypatch.setenv("HEXSCOPE_CACHE_DIR", str(target / "sub"))
    object_cache.write("k.o", b"abc")          # no exception
    assert object_cache.read("k.o") is None


_CHILD = """
import json, numpy as np
from hexscope.engine.ops.kernels import igemm
rng = np.random.default_rng(7)
lhs = rng.integers(-128, 128, (29, 45)).astype(np.int16)
rhs = rng.integers(-255, 256, (45, 37)).astype(np.int16)
off = rng.integers(-2**31, 2**31, 37).astype(np.int32)
out = np.empty((29, 37), np.int32)
igemm.gemm_into(out, lhs, igemm.PackedRhs.pack(rhs), off)
want = ((lhs.astype(np.int64) @ rhs + off + 2**31) % 2**32 - 2**31).astype(np.int32)
ok = bool(np.array_equal(out, want))
if igemm.available8():
    l8 = rng.integers(-128, 128, (29, 45)).astype(np.int8)
    r8 = rng.integers(0, 256, (45, 37)).astype(np.uint8)
    igemm.gemm_into(out, l8, igemm.PackedRhs.pack8(r8), off)
    want = ((l8.astype(np.int64) @ r8 + off + 2**31) % 2**32 - 2**31).astype(np.int32)
    ok = ok and bool(np.array_equal(out, want))
print(json.dumps({"cached": igemm.LOADED_FROM_CACHE, "ok": ok}))
"""


def _child(cache: str) -> dict:
    env = dict(os.environ, HEXSCOPE_CACHE_DIR=cache)
    env.pop("HEXSCOPE_GEMM", None)
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not igemm.available(), reason="the integer GEMM kernel does not run here")
def test_a_second_process_loads_the_kernels_and_a_damaged_file_is_compiled_again(tmp_path):
    assert _child(str(tmp_path)) == {"cached": [False], "ok": True}
    files = list(tmp_path.glob("kernels-*.o"))
    assert len(files) == 1
    assert _child(str(tmp_path)) == {"cached": [True], "ok": True}
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF                  # a flipped bit in the machine code
    files[0].write_bytes(bytes(data))
    assert _child(str(tmp_path)) == {"cached": [False], "ok": True}
    assert _child(str(tmp_path)) == {"cached": [True], "ok": True}   # stored whole again


@pytest.mark.skipif(not igemm.available(), reason="the integer GEMM kernel does not run here")
def test_without_the_module_source_the_kernels_still_compile(tmp_path, monkeypatch):
    """A PyInstaller bundle keeps bytecode only: __file__ names a file that is not there. The
    cache key is then taken from the IR, and the kernels compile as anywhere else."""
    monkeypatch.setattr(igemm, "__file__", str(tmp_path / "absent" / "igemm.py"))
    monkeypatch.setenv("HEXSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    igemm._kernel.cache_clear()
    try:
        assert igemm._kernel() is not None
        assert list((tmp_path / "cache").glob("kernels-*.o"))
    finally:
        igemm._kernel.cache_clear()
