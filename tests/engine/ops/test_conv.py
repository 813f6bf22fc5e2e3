"""QuantizedConv2d_8x8to32 (quantized-ops spec §2, §1.4, §1.7) and the exact GEMM under it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.errors import KernelError, NodeError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.conv2d import quantized_conv2d_8x8to32, zero_code
from hexscope.engine.ops.kernels import gemm
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor
from support.ref_conv import ref_conv, ref_zero

f32 = np.float32


def _f(v: float) -> Tensor:
    return Tensor.scalar(v)


def run_conv(x, w, x_rng=(0.0, 255.0), f_rng=(-1.0, 1.0), stride=(1, 1),
             padding=Padding.SAME, ctx=None):
    ctx = ctx or KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=padding)
    y, mn, mx = quantized_conv2d_8x8to32(
        ctx, Tensor.from_array(np.asarray(x, np.uint8)), Tensor.from_array(np.asarray(w, np.uint8)),
        _f(x_rng[0]), _f(x_rng[1]), _f(f_rng[0]), _f(f_rng[1]),
        Tensor.shape_only((1, stride[0], stride[1], 1)))
    return y, float(mn.array.ravel()[0]), float(mx.array.ravel()[0]), ctx


# independent references ----------------------------------------------------------------------







# hand-computed vectors -------------------------------------------------------------------------

X3 = np.arange(1, 10, dtype=np.uint8).reshape(1, 3, 3, 1)
# Filter codes w - 128 = [[1, 0], [0, -1]] with zf = 128 for the range [-1, 1]:
# z = 1 * (255 / 2) = 127.5, roundf -> 128 (ties away, §1.4).
W2 = np.array([[129, 128], [128, 127]], np.uint8).reshape(2, 2, 1, 1)


def test_same_pads_after_only():
    """§1.7 SAME, n=3, f=2, s=1: out 3, P = 1, pad before 0: y[i,j] = x[i,j] - x[i+1,j+1]."""
    y, *_ = run_conv(X3, W2, padding=Padding.SAME)
    assert y.dtype.c_name == "qint32"
    assert y.array[0, :, :, 0].tolist() == [[-4, -4, 3], [-4, -4, 6], [7, 8, 9]]


def test_same_caffe_pads_before():
    """§1.7 SAME_CAFFE puts floor((P+1)/2) = 1 before: y[i,j] = x[i-1,j-1] - x[i,j]."""
    y, *_ = run_conv(X3, W2, padding=Padding.SAME_CAFFE)
    assert y.array[0, :, :, 0].tolist() == [[-1, -2, -3], [-4, -4, -4], [-7, -4, -4]]


def test_valid_and_na():
    y, *_ = run_conv(X3, W2, padding=Padding.VALID)
    assert y.array[0, :, :, 0].tolist() == [[-4, -4], [-4, -4]]
    # NA: out = floor(n/s) = 3 and padding from P as for SAME (§1.7).
    y, *_ = run_conv(X3, W2, padding=Padding.NA)
    assert y.array[0, :, :, 0].tolist() == [[-4, -4, 3], [-4, -4, 6], [7, 8, 9]]


def test_valid_filter_larger_than_input_gives_empty_output():
    y, *_ = run_conv(X3, np.full((4, 1, 1, 2), 128, np.uint8), padding=Padding.VALID)
    assert y.shape == (1, 0, 3, 2)


@pytest.mark.parametrize("filter_shape", [(3, 3, 1, 0), (1, 1, 1, 0), (5, 1, 1, 0)])
def test_a_filter_without_output_channels_gives_an_empty_output(filter_shape):
    """Cout = 0 is not an error in §2: the output is [B,OH,OW,0] with the usual range (the
    F(2,3), blocked and 1x1 paths each once sized their K chunks from no columns)."""
    y, mn, mx, _ = run_conv(X3, np.zeros(filter_shape, np.uint8))
    assert y.shape == (1, 3, 3, 0) and y.array.size == 0
    assert (mn, mx) == (-mx, mx) and mx > 0


def test_mirror_padding_gives_size_zero():
    y, *_ = run_conv(X3, W2, padding=Padding.MIRROR_REFLECT)
    assert y.shape == (1, 0, 0, 1)


def test_stride_from_shape_and_filter_layout():
    """Stride [1,2,3,1] subsamples; filter [1,1,Cin=2,Cout=3] is an HWIO matrix (§2)."""
    x = np.arange(1 * 5 * 7 * 2, dtype=np.uint8).reshape(1, 5, 7, 2)
    w = np.array([[1, 0, 2], [0, 1, 3]], np.uint8) + 128     # (Cin, Cout), zf = 128
    y, *_ = run_conv(x, w.reshape(1, 1, 2, 3), stride=(2, 3), padding=Padding.VALID)
    assert y.shape == (1, 3, 3, 3)
    sub = x[0, ::2, ::3, :].astype(np.int64)
    expect = np.stack([sub[..., 0], sub[..., 1], 2 * sub[..., 0] + 3 * sub[..., 1]], -1)
    assert np.array_equal(y.array[0], expect)


def test_output_range_min_then_max():
    """§2: lx = 255/255 = 1, lf = f32(2/255), out = ±f32(2**31 * f32(lx*lf)); min first."""
    _, mn, mx, _ = run_conv(X3, W2, x_rng=(0.0, 255.0), f_rng=(-1.0, 1.0))
    step = f32(f32(1.0) * f32(f32(2.0) / f32(255.0)))
    assert mx == float(f32(f32(2.0**31) * step))
    assert mn == -mx
    assert mx == pytest.approx(2.0**31 * 2 / 255, rel=1e-6)


def test_degenerate_range_reports_signed_zero_and_warns():
    """§1.6: min == max gives [-0.0, 0.0] and an out-of-range zero code (unconfirmed)."""
    _, mn, mx, ctx = run_conv(X3, W2, x_rng=(1.0, 1.0))
    assert (mn, mx) == (0.0, 0.0)
    assert math.copysign(1.0, mn) == -1.0 and math.copysign(1.0, mx) == 1.0
    assert ctx.warnings and "unconfirmed" in ctx.warnings[0]


def test_unclamped_zero_code():
    """ZA' is not clamped (§1.4): range [0.5, 3.0] gives zx = -51, not 0."""
    assert zero_code(0.5, 3.0, "none")[0] == -51
    assert zero_code(0.5, 3.0, "u8")[0] == 0
    x = np.zeros((1, 1, 1, 1), np.uint8)
    w = np.full((1, 1, 1, 1), 129, np.uint8)                   # w - zf = 1
    y, *_ = run_conv(x, w, x_rng=(0.5, 3.0))
    assert y.array.item() == 51                                  # (0 - (-51)) * 1


def test_zero_code_of_a_nan_range_follows_the_conversion_convention():
    # §1.6 / §23 item 4: a NaN zero point goes through the unconfirmed float -> int conversion;
    # the project's convention (QEMU's Hexagon model, engine/hexmath) gives -1 for NaN.
    assert zero_code(float("nan"), 1.0, "none") == (-1, False)
    assert zero_code(float("nan"), 1.0, "u8") == (0, False)
    assert zero_code(float("nan"), 1.0, "low") == (0, False)
    # out of int32 range: saturates (width floored at 1e-18, min -1 -> z = 2.55e20)
    assert zero_code(-1.0, -1.0, "none") == (2**31 - 1, False)


# errors ------------------------------------------------------------------------------------------

def test_depth_mismatch_rejected():
    with pytest.raises(KernelError, match="input depth 1 differs from the filter's input depth 2"):
        run_conv(X3, np.zeros((1, 1, 2, 1), np.uint8))


@pytest.mark.parametrize("shape", [(2, 1, 1, 1), (1, 1, 1, 2)])
def test_bad_stride_shape_rejected(shape):
    ctx = KernelContext(1, "QuantizedConv2d_8x8to32", padding=Padding.SAME)
    with pytest.raises(KernelError, match=r"stride tensor must have shape \[1,SH,SW,1\]"):
        quantized_conv2d_8x8to32(ctx, Tensor.from_array(X3), Tensor.from_array(W2), _f(0),
                                 _f(1), _f(0), _f(1), Tensor.shape_only(shape))


def test_zero_stride_rejected():
    with pytest.raises(KernelError, match="zero dimension"):
        run_conv(X3, W2, stride=(0, 1))


def test_shape_only_input_rejected():
    ctx = KernelContext(1, "QuantizedConv2d_8x8to32", padding=Padding.SAME)
    with pytest.raises(KernelError, match="shape-only"):
        quantized_conv2d_8x8to32(ctx, Tensor.shape_only((1, 3, 3, 1), ), Tensor.from_array(W2),
                                 _f(0), _f(1), _f(0), _f(1), Tensor.shape_only((1, 1, 1, 1)))


# through a session -----------------------------------------------------------------------------

def _conv_graph(w: np.ndarray, padding: str = "SAME") -> Graph:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=1)
    g.append_const_node(0x1, w)
    for k, v in enumerate((0.0, 255.0, -1.0, 1.0)):
        g.append_const_node(0x2 + k, np.array([v], np.float32))
    g.append_const_node(0x6, shape=(1, 1, 1, 1))
    g.append_node(0x200, "QuantizedConv2d_8x8to32",
                  inputs=[(0x100, 0), (0x1, 0), (0x2, 0), (0x3, 0), (0x4, 0), (0x5, 0),
                          (0x6, 0)], outputs=3, padding=padding)
    g.append_node(0x300, "OUTPUT", inputs=[(0x200, 0), (0x200, 1), (0x200, 2)])
    return g


def test_session_runs_conv_and_reuses_the_const_filter():
    s = Session(_conv_graph(W2))
    y, mn, mx = s.execute([X3])
    assert y.array[0, :, :, 0].tolist() == [[-4, -4, 3], [-4, -4, 6], [7, 8, 9]]
    assert mn.array.item() < 0 < mx.array.item()
    y2, *_ = s.execute([X3[:, ::-1].copy()])
    assert y2.array[0, :, :, 0].tolist() == [[2, 2, 9], [2, 2, 6], [1, 2, 3]]


def test_session_names_the_failing_node():
    s = Session(_conv_graph(np.zeros((1, 1, 2, 1), np.uint8)))
    with pytest.raises(NodeError) as info:
        s.execute([X3])
    assert info.value.node_id == 0x200 and "depth" in info.value.reason


# property test against the loop ---------------------------------------------------------------

_RANGES = st.sampled_from([(0.0, 1.0), (-1.0, 1.0078740), (-0.3, 5.7), (0.5, 3.0),
                           (-3.0, -1.0), (-10.0, 0.11904716), (-200.0, 1.0)])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), pad=st.sampled_from(list(Padding)), x_rng=_RANGES, f_rng=_RANGES)
def test_matches_reference_loop(data, pad, x_rng, f_rng, gemm_backend):
    b, h, w, c = (data.draw(st.integers(lo, hi)) for lo, hi in ((1, 2), (1, 7), (1, 7), (1, 5)))
    fh, fw, co = (data.draw(st.integers(1, 4)) for _ in range(3))
    sh, sw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (b, h, w, c), dtype=np.uint8)
    wt = rng.integers(0, 256, (fh, fw, c, co), dtype=np.uint8)
    y, mn, mx, _ = run_conv(x, wt, x_rng, f_rng, (sh, sw), pad)
    expect = ref_conv(x, wt, ref_zero(*x_rng), ref_zero(*f_rng), sh, sw, pad)
    assert y.shape == expect.shape
    assert np.array_equal(y.array, expect)
    lx = f32(f32(f32(x_rng[1]) - f32(x_rng[0])) / f32(255))
    lf = f32(f32(f32(f_rng[1]) - f32(f_rng[0])) / f32(255))
    assert mx == float(f32(f32(2.0**31) * f32(lx * lf))) == -mn


# exactness at the largest sums ----------------------------------------------------------------

@pytest.mark.parametrize("x_code,w_code,x_rng,f_rng,per_tap", [
    (255, 255, (0.0, 1.0), (0.0, 1.0), 255 * 255),          # zx = zf = 0: +65025 per tap
    (0, 255, (-1.0, 0.0), (0.0, 1.0), -255 * 255),          # zx = 255: -65025 per tap
    (255, 0, (0.0, 1.0), (-3.0, -1.0), 255 * (0 - 383)),    # zf = 383 (improper, unclamped)
])
def test_adversarial_large_sums_wrap_exactly(x_code, w_code, x_rng, f_rng, per_tap,
                                            gemm_backend):
    """All taps extreme, 3x3 SAME, K = 9 * 4000 = 36000: sums beyond 2**31 wrap (§1.3)."""
    cin = 4000
    x = np.full((1, 3, 3, cin), x_code, np.uint8)
    w = np.full((3, 3, cin, 2), w_code, np.uint8)
    y, *_ = run_conv(x, w, x_rng, f_rng, padding=Padding.SAME)
    valid = np.array([[4, 6, 4], [6, 9, 6], [4, 6, 4]], np.int64)   # taps inside the image
    exact = valid * cin * per_tap
    assert abs(exact).max() > 2**31                               # the wrap really happens
    wrapped = (exact + 2**31) % 2**32 - 2**31
    assert np.array_equal(y.array[0, :, :, 0], wrapped)
    assert np.array_equal(y.array[0, :, :, 1], wrapped)


def test_random_large_k_exact(gemm_backend):
    """Random codes, K = 9 * 700 = 6300 (7 chunks), random improper zero points."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, (1, 4, 4, 700), dtype=np.uint8)
    w = rng.integers(0, 256, (3, 3, 700, 3), dtype=np.uint8)
    y, *_ = run_conv(x, w, (0.5, 3.0), (-3.0, -1.0), padding=Padding.SAME)
    assert np.array_equal(y.array, ref_conv(x, w, -51, 383, 1, 1, Padding.SAME))


def test_offset_gemm_matches_integer_product(gemm_backend):
    rng = np.random.default_rng(7)
    lhs = rng.integers(0, 256, (5, 3000), dtype=np.uint8)
    rhs = rng.integers(0, 256, (3000, 4), dtype=np.uint8)
    a, b = 10**10 + 3, -7
    got = gemm.offset_gemm(gemm.center(lhs), gemm.Rhs.from_codes(rhs), a, b)
    exact = (lhs.astype(object) - 128 + a).dot(rhs.astype(object) - 128 + b)
    assert np.array_equal(got, ((exact + 2**31) % 2**32 - 2**31).astype(np.int64))
