"""Requantize_8to8_d32 and the d32 add/subtract's normal mode in one compiled pass over the d32
memory (kernels/d32_elementwise.py) against the numpy paths they replace
(``HEXSCOPE_KERNELS=numpy``: the unpack, the lane arithmetic or ``addsub_codes``, the pack),
byte for byte over the whole output memory: random padding bytes, widths, depths that are
not multiples of 32, paddings (depth-before included), each HVX requantization path, and the
add's stateful runs (range tracking, the re-run, a changed input range)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.d32.requantize import lane_steps
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.d32_elementwise import addsub_d32_pass
from hexscope.engine.quant import adjust_range
from hexscope.engine.tensor import Tensor
from support.kernel_paths import numpy_paths

f32 = np.float32
pytestmark = pytest.mark.skipif(not compiled.enabled(), reason="compiled kernels off")


def _random_d32(rng: np.random.Generator, shape: tuple[int, int, int, int],
                d_before: int | None = None) -> Tensor:
    """A d32 tensor whose whole memory is random bytes (padding included), with random
    padding: 0-4 rows, 0-7 columns before, depth-before padding half the time and an extra
    padding-only slice one time in four."""
    wb = int(rng.integers(0, 8))
    db = (int(rng.integers(0, 32)) if rng.random() < 0.5 else 0) if d_before is None \
        else d_before
    da = (-(db + shape[3])) % 32 + (32 if rng.random() < 0.25 else 0)
    pad = D32Padding(int(rng.integers(0, 5)), int(rng.integers(0, 5)), wb,
                     (-(wb + shape[2])) % 4 + 4 * int(rng.integers(0, 2)), db, da)
    g = D32Geometry(shape, pad)
    raw = rng.integers(0, 256, g.elements, dtype=np.uint8)
    return Tensor(shape, DType.QUINT8, raw, Layout.D32, pad)


def _bytes(t: Tensor) -> tuple:
    return t.shape, t.layout, tuple(t.padding), np.asarray(t.raw)[:t.nbytes].tobytes()


# --- Requantize_8to8_d32 ------------------------------------------------------------------------
def _requantize(x: Tensor, ranges, ctx: KernelContext | None = None):
    ctx = ctx or KernelContext(node_id=0x20, op="Requantize_8to8_d32", padding_fill=0x5A)
    kernel = REGISTRY.get("Requantize_8to8_d32").kernel
    try:
        return [_bytes(t) for t in kernel(ctx, x, *(Tensor.scalar(v) for v in ranges))]
    except KernelError as exc:
        return str(exc)


#: gains for each path of nn_requantize_qu8_to_qu8_hvx: CLOSE_ENUF(gain, 1) (exactly 1 and
#: just inside 2^-14), gain > 1 (shifts 15 down to 0: up to just under 2^15), gain < 1, and
#: negative gains (a reversed input range: odd lanes by memory offset multiply by -1)
_GAINS = st.sampled_from([1.0, 1.00003, 1.0002, 1.7, 3.0, 250.0, 20000.0, 0.3, 0.999, 0.01,
                          -0.5, -1.0, -3.0])


@settings(max_examples=80, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 11),
                       st.integers(1, 70)),
       seed=st.integers(0, 2**32 - 1), gain=_GAINS,
       out_range=st.tuples(st.floats(-20, 0), st.floats(0.01, 20)))
def test_requantize_pass_equals_the_numpy_path(shape, seed, gain, out_range):
    rng = np.random.default_rng(seed)
    x = _random_d32(rng, shape)
    lo, hi = (float(f32(v)) for v in adjust_range(f32(out_range[0]), f32(out_range[1])))
    x_range = (lo * gain, hi * gain) if gain > 0 else (hi * -gain, lo * -gain)
    ranges = (*x_range, lo, hi)
    with numpy_paths():
        want = _requantize(x, ranges)
    assert _requantize(x, ranges) == want
    # the node keeps its pass: a second run, then another range, on the same context
    ctx = KernelContext(node_id=0x20, op="Requantize_8to8_d32", padding_fill=0x5A)
    for r in (ranges, ranges, (x_range[0], x_range[1] * 1.5, lo, hi)):
        with numpy_paths():
            want = _requantize(x, r)
        assert _requantize(x, r, ctx) == want
        kept = ctx.state.get("d32_requantize")
        # the compiled pass ran (its step checked on the 256 codes at both lane parities),
        # unless the range was refused before
        assert isinstance(want, str) or kept.value is not None


def test_the_gains_reach_each_lane_path():
    # (in_off, mul_even, mul_odd, add, shift, out_off) of lane_steps for the test's gains
    assert lane_steps(f32(1.00003), 3, 5)[1:5] == (1, 1, 0, 0)           # close to 1
    assert lane_steps(f32(3.0), 3, 5)[4] == 13                          # gain > 1: 0.75 * 2^2
    assert lane_steps(f32(20000.0), 3, 5)[3:5] == (0, 0)                # shift 0: no round
    assert lane_steps(f32(0.3), 3, 5)[1] == lane_steps(f32(0.3), 3, 5)[2]   # gain < 1
    assert lane_steps(f32(-0.5), 3, 5)[1:3] == (-32768, -2)             # odd lanes x -1


# --- QuantizedAdd_8p8to8_d32 / QuantizedSub_8p8to8_d32, normal mode -----------------------------
def _addsub(name: str, ctx: KernelContext, x: Tensor, y: Tensor, ranges):
    kernel = REGISTRY.get(name).kernel
    try:
        out = kernel(ctx, x, y, *(Tensor.scalar(v) for v in ranges))
    except KernelError as exc:
        return str(exc), list(ctx.warnings)
    return [_bytes(t) for t in out], list(ctx.warnings)


@settings(max_examples=80, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 11),
                       st.integers(1, 70)),
       seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["QuantizedAdd_8p8to8_d32",
                                                              "QuantizedSub_8p8to8_d32"]),
       same_d_before=st.booleans(),
       ranges=st.lists(st.tuples(st.floats(-30, 0), st.floats(0.01, 30), st.floats(-30, 0),
                                 st.floats(0.01, 30)), min_size=1, max_size=3),
       fixed=st.sampled_from([(), (-np.inf, np.inf), (-8.0,), (-np.inf, 6.0)]))
def test_addsub_pass_equals_the_numpy_path(shape, seed, name, same_d_before, ranges, fixed):
    """Stateful runs on one node: each run's output memory, range and warnings equal the
    numpy path's (the span tracked over the data only, the re-run after an overflow, the
    rescale when an input range moves); inputs with different paddings."""
    rng = np.random.default_rng(seed)
    db = 0 if same_d_before else None
    x, y = _random_d32(rng, shape, db), _random_d32(rng, shape, db)
    contexts = [KernelContext(node_id=0x30, op=name, padding_fill=f) for f in (0xA5, 0xA5)]
    for r in ranges:
        args = (*r, *fixed)
        with numpy_paths():
            want = _addsub(name, contexts[0], x, y, args)
        assert _addsub(name, contexts[1], x, y, args) == want


def test_a_broadcast_keeps_the_numpy_path_and_its_bytes():
    rng = np.random.default_rng(5)
    x, y = _random_d32(rng, (1, 3, 5, 40)), _random_d32(rng, (1, 3, 1, 40))
    name = "QuantizedAdd_8p8to8_d32"
    ctx_new, ctx_old = (KernelContext(node_id=0x31, op=name) for _ in range(2))
    with numpy_paths():
        want = _addsub(name, ctx_old, x, y, (-1.0, 2.0, -3.0, 1.0))
    assert _addsub(name, ctx_new, x, y, (-1.0, 2.0, -3.0, 1.0)) == want


# --- the d32 add's runs in int32 lanes (addsub_d32's addsub_span) -------------------------------
def _addsub_reference(a: Tensor, b: Tensor, a_scale: int, b_scale: int, offset: int, rsh: int,
                      fill: int) -> tuple[bytes, int, int]:
    """§13.5's normal mode on the logical values in int64, packed into the output's d32
    memory (a's height and width padding, no depth-before padding) with the fill."""
    t = (a.array.astype(np.int64) * a_scale + b.array.astype(np.int64) * b_scale) >> 8
    v = np.clip(t + offset, -32768, 32767)
    codes = np.clip((v + ((1 << rsh) >> 1)) >> rsh, 0, 255).astype(np.uint8)
    p = a.padding
    nd32 = (a.shape[3] + 31) // 32
    pad = D32Padding(p.h_before, p.h_after, p.w_before, p.w_after, 0, nd32 * 32 - a.shape[3])
    out = Tensor.from_array(codes, DType.QUINT8).to_d32(pad, fill=fill)
    return np.asarray(out.raw)[:out.nbytes].tobytes(), int(t.min()), int(t.max())


@settings(max_examples=80, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 4), st.integers(1, 9),
                       st.integers(1, 70)),
       seed=st.integers(0, 2**32 - 1),
       scales=st.tuples(st.integers(-40000, 40000), st.integers(-40000, 40000)),
       wide=st.booleans(), offset=st.integers(-40000, 40000), rsh=st.integers(0, 9),
       fill=st.integers(0, 255))
def test_the_add_pass_in_int32_lanes_gives_the_int64_steps(shape, seed, scales, wide, offset,
                                                            rsh, fill):
    """No depth-before padding (the runs the int32 lanes take); scales past 2^22 (``wide``)
    keep the int64 loop: both give the reference's memory and t's extremes, on a new memory
    (filled whole) and on the one given out again (its fill kept, ``whole`` 0)."""
    rng = np.random.default_rng(seed)
    a_scale, b_scale = (s * 300 for s in scales) if wide else scales

    a, b = _random_d32(rng, shape, d_before=0), _random_d32(rng, shape, d_before=0)
    pa = a.padding
    out = D32Geometry(shape, D32Padding(pa.h_before, pa.h_after, pa.w_before, pa.w_after, 0,
                                        (shape[3] + 31) // 32 * 32 - shape[3]))
    run = addsub_d32_pass(a.geometry, b.geometry, out, fill)
    assert run is not None
    for _ in range(2):
        want = _addsub_reference(a, b, a_scale, b_scale, offset, rsh, fill)
        raw, lo, hi = run(a.raw, b.raw, a_scale, b_scale, offset, rsh)
        assert (np.asarray(raw).tobytes(), lo, hi) == want
        # dropped, so the next run is given this memory again; new operand bytes there
        del raw
        a = Tensor(shape, DType.QUINT8, rng.integers(0, 256, a.geometry.elements, dtype=np.uint8),
                   Layout.D32, a.padding)
        b = Tensor(shape, DType.QUINT8, rng.integers(0, 256, b.geometry.elements, dtype=np.uint8),
                   Layout.D32, b.padding)


# --- the d32 add/sub's steady runs (both output ends fixed) --------------------------------------
def _frozen_scalar(v: float) -> Tensor:
    # a buffer of its own, frozen (a Const's): Tensor.scalar's is a view of a writable array
    return Tensor.from_array(np.array([v], np.float32)).readonly()


@settings(max_examples=50, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 4), st.integers(1, 9),
                       st.integers(1, 70)),
       seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["QuantizedAdd_8p8to8_d32",
                                                              "QuantizedSub_8p8to8_d32"]),
       ends=st.tuples(st.floats(-30, -0.5), st.floats(0.5, 30)),
       ranges=st.tuples(st.floats(-8, 0), st.floats(0.1, 8), st.floats(-8, 0),
                        st.floats(0.1, 8)),
       fill=st.sampled_from([0x00, 0xA5]))
def test_a_steady_run_gives_the_general_paths_bytes(shape, seed, name, ends, ranges, fill):
    """One node's runs: the same inputs again (the kept steady entry serves them), new data
    of the same geometry, the range tensors remade with the same values, another padding;
    each run's outputs are a fresh node's (the general path's), and the kept entry is the
    one made by the first run while its key holds."""
    rng = np.random.default_rng(seed)
    x, y = _random_d32(rng, shape, 0), _random_d32(rng, shape, 0)
    tensors = tuple(map(_frozen_scalar, (*ranges, *ends)))
    ctx = KernelContext(node_id=0x40, op=name, padding_fill=fill)

    def fresh(a: Tensor, b: Tensor, args: tuple[Tensor, ...]):
        return _run_on(name, KernelContext(node_id=0x40, op=name, padding_fill=fill), a, b,
                       args)

    first = _run_on(name, ctx, x, y, tensors)
    assert first == fresh(x, y, tensors)
    if isinstance(first, str):
        return                          # refused ("scaling failed"): nothing kept
    kept = ctx.state["d32_steady"]
    assert _run_on(name, ctx, x, y, tensors) == first
    assert ctx.state["d32_steady"] is kept          # served by the steady entry
    x2 = Tensor(x.shape, DType.QUINT8, rng.integers(0, 256, x.raw.size, dtype=np.uint8),
                Layout.D32, x.padding)
    assert _run_on(name, ctx, x2, y, tensors) == fresh(x2, y, tensors)
    assert ctx.state["d32_steady"] is kept
    remade = tuple(map(_frozen_scalar, (*ranges, *ends)))
    assert _run_on(name, ctx, x2, y, remade) == fresh(x2, y, remade)
    assert ctx.state["d32_steady"] is not kept      # new range tensors: the general path
    x3 = _random_d32(rng, shape, 0)
    assert _run_on(name, ctx, x3, y, remade) == fresh(x3, y, remade)


def _run_on(name: str, ctx: KernelContext, x: Tensor, y: Tensor, args: tuple[Tensor, ...]):
    kernel = REGISTRY.get(name).kernel
    try:
        return [_bytes(t) for t in kernel(ctx, x, y, *args)], list(ctx.warnings)
    except KernelError as exc:
        return str(exc)
