"""Output memories given out again once nothing refers to them (kernels/spare_memory.py): the
kept runs of Requantize_8to8_d32, the d32 Supernode and the depthwise Supernode write only
the codes into such a memory, its fill bytes being those the pass wrote before. A run on a
reused memory gives the numpy paths' bytes (the whole memory, padding included), and an
earlier output someone still holds never changes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Session
from hexscope.engine.d32 import D32Padding
from hexscope.engine.ops.context import KernelContext, Shared
from hexscope.engine.ops.kernels.spare_memory import SpareMemories
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.quant import adjust_range
from hexscope.engine.tensor import Tensor
from support.d32_tensors import d32_with_random_padding
from support.kernel_paths import numpy_paths
from support.supernode_graphs import d32_snode_chain


def _address(t: Tensor) -> int:
    return int(np.asarray(t.raw).__array_interface__["data"][0])


def _memory(t: Tensor) -> bytes:
    return np.asarray(t.raw).tobytes()


def _at(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def test_spare_memories_gives_a_memory_only_when_nothing_refers_to_it():
    spare = SpareMemories(keep=2)
    assert spare.take() is None
    for _ in range(3):                          # the third is not held
        spare.keep(np.zeros(64, np.uint8))
    view = spare.take()[8:]                     # a view of the first keeps it
    at_first = _at(view) - 8
    second = spare.take()
    assert second is not None and _at(second) != at_first
    exported = memoryview(second.reshape(8, 8))  # a buffer of a view of the second
    del second
    assert spare.take() is None
    del view
    assert _at(spare.take()) == at_first
    del exported
    assert spare.take() is not None


def test_a_session_reusing_its_memories_gives_a_fresh_sessions_bytes_and_keeps_old_ones():
    rng = np.random.default_rng(11)
    g = d32_snode_chain(rng)
    xs = [rng.integers(0, 256, (1, 6, 7, 8), dtype=np.uint8) for _ in range(3)]
    s = Session(g)
    for k in range(3):                          # the range settles, the runs are kept
        s.execute([xs[k % 2]])
    assert all(isinstance(s.executor.states[n].get(key), Shared)
               for n, key in ((0x31, "hvx_fast"), (0x32, "dwise_fast")))
    held = {n: r.outputs[0] for n, r in s.executor.trace.items() if r.outputs}
    kept = {n: _memory(t) for n, t in held.items()}
    addresses = {}
    for k in range(6):                          # held memories stay; the others come back
        x = xs[k % 3]
        s.execute([x])
        with numpy_paths():
            fresh = Session(g)
            fresh.execute([x])
        for n in (0x31, 0x32):
            assert _memory(s.executor.trace[n].outputs[0]) == \
                _memory(fresh.executor.trace[n].outputs[0])
            addresses.setdefault(n, set()).add(_address(s.executor.trace[n].outputs[0]))
    assert {n: _memory(t) for n, t in held.items()} == kept
    # the six runs after the held one came back to their memories, not a new one each
    # (the Supernode's general path, when its range check sends a run there, makes its own)
    assert all(len(a) <= 2 for a in addresses.values()), addresses


@settings(max_examples=40, deadline=None)
@given(shape=st.tuples(st.just(1), st.integers(1, 5), st.integers(1, 11), st.integers(1, 70)),
       seed=st.integers(0, 2**32 - 1), fill=st.integers(0, 255),
       gain=st.sampled_from([1.0, 3.0, 0.3, -0.5]))
def test_a_requantize_on_a_reused_memory_gives_a_fresh_runs_bytes(shape, seed, fill, gain):
    rng = np.random.default_rng(seed)
    wb = int(rng.integers(0, 8))
    pad = D32Padding(4, 4, wb, (-(wb + shape[2])) % 4 + 4, 0, (-shape[3]) % 32)
    xs = [d32_with_random_padding(rng, shape, pad) for _ in range(3)]
    lo, hi = (float(v) for v in adjust_range(np.float32(-1.0), np.float32(2.0)))
    x_range = (lo * gain, hi * gain) if gain > 0 else (hi * -gain, lo * -gain)
    ranges = [Tensor.from_array(np.array([v], np.float32)).readonly()
              for v in (*x_range, lo, hi)]
    kernel = REGISTRY.get("Requantize_8to8_d32").kernel
    ctx = KernelContext(0x20, "Requantize_8to8_d32", padding_fill=fill)
    first = kernel(ctx, xs[0], *ranges)[0]
    before = _memory(first)
    at = None
    for k in range(5):
        x = xs[k % 3]
        y = kernel(ctx, x, *ranges)[0]
        with numpy_paths():
            fresh = kernel(KernelContext(0x20, "Requantize_8to8_d32", padding_fill=fill),
                           x, *ranges)[0]
        assert _memory(y) == _memory(fresh)
        at = at or _address(y)
        assert _address(y) == at                # the same memory each time it is free
        del y
    assert _memory(first) == before


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 9),
                       st.integers(1, 70)),
       seed=st.integers(0, 2**32 - 1), fill=st.integers(0, 255))
def test_a_convert_to_d32_on_a_reused_memory_gives_a_fresh_runs_bytes(shape, seed, fill):
    # depths of whole 8-byte words and of single bytes (the packer's two forms)
    rng = np.random.default_rng(seed)
    xs = [Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8)).readonly()
          for _ in range(3)]
    kernel = REGISTRY.get("Convert_to_d32").kernel
    ctx = KernelContext(0x21, "Convert_to_d32", padding_fill=fill)
    first = kernel(ctx, xs[0])[0]
    before = _memory(first)
    at = None
    for k in range(5):
        x = xs[k % 3]
        y = kernel(ctx, x)[0]
        with numpy_paths():
            fresh = kernel(KernelContext(0x21, "Convert_to_d32", padding_fill=fill), x)[0]
        assert _memory(y) == _memory(fresh)
        if k:               # the second call keeps the packer; its memories come back
            at = at or _address(y)
            assert _address(y) == at
        del y
    assert _memory(first) == before
