"""Fast paths against the straightforward forms they replace: every result bit-identical.

The benchmark-driven fast paths (bench/inception_v3.py) must never change a result. Each test
here compares one against an independent reference written out with Python integers or
the array helpers it stands in for (quantized-ops spec §0, §7).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.hexmath import (
    c_roundf_int,
    c_roundf_int1,
    exact_memo,
    f2i,
    f2i1,
    rndi,
    rndi1,
)
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.conv2d import conv_scalars, quantized_conv2d_8x8to32
from hexscope.engine.ops.elementwise.activation import _relu_plan, quantized_relu_8, range_words
from hexscope.engine.ops.kernels import gemm
from hexscope.engine.ops.quant.requantize import (
    path_a,
    quantize_down_and_shrink_range_32to8,
    requantize_plan,
    shrink_plan,
    shrink_range,
)
from hexscope.engine.ops.shape.concat import rescale_codes, rescale_table
from hexscope.engine.tensor import Tensor, fresh
from support.conv_graph import append_conv_consts
from support.ref_conv import ref_conv, ref_zero

f32 = np.float32
I32_MIN, I32_MAX = -(2 ** 31), 2 ** 31 - 1

_BITS = st.integers(0, 2 ** 32 - 1).map(lambda b: np.array(b, np.uint32).view(np.float32)[()])
_SPECIAL = st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.0 ** 31, -(2.0 ** 31),
                            2.0 ** 31 - 64, float("inf"), float("-inf"), float("nan"),
                            8388607.5, -8388608.5, 1e-45])
_FLOATS = st.one_of(_BITS, _SPECIAL.map(f32))


@settings(max_examples=300, deadline=None)
@given(x=_FLOATS)
def test_scalar_conversions_match_the_array_helpers(x: np.float32) -> None:
    """§0: f2i (chop, saturate, NaN -> -1), rndi and C roundf, one value at a time."""
    with np.errstate(all="ignore"):
        assert f2i1(x) == int(f2i(np.array([x]))[0])
        assert rndi1(x) == int(rndi(np.array([x], f32))[0])
        assert c_roundf_int1(x) == int(c_roundf_int(np.array([x]))[0])


def _path_a_reference(codes: np.ndarray, gi: int, oi: int) -> list[int]:
    """§7 Path A per element with Python integers: sat_u8((sat_i32(x - oi)*gi + 2^30) >> 31)."""
    out = []
    for c in codes.tolist():
        t = min(I32_MAX, max(I32_MIN, c - oi))
        out.append(min(255, max(0, (t * gi + 2 ** 30) >> 31)))
    return out


_CODES = st.lists(st.one_of(st.integers(I32_MIN, I32_MAX),
                            st.sampled_from([I32_MIN, I32_MAX, 0, -1, 1])),
                  min_size=1, max_size=200)


@settings(max_examples=60, deadline=None)
@given(codes=_CODES, gi=st.one_of(st.integers(1024, I32_MAX),
                                  st.sampled_from([1024, 1025, 2 ** 30, I32_MAX])),
       oi=st.one_of(st.integers(I32_MIN, I32_MAX), st.sampled_from([I32_MIN, I32_MAX, 0])),
       near=st.booleans())
def test_path_a_float64_matches_the_integer_formula(codes, gi, oi, near, kernels) -> None:
    """Every gain code Path A admits, every offset, and codes around the 0/255 thresholds."""
    if near:       # put most codes where the output is between 0 and 255, and at the edges
        span = (2 ** 39) // gi
        codes = [min(I32_MAX, max(I32_MIN, oi + c % (span + 8) - 4)) for c in codes]
    x = np.array(codes, np.int32)
    got = path_a(x, gi, oi)
    assert got.dtype == np.uint8
    assert got.tolist() == _path_a_reference(x, gi, oi)
    assert path_a(x.astype(np.int64), gi, oi).tolist() == got.tolist()
    # The caller's (min, max) lets Path A skip the clip when every code is inside its limits.
    bounds = (int(x.min()), int(x.max()))
    assert path_a(x, gi, oi, bounds).tolist() == got.tolist()


@settings(max_examples=40, deadline=None)
@given(gi=st.integers(1024, I32_MAX), oi=st.integers(-(2 ** 30), 2 ** 30),
       seed=st.integers(0, 2 ** 32 - 1))
def test_path_a_without_the_clip_matches_the_integer_formula(gi, oi, seed, kernels) -> None:
    """Codes all inside the clip limits (output 0..255 with no saturation): the unclipped
    pass with the given bounds equals the integer formula (§7), both offset forms."""
    rng = np.random.default_rng(seed)
    lo, hi = -(2 ** 30 // gi), (2 ** 39 - 2 ** 30 - 1) // gi
    x = np.clip(rng.integers(lo, hi + 1, 300) + oi, I32_MIN, I32_MAX).astype(np.int32)
    x[:2] = np.clip([lo + oi, hi + oi], I32_MIN, I32_MAX)
    got = path_a(x, gi, oi, (int(x.min()), int(x.max())))
    assert got.tolist() == _path_a_reference(x, gi, oi)


def test_path_a_ties_round_up_exactly(kernels) -> None:
    """(e*gi + 2^30) >> 31 at exact half steps: gi = 2^30 gives e/2 + 1/2, floored."""
    e = np.arange(-4, 520, dtype=np.int32)
    got = path_a(e + 1000, 2 ** 30, 1000)
    assert got.tolist() == [min(255, max(0, (v + 1) // 2)) for v in e.tolist()]


# convolution by blocks of output rows ---------------------------------------------------------







def run_conv(x, w, x_rng, f_rng, stride=(1, 1), padding=Padding.SAME) -> Tensor:
    ctx = KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=padding)
    y, _, _ = quantized_conv2d_8x8to32(
        ctx, Tensor.from_array(x), Tensor.from_array(w), Tensor.scalar(x_rng[0]),
        Tensor.scalar(x_rng[1]), Tensor.scalar(f_rng[0]), Tensor.scalar(f_rng[1]),
        Tensor.shape_only((1, stride[0], stride[1], 1)))
    return y


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), pad=st.sampled_from([Padding.SAME, Padding.VALID, Padding.SAME_CAFFE,
                                            Padding.NA]),
       x_rng=st.sampled_from([(0.0, 1.0), (-1.0, 1.0078740), (-3.0, -1.0), (0.5, 3.0)]),
       f_rng=st.sampled_from([(-1.0, 1.0078740), (0.0, 1.0), (-10.0, 0.11904716)]),
       block=st.sampled_from([1, 64, 1000, 1 << 20]))
def test_blocked_conv_matches_the_reference_loop(data, pad, x_rng, f_rng, block,
                                                 monkeypatch_block, gemm_backend) -> None:
    """Blocks of 1 row up to the whole image, every stride and padding, 1x1 included:
    the int32 sums equal the tap-by-tap loop of spec §2 (the test_conv reference)."""
    b, h, w, c = (data.draw(st.integers(lo, hi)) for lo, hi in ((1, 2), (1, 9), (1, 9), (1, 6)))
    fh, fw, co = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)), data.draw(
        st.integers(1, 5))
    sh, sw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(0, 256, (b, h, w, c), dtype=np.uint8)
    wt = rng.integers(0, 256, (fh, fw, c, co), dtype=np.uint8)
    monkeypatch_block(block)
    y = run_conv(x, wt, x_rng, f_rng, (sh, sw), pad)
    expect = ref_conv(x, wt, ref_zero(*x_rng), ref_zero(*f_rng), sh, sw, pad)
    assert np.array_equal(y.array, expect)


def test_blocked_conv_with_k_chunks_and_extreme_codes(monkeypatch_block, gemm_backend) -> None:
    """K = 3 * 3 * 300 = 2700 (3 chunks), all codes 255 against zero points 0 and 383,
    blocks of 2 output rows: sums far beyond 2**24 stay exact."""
    monkeypatch_block(2 * 5 * 2700 * 4)
    x = np.full((1, 5, 5, 300), 255, np.uint8)
    w = np.full((3, 3, 300, 3), 255, np.uint8)
    for f_rng, zf in (((0.0, 1.0), 0), ((-3.0, -1.0), 383)):
        assert ref_zero(*f_rng) == zf
        y = run_conv(x, w, (0.0, 1.0), f_rng, padding=Padding.SAME)
        expect = ref_conv(x, w, 0, zf, 1, 1, Padding.SAME)
        assert abs(expect).max() > 2**24       # beyond float32: the K chunks keep that exact
        assert np.array_equal(y.array, expect)


@pytest.fixture
def monkeypatch_block(monkeypatch):
    def set_block(n: int) -> None:
        monkeypatch.setattr(gemm, "BLOCK_BYTES", n)
    return set_block


@pytest.mark.parametrize("zero", [0, 1, 100, 127, 128, 200, 255])
def test_rhs_chunks_keep_every_partial_sum_within_float32(zero) -> None:
    """Each K chunk has 128 * sum |w - z| <= 2**24 in every column (so every partial sum
    of |x - 128| <= 128 times it is an exact float32 integer), and one more row would
    break that: no GEMM is split more than needed. Mixed columns: one adversarial (all codes
    at the far end from z), one random, one at z."""
    rng = np.random.default_rng(zero)
    k = 3000
    far = 0 if zero >= 128 else 255
    codes = np.stack([np.full(k, far), rng.integers(0, 256, k), np.full(k, zero)],
                     axis=1).astype(np.uint8)
    rhs = gemm.Rhs.from_codes(codes, zero)
    edges = rhs.edges
    assert edges[0] == 0 and edges[-1] == k and list(edges) == sorted(set(edges))
    mag = np.abs(codes.astype(np.int64) - zero)
    for k0, k1 in zip(edges, edges[1:], strict=False):
        assert 128 * mag[k0:k1].sum(axis=0).max() <= 2**24
        if k1 < k:
            assert 128 * mag[k0:k1 + 1].sum(axis=0).max() > 2**24
    top = max(zero, 255 - zero)               # the adversarial column sets the chunk size
    assert edges[1] == 2**24 // (128 * top)
    with pytest.raises(ValueError):
        gemm.Rhs.from_codes(codes, 256)


def test_gemm_is_exact_with_uneven_chunks_and_extreme_codes(gemm_backend) -> None:
    """lhs all -128 (codes 0) against a filter whose columns need different chunkings:
    int32 sums equal the integer product."""
    rng = np.random.default_rng(3)
    k = 2500
    codes = np.stack([np.full(k, 255), rng.integers(0, 256, k), rng.integers(120, 137, k)],
                     axis=1).astype(np.uint8)
    rhs = gemm.Rhs.from_codes(codes, 0)
    assert len(rhs.edges) > 3
    x = np.zeros((4, k), np.uint8)
    x[1] = 255
    x[2] = rng.integers(0, 256, k)
    got = gemm.offset_gemm(gemm.center(x), rhs, gemm.CENTER - 0, 0)
    expect = x.astype(np.int64) @ codes.astype(np.int64)
    assert np.array_equal(got, ((expect + 2**31) % 2**32 - 2**31).astype(np.int32))


# fresh arrays: adopted once, never an alias of someone else's memory ----------------------------

def test_from_array_adopts_a_fresh_array_once_and_copies_otherwise() -> None:
    a = np.arange(12, dtype=np.uint8).reshape(3, 4)
    plain = Tensor.from_array(a)
    assert not np.shares_memory(plain.raw, a)
    b = fresh(np.arange(12, dtype=np.uint8).reshape(3, 4))
    adopted = Tensor.from_array(b)
    assert np.shares_memory(adopted.raw, b) and adopted.shape == (1, 1, 3, 4)
    assert adopted.array.tolist() == b.reshape(1, 1, 3, 4).tolist()
    again = Tensor.from_array(b)                 # the mark is used up
    assert not np.shares_memory(again.raw, b)
    c = fresh(np.arange(4, dtype=np.int32))     # a dtype change still converts (a copy)
    assert Tensor.from_array(c, DType.FLOAT32).array.ravel().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_unconsumed_fresh_marks_are_bounded_and_only_lose_the_mark() -> None:
    """A kernel may mark an array and then fail: the marks are dropped after a bound (no
    array is kept alive for long), and a dropped mark only means a copy, never an alias."""
    from hexscope.engine import tensor as tensor_module
    first = fresh(np.zeros(8, np.uint8))
    for _ in range(tensor_module._FRESH_MAX):
        fresh(np.ones(8, np.uint8))
    assert len(tensor_module._FRESH) <= tensor_module._FRESH_MAX
    assert all(value is not first for value in tensor_module._FRESH.values())
    assert not np.shares_memory(Tensor.from_array(first).raw, first)


def test_session_outputs_never_alias_inputs_and_are_read_only() -> None:
    """Relu's fresh output becomes the node's tensor without a copy, and it is frozen."""
    from hexscope.engine import Graph, Session
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x11, np.array([-1.0], np.float32))
    g.append_const_node(0x12, np.array([1.0], np.float32))
    g.append_node(0x13, "QuantizedRelu_8", inputs=[(0x10, 0), (0x11, 0), (0x12, 0)], outputs=3)
    g.append_node(0x20, "OUTPUT", inputs=[(0x13, 0)])
    s = Session(g)
    x = np.arange(256, dtype=np.uint8).reshape(1, 4, 4, 16)
    y, = s.execute([x])
    # §5: zero code of [-1, 1] = roundf(255 / 2) = 128 (ties away from zero)
    assert y.array.ravel().tolist() == np.maximum(np.arange(256), 128).tolist()
    assert not y.raw.flags.writeable
    assert not np.shares_memory(y.raw, s.inputs[0].raw)


def test_path_a_without_the_folded_offset(kernels) -> None:
    """Offsets so large that x * g + (0.5 - oi * g) rounds (cases found by search, where
    that form gives one code more): the subtracting form must be used, and is exact."""
    for gi, oi, x, expect in ((1702273619, -2147483197, -2147483156, 32),
                              (1582843550, -2147483396, -2147483280, 85),
                              (1452709520, 2147482673, 2147482690, 11)):
        g = gi * 2.0**-31
        assert int(np.floor(float(x) * g + (0.5 - oi * g))) == expect + 1   # the trap
        codes = np.array([x, x - 1, x + 1, oi, 2**31 - 1, -(2**31)], np.int32)
        got = path_a(codes, gi, oi).tolist()
        assert got[0] == expect
        assert got == _path_a_reference(codes, gi, oi)


def test_cached_filter_range_still_warns_every_run() -> None:
    """The filter range of a Const is evaluated once per prepare, its warning every run
    (a zero filter range: zero code from an out-of-range conversion, spec §1.6)."""
    from hexscope.engine import Graph, Session
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x11, np.full((1, 1, 2, 3), 7, np.uint8))
    for node_id, v in ((0x12, 0.0), (0x13, 1.0), (0x14, 2.0), (0x15, 2.0)):
        g.append_const_node(node_id, np.array([v], np.float32))
    g.append_const_node(0x16, shape=(1, 1, 1, 1))
    g.append_node(0x17, "QuantizedConv2d_8x8to32", inputs=[
        (0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x14, 0), (0x15, 0), (0x16, 0)],
        outputs=3, padding="SAME")
    g.append_node(0x20, "OUTPUT", inputs=[(0x17, 0)])
    s = Session(g)
    x = np.arange(8, dtype=np.uint8).reshape(1, 2, 2, 2)
    # zx = 0; zf = -2**31 (2 * 255 / 1e-18 overflows int32, saturated): w - zf = 7 + 2**31.
    sums = x.astype(np.int64).sum(axis=3, keepdims=True) * (7 + 2**31)
    expect = np.broadcast_to((sums + 2**31) % 2**32 - 2**31, (1, 2, 2, 3))
    for _ in range(2):
        y, = s.execute([x])
        assert any("filter range" in w for w in s.result(0x17).warnings)
        assert np.array_equal(y.array, expect)


def _conv_1x1_ref(x: np.ndarray, w: np.ndarray, zx: int, zf: int) -> np.ndarray:
    s = (x.astype(np.int64) - zx) @ (w[0, 0].astype(np.int64) - zf)
    return ((s + 2**31) % 2**32 - 2**31).astype(np.int64)


def test_sibling_1x1_convolutions_share_the_centred_input_and_stay_exact() -> None:
    """Three 1x1 convolutions read one input (an Inception block's branches), over runs
    with different inputs: every result equals the integer product (spec §2)."""
    from hexscope.engine import Graph, Session
    rng = np.random.default_rng(3)
    filters = [rng.integers(0, 256, (1, 1, 6, n), dtype=np.uint8) for n in (4, 5, 3)]
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    append_conv_consts(g)       # zx = 128, zf = 0
    for k, f in enumerate(filters):
        g.append_const_node(0x20 + k, f)
        g.append_node(0x30 + k, "QuantizedConv2d_8x8to32", inputs=[
            (0x10, 0), (0x20 + k, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0), (0x14, 0)],
            outputs=3, padding="SAME")
    g.append_node(0x40, "OUTPUT", inputs=[(0x30, 0), (0x31, 0), (0x32, 0)])
    s = Session(g)
    for _ in range(3):
        x = rng.integers(0, 256, (1, 3, 4, 6), dtype=np.uint8)
        ys = s.execute([x])
        for y, f in zip(ys, filters, strict=True):
            assert np.array_equal(y.array, _conv_1x1_ref(x, f, 128, 0))


def test_centred_inputs_are_not_taken_from_a_dead_or_writable_buffer() -> None:
    from hexscope.engine.ops.conv.conv2d import quantized_conv2d_8x8to32
    rng = np.random.default_rng(4)
    w = Tensor.from_array(rng.integers(0, 256, (1, 1, 5, 2), dtype=np.uint8)).readonly()
    ranges = [Tensor.scalar(v) for v in (-1.0, 1.0, 0.0, 1.0)]
    stride = Tensor.shape_only((1, 1, 1, 1))
    ctx = KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=Padding.SAME)
    for frozen in (True, True, False, False):
        codes = rng.integers(0, 256, (1, 2, 3, 5), dtype=np.uint8)
        x = Tensor.from_array(codes)
        if frozen:
            x.readonly()
        y, _, _ = quantized_conv2d_8x8to32(ctx, x, w, *ranges, stride)
        assert np.array_equal(y.array, _conv_1x1_ref(codes, w.array, 128, 0))
        if not frozen:           # a writable input may change: never served from the cache
            x.raw[:] = 255 - x.raw
            y, _, _ = quantized_conv2d_8x8to32(ctx, x, w, *ranges, stride)
            assert np.array_equal(y.array, _conv_1x1_ref(255 - codes, w.array, 128, 0))
        del x, y



def test_a_cached_centred_input_follows_a_switch_of_the_gemm_path(monkeypatch) -> None:
    """One frozen input, 1x1 convolutions run by turns with the integer kernel and with
    HEXSCOPE_GEMM=float: the cached centred input is taken only on its own path (the float
    runs never reach the kernel, as A/B runs need), and every result is exact (§2)."""
    from hexscope.engine.ops.conv.conv2d import quantized_conv2d_8x8to32
    from hexscope.engine.ops.kernels import igemm
    monkeypatch.delenv("HEXSCOPE_GEMM", raising=False)
    if not igemm.available():
        pytest.skip("the integer GEMM kernel does not run on this machine")
    calls = []
    real = igemm.gemm_into

    def spy(out, lhs, rhs, offsets, rowterm=None):
        calls.append(lhs.dtype)
        return real(out, lhs, rhs, offsets, rowterm)

    monkeypatch.setattr(igemm, "gemm_into", spy)
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 256, (2, 3, 4, 6), dtype=np.uint8)
    x = Tensor.from_array(codes).readonly()
    w = Tensor.from_array(rng.integers(0, 256, (1, 1, 6, 17), dtype=np.uint8)).readonly()
    ranges = [Tensor.scalar(v) for v in (-1.0, 1.0, 0.0, 1.0)]
    stride = Tensor.shape_only((1, 1, 1, 1))
    for path in ("int", "float", "int", "float"):
        if path == "float":
            monkeypatch.setenv("HEXSCOPE_GEMM", "float")
        else:
            monkeypatch.delenv("HEXSCOPE_GEMM", raising=False)
        calls.clear()
        for _ in range(2):                  # the second run takes the cached centred input
            ctx = KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=Padding.SAME)
            y, _, _ = quantized_conv2d_8x8to32(ctx, x, w, *ranges, stride)
            assert np.array_equal(y.array, _conv_1x1_ref(codes, w.array, 128, 0))
        kernel = np.int8 if igemm.available8() else np.int16
        assert calls == ([kernel] * 2 if path == "int" else [])

# average pool: the scaling without saturation where the window is small ---------------------

def _avg_pool_reference(x: np.ndarray, fh: int, fw: int, pad: Padding) -> np.ndarray:
    """Spec §9 per window, stride 1: u16 sum of the valid cells, read as s16, scaled by
    rc = min(32768 // count, 32767) with rounding, saturated to 0..255."""
    b, h, w, d = x.shape
    oh, ph = (h - fh + 1, 0) if pad is Padding.VALID else (h, (fh - 1) // 2)
    ow, pw = (w - fw + 1, 0) if pad is Padding.VALID else (w, (fw - 1) // 2)
    out = np.zeros((b, oh, ow, d), np.int64)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = max(0, i - ph), max(0, j - pw)
            r1, c1 = min(h, i - ph + fh), min(w, j - pw + fw)
            count = (r1 - r0) * (c1 - c0)
            total = x[:, r0:r1, c0:c1].astype(np.int64).sum(axis=(1, 2)) % 65536
            s16 = np.where(total >= 32768, total - 65536, total)
            out[:, i, j] = np.clip((s16 * min(32768 // count, 32767) + 16384) >> 15, 0, 255)
    return out


@pytest.mark.parametrize(("shape", "fh", "fw", "pad", "codes"), [
    ((1, 9, 10, 5), 3, 3, Padding.SAME, "random"),
    ((2, 6, 7, 3), 2, 4, Padding.SAME, "random"),
    ((1, 12, 12, 2), 11, 11, Padding.VALID, "255"),      # 121 cells: no saturation needed
    ((1, 12, 12, 2), 12, 11, Padding.VALID, "255"),      # 132 cells: s16 < 0 -> 0 (§9)
    ((1, 16, 16, 2), 16, 16, Padding.VALID, "random"),   # 256 cells: the sum wraps
    ((1, 20, 20, 2), 13, 13, Padding.SAME, "255"),       # 169 inside, fewer at the edges
])
def test_avg_pool_matches_the_window_loop(shape, fh, fw, pad, codes, kernels) -> None:
    from hexscope.engine.ops.pooling.pool import quantized_avg_pool_8
    rng = np.random.default_rng(11)
    x = (np.full(shape, 255, np.uint8) if codes == "255"
         else rng.integers(0, 256, shape, dtype=np.uint8))
    ctx = KernelContext(0x10, "QuantizedAvgPool_8", padding=pad)
    y, _, _ = quantized_avg_pool_8(ctx, Tensor.from_array(x), Tensor.scalar(-1.0),
                                   Tensor.scalar(1.0), Tensor.shape_only((1, fh, fw, 1)),
                                   Tensor.shape_only((1, 1, 1, 1)))
    assert np.asarray(y).tolist() == _avg_pool_reference(x, fh, fw, pad).tolist()


@settings(max_examples=200, deadline=None)
@given(bits=st.integers(0, 2**32 - 1), extra=st.integers(0, 3), size=st.integers(1, 4))
def test_scalar_value_reads_the_first_word_as_numpy_does(bits, extra, size) -> None:
    """Float and int32 views of the first 4 bytes (fewer bytes: zero-padded), NaNs included."""
    word = np.array([bits], np.uint32).view(np.uint8)
    raw = np.concatenate([word, np.full(extra, 7, np.uint8)])[:size if size < 4 else None]
    t = Tensor((1, 1, 1, raw.size), DType.UINT8, raw)
    padded = np.zeros(4, np.uint8)
    padded[:min(4, raw.size)] = raw[:4]
    f, i = t.scalar_value(float), t.scalar_value(int)
    expect_f = float(padded.view(np.float32)[0])
    assert (f == expect_f) or (np.isnan(f) and np.isnan(expect_f))
    assert i == int(padded.view(np.int32)[0])


# --- memoised scalar range maths (exact_memo) --------------------------------------------------
# The references below are the numpy float32 formulas the kernels evaluated per call before
# the memo (quantized-ops spec §1.4 ZA', §2 output range, §7 requantize scalars).

def _bits(v: object) -> int:
    return int(np.asarray(v, np.float32).reshape(-1).view(np.uint32)[0])


def _ref_zero(mn: float, mx: float) -> tuple[int, bool]:
    with np.errstate(all="ignore"):
        r = max(f32(1e-18), f32(f32(mx) - f32(mn)))
        z = f32(f32(f32(0.0) - f32(mn)) * f32(f32(255.0) / r))
    exact = bool(np.isfinite(z)) and -2.0 ** 31 <= float(z) < 2.0 ** 31
    return int(c_roundf_int(z)), exact


def _ref_level(mn: float, mx: float) -> np.float32:
    with np.errstate(all="ignore"):
        return f32(f32(f32(mx) - f32(mn)) / f32(255.0))


@settings(max_examples=50, deadline=None)
@given(_FLOATS, _FLOATS, _FLOATS, _FLOATS)
def test_memoised_conv_scalars_equal_the_float32_formulas(xmn, xmx, fmn, fmx) -> None:
    with np.errstate(all="ignore"):
        step = f32(_ref_level(xmn, xmx) * _ref_level(fmn, fmx))
        want_min, want_max = f32(f32(-2.0 ** 31) * step), f32(f32(2.0 ** 31) * step)
    for _ in range(2):                       # a miss, then a hit of the same key
        zx, ok_x, zf, ok_f, y_min, y_max = conv_scalars(float(xmn), float(xmx), float(fmn),
                                                        float(fmx))
        assert (zx, ok_x) == _ref_zero(xmn, xmx)
        assert (zf, ok_f) == _ref_zero(fmn, fmx)
        assert (_bits(y_min), _bits(y_max)) == (_bits(want_min), _bits(want_max))


@settings(max_examples=50, deadline=None)
@given(_FLOATS, _FLOATS, _FLOATS)
def test_memoised_requantize_plan_equals_the_float32_formulas(level, out_min, out_max) -> None:
    with np.errstate(all="ignore"):
        osc = f32(f32(255.0) / f32(out_max - out_min))
        gain = f32(level * osc)
        off = f32(f32(0.5) - f32(out_min * osc))
        gi = int(rndi(f32(gain * f32(2.0 ** 31))))
        oi, zo = int(rndi(f32(out_min / level))), int(f2i(off))
    for _ in range(2):
        c_path, g, o, pgi, poi, pzo = requantize_plan(level, out_min, out_max)
        assert (_bits(g), _bits(o)) == (_bits(gain), _bits(off))
        assert c_path == bool(gain >= 1)
        if not c_path:
            assert (pgi, poi, pzo) == (gi, oi, zo)


@settings(max_examples=50, deadline=None)
@given(_FLOATS, _FLOATS, st.integers(-(2 ** 31), 0), st.integers(0, 2 ** 31 - 1))
def test_memoised_shrink_plan_equals_the_shrink_of_the_codes(mn, mx, cmin, cmax) -> None:
    codes = np.array([cmin, cmax, 0], np.int32)
    with np.errstate(all="ignore"):
        level = f32(f32(f32(mx) - f32(mn)) * f32(2.0 ** -32))
        want = (level, *shrink_range(codes, level))
    got = shrink_plan(float(mn), float(mx), cmin, cmax)
    assert [_bits(v) for v in got] == [_bits(v) for v in want]


@settings(max_examples=50, deadline=None)
@given(_FLOATS, _FLOATS)
def test_memoised_relu_plan_and_range_words(mn, mx) -> None:
    z, w_min, w_max = _relu_plan(float(mn), float(mx))
    assert z == min(255, max(0, _ref_zero(mn, mx)[0]))      # rule ZA, §1.4
    assert w_min.shape == (1, 1, 1, 1) and not w_min.flags.writeable
    assert (_bits(w_min), _bits(w_max)) == (_bits(mn), _bits(mx))


@settings(max_examples=60, deadline=None)
@given(_FLOATS, _FLOATS, _FLOATS, _FLOATS)
def test_memoised_concat_table_equals_the_per_code_rescale(in_min, in_max, out_min,
                                                           out_max) -> None:
    """§10: the memoised 256-entry table (None for identity) gives what rescale_codes gives
    for every code, on a miss and on a hit."""
    codes = np.arange(256, dtype=np.uint8)
    expect = rescale_codes(codes, in_min, in_max, out_min, out_max)
    rescale_table.cache_clear()
    for _ in range(2):
        lut = rescale_table(float(in_min), float(in_max), float(out_min), float(out_max))
        got = codes if lut is None else lut
        assert np.array_equal(got, expect)
        assert lut is None or not lut.flags.writeable


def test_exact_memo_keys_on_the_bits_not_on_equality() -> None:
    calls = []

    @exact_memo
    def sign(v: float) -> float:
        calls.append(v)
        return float(np.copysign(1.0, v))

    assert (sign(0.0), sign(-0.0), sign(0.0)) == (1.0, -1.0, 1.0)   # 0.0 == -0.0, bits differ
    nan_a = np.array(0x7FC00001, np.uint32).view(np.float32)[()]
    nan_b = np.array(0xFFC00002, np.uint32).view(np.float32)[()]
    assert (sign(nan_a), sign(nan_b)) == (1.0, -1.0)
    assert len(calls) == 4


def _kernel_runs(ranges: list[tuple[float, float]], clear: bool) -> list[list[int]]:
    """Conv -> requantize -> relu on one context per kernel, the input range changing from
    run to run; the bits of every output. ``clear`` empties the memos before each call."""
    rng = np.random.default_rng(3)
    x = _frozen(rng.integers(0, 256, (1, 5, 5, 8)), DType.QUINT8)
    filt = _frozen(rng.integers(0, 256, (3, 3, 8, 4)), DType.QUINT8)
    f_lo, f_hi = _frozen(f32([-0.4]), DType.FLOAT32), _frozen(f32([0.3]), DType.FLOAT32)
    stride = Tensor.shape_only((1, 1, 1, 1))
    ctxs = [KernelContext(node_id=k, op="k", padding=Padding.SAME) for k in range(3)]
    memos = (conv_scalars, requantize_plan, shrink_plan, _relu_plan, range_words)
    out = []
    for lo, hi in ranges:
        if clear:
            for memo in memos:
                memo.cache_clear()
        x_lo, x_hi = _frozen(f32([lo]), DType.FLOAT32), _frozen(f32([hi]), DType.FLOAT32)
        y, y_lo, y_hi = quantized_conv2d_8x8to32(ctxs[0], x, filt, x_lo, x_hi, f_lo, f_hi,
                                                 stride)
        q, q_lo, q_hi = quantize_down_and_shrink_range_32to8(ctxs[1], y.readonly(), y_lo, y_hi)
        r, r_lo, r_hi = quantized_relu_8(ctxs[2], _frozen(np.asarray(q), DType.QUINT8),
                                         Tensor.from_array(q_lo), Tensor.from_array(q_hi))
        arrays = [y.array, y_lo.array, y_hi.array, q, q_lo, q_hi, r, r_lo, r_hi]
        out.append([np.asarray(a).tobytes() for a in arrays])
    return out


def _frozen(a: np.ndarray, dtype: DType) -> Tensor:
    return Tensor.from_array(np.asarray(a), dtype).readonly()


def test_memoised_kernels_follow_a_range_that_changes_between_runs() -> None:
    ranges = [(-1.0, 1.0078740), (-0.5, 2.0), (0.25, 3.0), (-1.0, 1.0078740), (-0.0, 0.0)]
    cached = _kernel_runs(ranges, clear=False)
    assert cached == _kernel_runs(ranges, clear=True)
    assert cached[0] == cached[3] and cached[0] != cached[1]


def test_rhs_offsets_cached_per_zero_codes_equal_the_integer_formula() -> None:
    codes = np.random.default_rng(4).integers(0, 256, (9, 5)).astype(np.uint8)
    rhs = gemm.Rhs.from_codes(codes, 100)
    colsum = [int(c) for c in (codes.astype(np.int64) - 100).sum(axis=0)]
    for a, b in [(3, -7), (-128, 2 ** 31), (3, -7), (0, 0), (3, -7)]:
        want = [((a * c + 9 * a * b + 2 ** 31) % 2 ** 32) - 2 ** 31 for c in colsum]
        got = rhs.offsets(a, b)
        assert got.tolist() == want and not got.flags.writeable
