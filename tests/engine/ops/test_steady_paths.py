"""Issue 25's round 4 (branch speed25d): what a node keeps of its set-up while the same
read-only Consts and inputs of the same geometry come in gives what the set-up redone at
every call gives, byte for byte; an input of another geometry rebuilds it."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.conv2d import output_window
from hexscope.engine.ops.conv.supernode_hvx import _all_sums, _plain_sums
from hexscope.engine.ops.kernels.d32_layout import unpack_d32, unpacker
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor
from support.d32_tensors import d32_with_random_padding

SN = "Supernode_8x8p32to8_d32"


def _f(v: float) -> Tensor:
    return Tensor.from_array(np.array([v], np.float32)).readonly()


_PADS = st.tuples(st.integers(0, 8), st.integers(1, 8), st.integers(0, 7), st.integers(0, 7),
                  st.sampled_from([0, 8]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(b=st.integers(1, 2), h=st.integers(1, 5), w=st.integers(1, 11),
       d=st.sampled_from([3, 8, 13, 32, 40]), cout=st.integers(1, 40), pads=_PADS,
       zx=st.integers(0, 255), zf=st.integers(0, 255), seed=st.integers(0, 999))
def test_a_kept_1x1_sums_path_equals_all_sums(b: int, h: int, w: int, d: int, cout: int,
                                              pads: tuple[int, ...], zx: int, zf: int,
                                              seed: int) -> None:
    hb, ha, wb, more, _ = pads
    # the Supernode refuses depth padding before (check_d32_padding)
    pad = D32Padding(hb, ha, wb, ((-(wb + w)) & 3) + 4 * (more // 4), 0, (-d) & 31)
    rng = np.random.default_rng(seed)
    x = d32_with_random_padding(rng, (b, h, w, d), pad)
    filt = Tensor.from_array(rng.integers(0, 256, (1, 1, d, cout), dtype=np.uint8),
                             DType.QUINT8).readonly()
    rows, cols = output_window(h, 1, 1, Padding.VALID), output_window(w, 1, 1, Padding.VALID)
    ctx = KernelContext(1, SN, padding=Padding.VALID)
    sums = _plain_sums(ctx, x, filt, rows, cols, zf, False)
    assert sums is not None
    want = _all_sums(KernelContext(1, SN, padding=Padding.VALID), x, filt, rows, cols, zx, zf)
    got = sums(x, zx)
    assert got.dtype == np.int32 and got.shape == want.shape
    assert np.array_equal(got, want)
    assert np.array_equal(sums(x, zx), want)         # kept: the same again


@settings(max_examples=25, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 6), st.integers(1, 9),
                       st.integers(1, 70)), pads=_PADS, seed=st.integers(0, 999))
def test_an_unpacker_unpacks_as_unpack_d32(shape: tuple[int, int, int, int],
                                           pads: tuple[int, ...], seed: int) -> None:
    hb, ha, wb, _, db = pads
    depth = shape[3]
    pad = D32Padding(hb, ha, wb, (-(wb + shape[2])) & 3, db, (-(db + depth)) & 31)
    x = d32_with_random_padding(np.random.default_rng(seed), shape, pad)
    unpack = unpacker(x.geometry.memory_shape, x.shape, x.padding)
    assert unpack is not None
    want = unpack_d32(x.memory, x.shape, x.padding)
    assert np.array_equal(unpack(x.raw), want)
    assert np.array_equal(unpack(x.raw), x.array)


def _supernode_inputs(rng: np.random.Generator, x: Tensor, cout: int) -> tuple[Tensor, ...]:
    d = x.shape[3]
    filt = Tensor.from_array(rng.integers(0, 256, (1, 1, d, cout), dtype=np.uint8),
                             DType.QUINT8).readonly()
    bias = Tensor.from_array(rng.integers(-3000, 3000, (1, 1, 1, cout), dtype=np.int32),
                             DType.QINT32).readonly()
    stride = Tensor.shape_only((1, 1, 1, 1))
    return (x, filt, _f(-1.5), _f(2.0), _f(-0.8), _f(0.7), stride, bias, _f(-40.0), _f(40.0),
            _f(float("-inf")), _f(float("inf")))


def _bytes(outs: tuple[Tensor, ...]) -> list[tuple]:
    return [(t.shape, t.dtype, t.layout, t.padding, t.raw.tobytes()) for t in outs]


def test_a_supernode_run_again_on_its_kept_set_up_equals_a_fresh_one() -> None:
    """Runs on one context (the set-up kept from the first) against each run on a fresh
    context given the range the kept one had searched so far; then an input of another
    width on the same context (the set-up rebuilt), widths giving 0-3 padding columns."""
    rng = np.random.default_rng(11)
    kernel = REGISTRY.get(SN).kernel
    ctx = KernelContext(1, SN, padding=Padding.SAME)
    consts = None
    for w in (8, 8, 7, 7, 6, 5, 5):
        x = d32_with_random_padding(rng, (1, 3, w, 40), D32Padding(4, 4, 4, (-(4 + w)) & 3, 0, 24))
        inputs = _supernode_inputs(rng, x, 37) if consts is None else (x, *consts)
        consts = inputs[1:]
        fresh = KernelContext(1, SN, padding=Padding.SAME)
        fresh.state["hvx_range"] = _copy_range(ctx.state.get("hvx_range"))
        want = kernel(fresh, *inputs)
        got = kernel(ctx, *inputs)
        assert _bytes(got) == _bytes(want)
        assert ctx.state["hvx_steady"].value.shape == (1, 3, w, 37)


def _copy_range(state: object) -> object:
    return None if state is None else copy.copy(state)


def test_a_writable_const_is_not_kept() -> None:
    rng = np.random.default_rng(2)
    x = d32_with_random_padding(rng, (1, 2, 4, 32), D32Padding(4, 4, 4, 0, 0, 0))
    inputs = list(_supernode_inputs(rng, x, 5))
    inputs[1] = Tensor.from_array(rng.integers(0, 256, (1, 1, 32, 5), dtype=np.uint8),
                                  DType.QUINT8)                 # writable: may change
    ctx = KernelContext(1, SN, padding=Padding.SAME)
    REGISTRY.get(SN).kernel(ctx, *inputs)
    assert "hvx_steady" not in ctx.state
    inputs[1].raw[:] = 0                                     # changed in place: taken
    got = REGISTRY.get(SN).kernel(ctx, *inputs)
    fresh = KernelContext(1, SN, padding=Padding.SAME)
    fresh.state["hvx_range"] = _copy_range(ctx.state["hvx_range"])
    want = REGISTRY.get(SN).kernel(fresh, *inputs)
    assert _bytes(got) == _bytes(want)


def test_a_depthwise_run_again_keeps_its_padding_lane_code() -> None:
    """The depth padding lanes' code, kept while the scaling and range are the last run's,
    is the one computed afresh; the node's last scaling is Shared, which a run snapshot
    takes as it is."""
    from hexscope.engine.ops.context import Shared
    from hexscope.engine.session import snapshot_states

    dw = "DepthwiseSupernode_8x8p32to8_d32"
    rng = np.random.default_rng(4)
    # the shapes of test_dwise_d32_padding's first case (its compiled kernels, no others)
    x = d32_with_random_padding(rng, (1, 3, 9, 32), D32Padding(4, 4, 4, 7, 0, 0))
    filt = Tensor.from_array(rng.integers(0, 256, (2, 5, 32, 1), dtype=np.uint8),
                             DType.QUINT8).readonly()
    bias = Tensor.from_array(rng.integers(-30, 30, (1, 1, 1, 32)).astype(np.int32),
                             DType.QINT32).readonly()
    inputs = (x, filt, _f(0.0), _f(255.0), _f(-128.0), _f(127.0),
              Tensor.shape_only((1, 1, 1, 1)), bias, _f(-2.0**30), _f(2.0**30), _f(-32.0),
              _f(float("inf")))
    kernel = REGISTRY.get(dw).kernel
    ctx = KernelContext(1, dw, padding=Padding.VALID)
    # then an input of another width and padding: the kept set-up is rebuilt
    other = (d32_with_random_padding(rng, (1, 3, 11, 32), D32Padding(4, 4, 4, 1, 0, 0)),
             *inputs[1:])
    for run in (inputs, inputs, inputs, other, other):
        fresh = KernelContext(1, dw, padding=Padding.VALID)
        fresh.state["dwise_range"] = _copy_range(ctx.state.get("dwise_range"))
        want = kernel(fresh, *run)
        assert _bytes(kernel(ctx, *run)) == _bytes(want)
        assert ctx.state["dwise_steady"].key[0] == run[0].shape  # type: ignore[attr-defined]
    assert isinstance(ctx.state["dwise_last"], Shared)
    assert snapshot_states({1: ctx.state})[1]["dwise_last"] is ctx.state["dwise_last"]


@settings(max_examples=25, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 6), st.integers(1, 9),
                       st.integers(1, 70)), pads=_PADS, fill=st.integers(0, 255),
       seed=st.integers(0, 999))
def test_a_packer_packs_as_pack_d32(shape: tuple[int, int, int, int], pads: tuple[int, ...],
                                    fill: int, seed: int) -> None:
    from hexscope.engine.d32 import D32Geometry
    from hexscope.engine.ops.kernels.d32_layout import pack_d32, packer

    hb, ha, wb, _, db = pads
    pad = D32Padding(hb, ha, wb, (-(wb + shape[2])) & 3, db, (-(db + shape[3])) & 31)
    data = np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)
    memory_shape = D32Geometry(shape, pad).memory_shape
    pack = packer(memory_shape, shape, pad, fill)
    assert pack is not None
    want = pack_d32(data, memory_shape, pad, fill)
    assert np.array_equal(pack(data), want) and np.array_equal(pack(data), want)


def _i32(v: int) -> Tensor:
    return Tensor.scalar(v, DType.INT32).readonly()


def test_the_converters_kept_set_up_equals_a_fresh_one_and_logs_as_before() -> None:
    """Convert_to_d32 and Convert_from_d32 run again on one context (their packing kept)
    against a fresh context each time, over inputs of changing shapes; options out of range
    keep being logged at every run (nothing kept for them)."""
    to_d32 = REGISTRY.get("Convert_to_d32").kernel
    from_d32 = REGISTRY.get("Convert_from_d32").kernel
    rng = np.random.default_rng(8)
    lines: list = []
    keep_to = KernelContext(1, "Convert_to_d32", padding_fill=0x33, debug_level=2,
                            log_sink=lambda level, text: lines.append(text))
    keep_from = KernelContext(2, "Convert_from_d32")
    for opts in ((), (_i32(0), _i32(5), _i32(2), _i32(3)), (_i32(0), _i32(9))):
        for shape in ((1, 3, 5, 8), (1, 3, 5, 8), (2, 2, 7, 33), (2, 2, 7, 33)):
            lines.clear()
            x = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8)
            (y,) = to_d32(keep_to, x, *opts)
            want_lines = list(lines)
            fresh = KernelContext(1, "Convert_to_d32", padding_fill=0x33, debug_level=2,
                                  log_sink=lambda level, text: lines.append(text))
            lines.clear()
            (want,) = to_d32(fresh, x, *opts)
            assert _bytes((y,)) == _bytes((want,)) and want_lines == lines
            assert bool(lines) == (len(opts) == 2)      # w_left 9: logged every run
            kept = keep_to.state["to_d32"].key  # type: ignore[attr-defined]
            assert (kept[0] == shape and kept[5:] == opts) == (len(opts) != 2)
            (back,) = from_d32(keep_from, y)
            assert back.layout is Layout.FLAT and back.raw.tobytes() == x.raw.tobytes()
            (again,) = from_d32(KernelContext(2, "Convert_from_d32"), y)
            assert _bytes((back,)) == _bytes((again,))


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 40), k=st.integers(1, 70), n=st.integers(1, 50),
       zero=st.integers(0, 255), b=st.integers(-300, 300), seed=st.integers(0, 999))
def test_a_prepared_gemm_equals_gemm_into(m: int, k: int, n: int, zero: int, b: int,
                                          seed: int) -> None:
    from hexscope.engine.ops.kernels import igemm
    from hexscope.engine.ops.kernels.gemm import Rhs, gemm_into, prepared_gemm8

    if not igemm.available8():
        return                          # no VNNI here: the prepared GEMM is never built
    rng = np.random.default_rng(seed)
    rhs = Rhs.from_codes(rng.integers(0, 256, (k, n), dtype=np.uint8), zero)
    lhs = rng.integers(-128, 128, (m, k), dtype=np.int8)
    offsets = rhs.offsets(int(rng.integers(-200, 200)), b)
    run = prepared_gemm8(rhs, m, b)
    assert run is not None
    want = np.empty((m, n), np.int32)
    gemm_into(want, lhs, rhs, offsets, b)
    assert np.array_equal(run(lhs, offsets), want)


@given(word=st.binary(min_size=0, max_size=8), value=st.floats(width=64))
def test_scalar_f_and_f32_word_read_and_write_as_before(word: bytes, value: float) -> None:
    """scalar_f's inline read gives Tensor.scalar_value's float for any bytes (NaN payloads,
    short buffers); f32_word gives np.full's word."""
    import math
    import warnings

    from hexscope.engine.ops.context import scalar_f
    from hexscope.engine.ops.conv.common import f32_word

    t = Tensor((1, 1, 1, max(1, len(word))), DType.UINT8,
               np.frombuffer(word.ljust(1, b"\0"), np.uint8).copy())
    got, want = scalar_f(t), float(t.scalar_value(float))
    assert got == want or (math.isnan(got) and math.isnan(want))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f32_word(value).tobytes() == np.full(1, value, np.float32).tobytes()


def test_requantize_8to8_hands_the_executor_tensors() -> None:
    """Its outputs as Tensors, the bytes and types the executor's wrap of arrays gave, so
    the plan takes them without the full output check."""
    from hexscope.engine.executor import plain_outputs

    rng = np.random.default_rng(3)
    x = Tensor.from_array(rng.integers(0, 256, (1, 3, 4, 5), dtype=np.uint8), DType.QUINT8)
    lo, hi = Tensor.scalar(-1.0).readonly(), Tensor.scalar(3.0).readonly()
    out_lo, out_hi = Tensor.scalar(-2.0).readonly(), Tensor.scalar(1.984375).readonly()
    y, y_min, y_max = REGISTRY.get("Requantize_8to8").kernel(
        KernelContext(1, "Requantize_8to8"), x, lo, hi, out_lo, out_hi)
    assert (y.dtype, y.shape, y_min.dtype, y_min.shape) == \
        (DType.QUINT8, (1, 3, 4, 5), DType.FLOAT32, (1, 1, 1, 1))
    assert y_min.scalar_value() == -2.0 and y_max.raw.tobytes() == out_hi.raw.tobytes()
    checks = ((DType.QUINT8, None), (DType.FLOAT32, None), (DType.FLOAT32, None))
    assert plain_outputs((y, y_min, y_max), checks) == (y, y_min, y_max)


@settings(max_examples=40, deadline=None)
@given(oh=st.integers(0, 3), ow=st.integers(0, 6), extra=st.integers(0, 3),
       cout=st.integers(1, 40), shift=st.integers(0, 31), short=st.booleans(),
       seed=st.integers(0, 999))
def test_a_kept_requantization_equals_requantize_into_d32_and_extremes(
        oh: int, ow: int, extra: int, cout: int, shift: int, short: bool, seed: int) -> None:
    from hexscope.engine.ops.conv.supernode_fast import requant_of
    from hexscope.engine.ops.conv.supernode_hvx import _extremes
    from hexscope.engine.ops.kernels.supernode_requant import requantize_into_d32

    rng = np.random.default_rng(seed)
    channels = (cout + 31) & ~31
    sums = rng.integers(-2**31, 2**31, (1, oh, ow + extra, cout), dtype=np.int64)
    sums = sums.astype(np.int32) >> np.int32(rng.integers(0, 31))
    folded = rng.integers(-2**40, 2**40, channels)
    recip = rng.integers(0, 2**31, channels)
    shape = (1, oh + 8, channels // 32, 4 + ow + extra, 32)
    run = requant_of(ow, channels, short)
    if run is None:
        return                                  # no compiled kernels: never kept
    mem, want_mem = np.full(shape, 7, np.uint8), np.full(shape, 7, np.uint8)
    want = _extremes(*requantize_into_d32(sums, ow, folded, recip, shift, short, True,
                                          want_mem), recip, short)
    assert run(sums, folded, recip, shift, mem) == want
    assert np.array_equal(mem, want_mem)


def test_requantize_8to8_kept_lookup_equals_the_table_path() -> None:
    """Its lookup kept in the node (the affine step above 512 codes, the table below) gives
    requantize_u8_by_table's codes, run after run and for a changing size and range."""
    from hexscope.engine.ops.quant.requantize_fixed import (
        requantize_8to8_plan,
        requantize_u8_by_table,
    )

    kernel = REGISTRY.get("Requantize_8to8").kernel
    ctx = KernelContext(1, "Requantize_8to8")
    rng = np.random.default_rng(6)
    out_lo, out_hi = Tensor.scalar(-2.0).readonly(), Tensor.scalar(1.984375).readonly()
    for shape, (a, b) in (((1, 16, 16, 8), (-1.0, 3.0)), ((1, 16, 16, 8), (-1.0, 3.0)),
                          ((1, 3, 4, 5), (-1.0, 3.0)), ((1, 16, 16, 8), (-0.5, 1.5)),
                          ((1, 16, 16, 8), (-0.5, 1.5))):
        x = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8)
        y, _, _ = kernel(ctx, x, Tensor.scalar(a).readonly(), Tensor.scalar(b).readonly(),
                         out_lo, out_hi)
        gain, in_off, out_off = requantize_8to8_plan(a, b, np.float32(-2.0),
                                                     np.float32(1.984375))
        want = requantize_u8_by_table(x.array.reshape(-1), gain, in_off, out_off)
        assert y.shape == shape and y.raw.tobytes() == want.tobytes()
