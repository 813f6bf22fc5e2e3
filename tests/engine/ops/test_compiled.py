"""The compiled elementwise kernels (engine/ops/kernels/compiled_defs.py) against the numpy paths
they replace, on the read-only tensors the executor hands them and on writable ones, plus
the span the bias add notes for the requantize after it. The op tests themselves run on
both paths (the ``kernels`` fixture)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.matmul import quantized_biasadd_8p8to32
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.code_bounds import known
from hexscope.engine.ops.quant.requantize import path_a
from hexscope.engine.tensor import Tensor

pytestmark = pytest.mark.skipif(compiled.kernel("supernode_epilogue") is None,
                                reason="the compiled kernels do not load on this machine")


def _numpy(fn, *args):  # type: ignore[no-untyped-def]
    os.environ["HEXSCOPE_KERNELS"] = "numpy"
    try:
        return fn(*args)
    finally:
        del os.environ["HEXSCOPE_KERNELS"]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1024, 2**31 - 1), st.integers(-2**31, 2**31 - 1),
       st.booleans())
def test_path_a_compiled_equals_numpy_on_read_only_codes(seed, gi, oi, frozen):
    codes = np.random.default_rng(seed).integers(-2**31, 2**31, 300, dtype=np.int64)
    codes = codes.astype(np.int32)
    codes[:3] = [oi, -2**31, 2**31 - 1]
    codes = _frozen(codes) if frozen else codes
    want = _numpy(path_a, codes, gi, oi)
    assert path_a(codes, gi, oi).tolist() == want.tolist()


def _bias_args(rng: np.random.Generator, d: int, ranges: tuple[float, ...], frozen: bool):
    x = rng.integers(0, 256, (1, 3, 5, d), dtype=np.uint8)
    b = rng.integers(0, 256, (1, 1, 1, d), dtype=np.uint8)
    x = _frozen(x) if frozen else x
    return (Tensor.from_array(x, DType.QUINT8), Tensor.from_array(b, DType.QUINT8),
            *(Tensor.scalar(np.float32(v)) for v in ranges))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.booleans(),
       st.sampled_from([(-1.0, 1.0, -0.25, 0.25), (0.0, 6.0, -3.0, 0.5),
                        (-1e30, 1e30, -1.0, 1.0), (0.0, 0.0, 0.0, 0.0),
                        (-np.inf, 1.0, 0.0, 1.0)]))
def test_bias_add_compiled_equals_numpy_and_notes_its_span(seed, d, frozen, ranges):
    rng = np.random.default_rng(seed)
    args = _bias_args(rng, d, ranges, frozen)
    ctx_c, ctx_n = (KernelContext(0x20, "QuantizedBiasAdd_8p8to32") for _ in range(2))
    got = quantized_biasadd_8p8to32(ctx_c, *args)
    want = _numpy(quantized_biasadd_8p8to32, ctx_n, *args)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g.array).tobytes() == np.asarray(w.array).tobytes()
    assert ctx_c.warnings == ctx_n.warnings
    y = got[0]
    y.raw.flags.writeable = False            # as the executor freezes it
    assert known(y.raw) == (int(y.array.min()), int(y.array.max()))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.tuples(st.integers(1, 2), st.integers(1, 13),
                                            st.integers(1, 13), st.integers(1, 5)),
       st.integers(1, 13), st.integers(1, 13), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from(["SAME", "VALID"]), st.booleans(), st.booleans(), st.booleans())
def test_pools_compiled_equal_numpy(seed, shape, fh, fw, sh, sw, pad, average, frozen, full):
    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.pooling.pool import quantized_avg_pool_8, quantized_max_pool_8

    rng = np.random.default_rng(seed)
    x = np.full(shape, 255, np.uint8) if full else rng.integers(0, 256, shape, np.uint8)
    x = _frozen(x) if frozen else x
    fn = quantized_avg_pool_8 if average else quantized_max_pool_8
    args = (Tensor.from_array(x, DType.QUINT8), Tensor.scalar(np.float32(-1.0)),
            Tensor.scalar(np.float32(1.0)), Tensor.shape_only((1, fh, fw, 1)),
            Tensor.shape_only((1, sh, sw, 1)))
    ctx = KernelContext(0x10, "pool", padding=Padding.parse(pad))
    got = fn(ctx, *args)
    want = _numpy(fn, ctx, *args)
    assert np.asarray(got[0]).tobytes() == np.asarray(want[0]).tobytes()
    assert np.asarray(got[0]).shape == np.asarray(want[0]).shape


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.tuples(st.integers(1, 9),
                                                     st.floats(-8.0, 0.0, width=32),
                                                     st.floats(0.0625, 8.0, width=32)),
                                           min_size=1, max_size=4), st.booleans())
def test_concat_compiled_equals_numpy(seed, parts, frozen):
    from hexscope.engine.ops.shape.concat import quantized_concat_8

    rng = np.random.default_rng(seed)
    xs = [rng.integers(0, 256, (1, 3, 2, d), np.uint8) for d, _, _ in parts]
    xs = [_frozen(x) if frozen else x for x in xs]
    args = (Tensor.from_array(np.array([3], np.int32), DType.INT32),
            *(Tensor.from_array(x, DType.QUINT8) for x in xs),
            *(Tensor.scalar(np.float32(lo)) for _, lo, _ in parts),
            *(Tensor.scalar(np.float32(hi)) for _, _, hi in parts))
    ctx = KernelContext(0x10, "QuantizedConcat_8")
    got = quantized_concat_8(ctx, *args)
    want = _numpy(quantized_concat_8, ctx, *args)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(-8.0, 0.0, width=32),
       st.floats(0.0625, 8.0, width=32), st.floats(-9.0, 9.0, width=32), st.booleans())
def test_relus_compiled_equal_numpy(seed, lo, hi, cap, frozen):
    from hexscope.engine.ops.elementwise.activation import quantized_relu_8, quantized_relux_8

    x = np.random.default_rng(seed).integers(0, 256, (1, 4, 5, 7), np.uint8)
    x = _frozen(x) if frozen else x
    args = (Tensor.from_array(x, DType.QUINT8), Tensor.scalar(np.float32(lo)),
            Tensor.scalar(np.float32(hi)))
    for fn, extra in ((quantized_relu_8, ()), (quantized_relux_8,
                                               (Tensor.scalar(np.float32(cap)),))):
        ctx = KernelContext(0x10, "relu")
        got = fn(ctx, *args, *extra)
        want = _numpy(fn, ctx, *args, *extra)
        assert np.asarray(got[0]).tobytes() == np.asarray(want[0]).tobytes()


def test_without_numba_the_numpy_paths_run(monkeypatch):
    """numba missing (or failing to compile) means None for every kernel, so the ops take
    their numpy paths, and the results stay the same."""
    import sys

    from hexscope.engine.ops.elementwise.activation import quantized_relu_8

    x = Tensor.from_array(np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4), DType.QUINT8)
    args = (x, Tensor.scalar(np.float32(-1.0)), Tensor.scalar(np.float32(1.0)))
    want = quantized_relu_8(KernelContext(0x10, "relu"), *args)[0]
    monkeypatch.setattr(compiled, "_KERNELS", {})
    monkeypatch.setattr(compiled, "_FAILED", set())
    import hexscope.engine.ops.kernels as kernels_package

    monkeypatch.delitem(sys.modules, "hexscope.engine.ops.kernels.compiled_defs", raising=False)
    monkeypatch.delattr(kernels_package, "compiled_defs", raising=False)
    monkeypatch.setitem(sys.modules, "numba", None)          # import numba fails
    assert compiled.kernel("clamp_codes") is None
    assert compiled.kernel("clamp_codes") is None           # remembered, not retried
    got = quantized_relu_8(KernelContext(0x10, "relu"), *args)[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@settings(max_examples=60, deadline=None)
@given(st.floats(-1e4, 1e4, width=32), st.floats(2.0 ** -20, 2e4, width=32), st.booleans())
def test_the_float_references_read_quint8_codes_with_numpy_s_bits(lo, span, frozen):
    # reference.real: f32(q) * f32((max - min) / 255), rounded, then + f32(min), rounded
    # (spec §1.1's min + q (max - min) / 255 in float32 steps); compiled and numpy the same
    from hexscope.engine.ops.reference import real

    codes = np.arange(256, dtype=np.uint8).reshape(1, 4, 8, 8)
    codes = _frozen(codes) if frozen else codes
    t = Tensor.from_array(codes, DType.QUINT8)
    mn, mx = Tensor.scalar(np.float32(lo)), Tensor.scalar(np.float32(lo + span))
    got = real(t, mn, mx)
    want = _numpy(real, t, mn, mx)
    lo32, hi32 = float(np.float32(lo)), float(np.float32(lo + span))
    by_hand = (codes.astype(np.float32) * np.float32((hi32 - lo32) / 255.0)) + np.float32(lo32)
    assert got.dtype == want.dtype == np.float32
    assert got.tobytes() == want.tobytes() == by_hand.tobytes()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 700), st.booleans(), st.booleans())
def test_add_and_mul_compiled_equal_numpy_on_any_mix_of_read_only_inputs(seed, n, ro_a, ro_b):
    # QuantizedAdd_8p8to8's flat path and QuantizedMul_8x8to8's general case (§15, §12)
    # with a read-only input beside a writable one (the executor freezes outputs; a Const
    # may be either)
    from hexscope.engine.ops.elementwise.arith import quantized_add_8p8to8, quantized_mul_8x8to8

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (1, 1, 1, n), dtype=np.uint8)
    b = rng.integers(0, 256, (1, 1, 1, n), dtype=np.uint8)
    a, b = (_frozen(x) if ro else x for x, ro in ((a, ro_a), (b, ro_b)))
    lo_a, lo_b = (float(v) for v in rng.uniform(-8, 0, 2))
    span_a, span_b = (float(v) for v in rng.uniform(0.1, 16, 2))
    args = (Tensor.from_array(a, DType.QUINT8), Tensor.from_array(b, DType.QUINT8),
            *(Tensor.scalar(np.float32(v)) for v in (lo_a, lo_a + span_a, lo_b,
                                                     lo_b + span_b)))
    for kernel in (quantized_add_8p8to8, quantized_mul_8x8to8):
        def run(kernel=kernel):  # type: ignore[no-untyped-def]
            ctx = KernelContext(0x70, kernel.__name__)
            out = []
            for _ in range(2):                 # the add's range carries over (§1.9)
                y, lo, hi = kernel(ctx, *args)
                out.append((np.asarray(y).tobytes(), float(np.asarray(lo).reshape(-1)[0]),
                            float(np.asarray(hi).reshape(-1)[0])))
            return out
        assert run() == _numpy(run)


def _awkward_floats(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float32 values with the cases whose bits a compiled loop could get wrong: signed
    zeros, NaN, infinities, ties."""
    x = rng.normal(0.0, 2.0, shape).astype(np.float32)
    picks = rng.integers(0, 8, shape)
    for k, v in enumerate((0.0, -0.0, np.nan, np.inf, -np.inf, 1.5)):
        x[picks == k] = v if rng.random() < 0.5 else x[picks == k]
    return x


def _same_floats(got: np.ndarray, want: np.ndarray) -> bool:
    """The same values bit for bit, zero signs and infinities included, NaN where numpy has
    NaN (a NaN's sign and payload follow whichever operand the CPU returned, which the
    compiler may commute: no metric reads them)."""
    nan = np.isnan(want)
    return (got.dtype == want.dtype and got.shape == want.shape
            and np.array_equal(np.isnan(got), nan)
            and got[~nan].tobytes() == want[~nan].tobytes())


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.tuples(st.integers(1, 2), st.integers(1, 9),
                                            st.integers(1, 9), st.integers(1, 5)),
       st.integers(1, 5), st.integers(1, 5), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from(["SAME", "VALID"]), st.booleans(), st.booleans())
def test_pool_references_compiled_equal_numpy(seed, shape, fh, fw, sh, sw, pad, average,
                                              frozen):
    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.pooling.pool import _pool_reference

    x = _awkward_floats(np.random.default_rng(seed), shape)
    x = _frozen(x) if frozen else x
    ctx = KernelContext(0x10, "pool", padding=Padding.parse(pad))
    args = (ctx, x, Tensor.shape_only((1, fh, fw, 1)), Tensor.shape_only((1, sh, sw, 1)),
            average)
    with np.errstate(all="ignore"):     # inf - inf in the numpy path's sums: NaN, as wanted
        got = _pool_reference(*args)
        want = _numpy(_pool_reference, *args)
    assert got.dtype == want.dtype == np.float32
    assert _same_floats(got, want)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(-1e4, 1e4, width=32),
       st.floats(2.0 ** -20, 2e4, width=32), st.booleans(), st.booleans())
def test_relu_reference_compiled_equals_numpy(seed, lo, span, floats, frozen):
    # quint8 codes (the isolated analysis) and float32 values (the float run), whose
    # NaN, infinities and -0.0 must come out as numpy's maximum makes them
    from hexscope.engine.ops.elementwise.activation import relu_reference

    rng = np.random.default_rng(seed)
    if floats:
        x = Tensor.from_array(_awkward_floats(rng, (1, 3, 5, 7)), DType.FLOAT32)
    else:
        codes = rng.integers(0, 256, (1, 3, 5, 7), np.uint8)
        x = Tensor.from_array(_frozen(codes) if frozen else codes, DType.QUINT8)
    mn, mx = Tensor.scalar(np.float32(lo)), Tensor.scalar(np.float32(lo + span))
    ctx = KernelContext(0x10, "QuantizedRelu_8")
    got = relu_reference(ctx, x, mn, mx)
    want = _numpy(relu_reference, ctx, x, mn, mx)
    for g, w in zip(got, want, strict=True):
        assert _same_floats(g, w)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9),
       st.sampled_from([-np.inf, 0.0, -0.0, -1.0, np.nan]),
       st.sampled_from([np.inf, 0.0, 6.0, 0.5, np.nan]), st.booleans())
def test_supernode_epilogue_reference_compiled_equals_numpy(seed, c, lo, hi, frozen):
    # y + bias, then max with the output range's low end and min with its high end:
    # NaN, infinities and signed zeros in y and the bias come out as numpy makes them
    from hexscope.engine.ops.kernels import compiled_defs

    rng = np.random.default_rng(seed)
    y = _awkward_floats(rng, (13, c))
    bias = _awkward_floats(rng, (c,))
    y, bias = (_frozen(y), _frozen(bias)) if frozen else (y, bias)
    with np.errstate(all="ignore"):     # inf + -inf: NaN, as wanted
        want = y + bias
        if np.isfinite(lo):
            want = np.maximum(want, lo)
        if np.isfinite(hi):
            want = np.minimum(want, hi)
    got = np.empty_like(want)
    compiled_defs.bias_clamp_f32(y, bias, np.float32(lo if np.isfinite(lo) else -np.inf),
                                  np.float32(hi if np.isfinite(hi) else np.inf), got)
    assert _same_floats(got, want)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(0.0, np.inf), (0.0, 6.0),
                                                    (-np.inf, np.inf), (-2.0, 0.5)]))
def test_supernode_reference_compiled_equals_numpy(seed, out_range):
    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.supernode import supernode_reference

    rng = np.random.default_rng(seed)

    def q(shape):  # type: ignore[no-untyped-def]
        return Tensor.from_array(rng.integers(0, 256, shape, np.uint8), DType.QUINT8)

    def f(v):  # type: ignore[no-untyped-def]
        return Tensor.scalar(np.float32(v))

    args = (q((1, 5, 6, 3)), q((3, 3, 3, 4)), f(-1.0), f(2.0), f(-0.5), f(0.25),
            Tensor.shape_only((1, 1, 1, 1)), q((1, 1, 1, 4)), f(-3.0), f(1.0),
            f(out_range[0]), f(out_range[1]))
    ctx = KernelContext(0x10, "Supernode_8x8p8to8", padding=Padding.parse("SAME"))
    got = supernode_reference(ctx, *args)
    want = _numpy(supernode_reference, ctx, *args)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


def test_compile_once_builds_once_and_says_none_when_off_or_failing(monkeypatch):
    calls: list[int] = []

    def build():
        calls.append(1)
        return "kernels"

    get = compiled.compile_once(build)
    monkeypatch.delenv("HEXSCOPE_KERNELS", raising=False)
    assert get() == "kernels" and get() == "kernels" and calls == [1]
    monkeypatch.setenv("HEXSCOPE_KERNELS", "numpy")
    assert get() is None                     # turned off: the numpy paths run

    def broken():
        raise ImportError("no numba")

    monkeypatch.delenv("HEXSCOPE_KERNELS")
    failing = compiled.compile_once(broken)
    assert failing() is None and failing() is None
