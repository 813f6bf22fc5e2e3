"""Issue 25 (branch sn27b): the d32 Supernode's and depthwise Supernode's steady runs kept in
the node (supernode_fast.py, dwise_d32._run_fast) are never used once what they depend on
changes: a filter, bias or range Const replaced, another input range, another input shape.
A node that kept its runs gives, byte for byte (the whole d32 memory, padding included),
what the same node gives with only its range state and none of its kept set-up."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Session
from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, Shared
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor
from support.d32_tensors import d32_with_random_padding
from support.supernode_graphs import d32_snode_chain

SN = "Supernode_8x8p32to8_d32"
DW = "DepthwiseSupernode_8x8p32to8_d32"
KEPT = {SN: "hvx_fast", DW: "dwise_fast"}


def _f(v: float) -> Tensor:
    """Read-only, as a graph's Consts are (the nodes keep their set-up only for those)."""
    return Tensor.from_array(np.array([v], np.float32)).readonly()


def _consts(rng: np.random.Generator, op: str, c: int, k: int, seed_out: bool) -> list[Tensor]:
    """filter, x_min, x_max, f_min, f_max, stride, bias, b_min, b_max, out_low, out_high (the
    input range placeholders filled by the caller)."""
    shape = (3, 3, c, 1) if op == DW else (int(rng.integers(1, 4)), 1, c, k)
    n = c if op == DW else k
    filt = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8).readonly()
    bias = Tensor.from_array(rng.integers(-3000, 3000, (1, 1, 1, n)).astype(np.int32),
                             DType.QINT32).readonly()
    out = (-np.inf, np.inf) if seed_out else (float(rng.uniform(-8.0, -0.1)),
                                               float(rng.uniform(0.5, 30.0)))
    return [filt, _f(0.0), _f(1.0), _f(float(rng.uniform(-2.0, -0.01))),
            _f(float(rng.uniform(0.01, 2.0))), Tensor.shape_only((1, 1, 1, 1)), bias,
            _f(-(2.0 ** 20)), _f(2.0 ** 20), _f(out[0]), _f(out[1])]


def _bytes(outputs: tuple[Tensor, ...]) -> tuple:
    y, lo, hi = outputs
    return (y.shape, tuple(y.padding), np.asarray(y.raw)[:y.nbytes].tobytes(),
            np.asarray(lo.raw).tobytes(), np.asarray(hi.raw).tobytes())


def _bare(state: dict[str, object]) -> dict[str, object]:
    """The node's range state alone: none of its kept set-up (the Shared entries)."""
    return {k: copy.copy(v) for k, v in state.items() if not isinstance(v, Shared)}


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from([SN, DW]), c=st.integers(1, 40), k=st.integers(1, 40),
       h=st.integers(2, 7), w=st.integers(1, 9), seed_out=st.booleans(),
       edit=st.sampled_from(["filter", "bias", "f_min", "f_max", "b_max", "out_high",
                             "x_max", "shape", "fill", "none"]),
       seed=st.integers(0, 10**6))
def test_a_kept_run_is_never_used_after_what_it_depends_on_changes(op, c, k, h, w, seed_out,
                                                                   edit, seed):
    rng = np.random.default_rng(seed)
    kernel = REGISTRY.get(op).kernel
    pad = D32Padding(4, 4, 4, ((-w) & 3) + 4 * int(rng.integers(0, 2)), 0, (-c) & 31)
    x = d32_with_random_padding(rng, (1, h, w, c), pad)
    ins = _consts(rng, op, c, k, seed_out)
    ins[1], ins[2] = _f(float(rng.uniform(-1.0, 0.0))), _f(float(rng.uniform(0.5, 4.0)))
    ctx = KernelContext(1, op, padding=Padding.SAME)
    for _ in range(3):      # the range settles, the run is kept
        kernel(ctx, x, *ins)
    index = {"filter": 0, "x_max": 2, "f_min": 3, "f_max": 4, "bias": 6, "b_max": 8,
             "out_high": 10}
    if edit in index:
        i = index[edit]
        if edit == "filter":
            ins[0] = Tensor.from_array(rng.integers(0, 256, ins[0].shape, dtype=np.uint8),
                                       DType.QUINT8).readonly()
        elif edit == "bias":
            ins[6] = Tensor.from_array(rng.integers(-3000, 3000, ins[6].shape).astype(np.int32),
                                       DType.QINT32).readonly()
        else:
            ins[i] = _f(float(ins[i].array.reshape(-1)[0]) * float(rng.uniform(0.5, 1.5)))
    elif edit == "shape":
        x = d32_with_random_padding(rng, (1, h + 1, w, c), pad)
    elif edit == "fill":
        ctx.padding_fill = 0x3C
    fresh = KernelContext(1, op, padding=Padding.SAME, padding_fill=ctx.padding_fill,
                          state=_bare(ctx.state))
    assert _bytes(kernel(ctx, x, *ins)) == _bytes(kernel(fresh, x, *ins))
    assert _bare(ctx.state).keys() == _bare(fresh.state).keys()
    for key, value in _bare(fresh.state).items():
        assert vars(value) == vars(ctx.state[key]) if hasattr(value, "__dict__") \
            else value == ctx.state[key]


def test_a_session_run_after_a_const_edit_is_a_fresh_sessions():
    # (the session's run after an edit starts from the state the last run started with,
    # the edited nodes' included: their kept runs are found again and must not serve)
    rng = np.random.default_rng(7)
    g = d32_snode_chain(rng)
    x = rng.integers(0, 256, (1, 6, 7, 8), dtype=np.uint8)
    s = Session(g)
    for _ in range(3):
        s.execute([x])
    assert all(KEPT[s.prepared.nodes[n].op] in s.executor.states[n] for n in (0x31, 0x32))
    for nid, data in ((0x21, rng.integers(0, 256, (1, 1, 8, 24), dtype=np.uint8)),
                      (0x24, rng.integers(-900, 900, (1, 1, 1, 24)).astype(np.int32)),
                      (0x14, np.array([0.75], np.float32)),
                      (0x17, np.array([-(2.0 ** 19)], np.float32))):
        g.set_const(nid, data)
        s.execute([x])
        fresh = Session(g)
        fresh.execute([x])
        for n in (0x31, 0x32):
            assert _bytes(s.executor.trace[n].outputs) == _bytes(fresh.executor.trace[n].outputs)
