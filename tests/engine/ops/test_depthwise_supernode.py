"""DepthwiseSupernode_8x8p8to8 / _8x8p32to8 (nnlib op_dwise_snode_8bit.c, its d32 form;
set-up in hexagon/include/supernode_utils.h, requantization as hexagon/asm_ref/dwconv2dbbb_c.c
``dwconv2dbbb_MxN_cn`` writes the HVX kernel's arithmetic). The HVX code cannot run on the
host, so these check hand-computed vectors and an independent float64 formula."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import level_size_zero, quantize_uint8
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv import dwise_scaling
from hexscope.engine.ops.conv.conv2d import output_window
from hexscope.engine.ops.conv.depthwise_supernode import (
    depthwise_supernode_8x8p8to8,
    depthwise_supernode_8x8p32to8,
)
from hexscope.engine.ops.kernels import depthwise, dwise_requant
from hexscope.engine.ops.kernels.depthwise import depthwise_sums
from hexscope.engine.tensor import Tensor

f32 = np.float32
_HAND_X = np.arange(1, 10).reshape(1, 3, 3, 1)
_HAND_W = 128 + np.array([[1, 0, -1], [0, 2, 0], [-1, 0, 1]]).reshape(3, 3, 1, 1)


@pytest.fixture(params=["compiled", "numpy"])
def path(request, monkeypatch):
    monkeypatch.delenv("HEXSCOPE_KERNELS", raising=False)
    if request.param == "numpy":
        monkeypatch.setattr(dwise_requant, "_kernel", lambda: None)
        monkeypatch.setattr(depthwise, "_numba_kernels", lambda: None)
    elif dwise_requant._kernel() is None:
        pytest.skip("numba does not load on this machine")
    return request.param


def _s(v: float) -> Tensor:
    return Tensor.scalar(f32(v))


def _u8(a) -> Tensor:
    return Tensor.from_array(np.asarray(a, np.uint8), DType.QUINT8)


def _run(x, w, bias, *, xr=(0.0, 255.0), fr=(-128.0, 127.0), br=(-2.0**31, 2.0**31),
         out=(-64.0, 191.0), stride=(1, 1), padding=Padding.VALID, scales=None, ctx=None,
         bias32=True):
    ctx = ctx or KernelContext(1, "DepthwiseSupernode", padding=padding)
    b = (Tensor.from_array(np.asarray(bias, np.int32), DType.QINT32) if bias32
         else _u8(bias))
    extra = () if scales is None else (Tensor.from_array(np.asarray(scales, f32),
                                                         DType.FLOAT32),)
    kernel = depthwise_supernode_8x8p32to8 if bias32 else depthwise_supernode_8x8p8to8
    y, mn, mx = kernel(ctx, _u8(x), _u8(w), _s(xr[0]), _s(xr[1]), _s(fr[0]), _s(fr[1]),
                       Tensor.shape_only((1, *stride, 1)), b, _s(br[0]), _s(br[1]),
                       _s(out[0]), _s(out[1]), *extra)
    return np.asarray(y.array), float(mn.array.reshape(-1)[0]), float(mx.array.reshape(-1)[0])


def test_by_hand_unit_steps(path):
    # steps 1 and zero codes 0 (data), 128 (filter), 64 (output): gain 1, recip 0x7FFFFFFF,
    # bias 5 in unit steps: code = sum + 5 + 64 = (1 - 3 + 10 - 7 + 9) + 69 = 79
    y, mn, mx = _run(_HAND_X, _HAND_W, [5])
    assert y.reshape(-1).tolist() == [79]
    assert (mn, mx) == (-64.0, 191.0)


def test_by_hand_same_padding_skips_the_taps_outside(path):
    # SAME 3x3: the corner (0,0) sees taps (1,1),(1,2),(2,1),(2,2) of the filter:
    # 1*2 + 2*0 + 4*0 + 5*1 = 7 -> 7 + 69 = 76; the centre is the VALID case (79)
    y, _, _ = _run(_HAND_X, _HAND_W, [5], padding=Padding.SAME)
    assert y.shape == (1, 3, 3, 1)
    assert y[0, 0, 0, 0] == 76 and y[0, 1, 1, 0] == 79


def test_by_hand_a_channel_scale_scales_the_sum_not_the_bias(path):
    # k = 0.5: recip = 2**30, bias buffer (5 + 64) / 0.5 = 138, (10 + 138) * 2**30 + 2**30
    # >> 31 = 74 = 10 * 0.5 + 5 + 64
    y, _, _ = _run(_HAND_X, _HAND_W, [5], scales=[0.5])
    assert y.reshape(-1).tolist() == [74]


def test_by_hand_an_8bit_bias_with_its_zero_code(path):
    # bias range [-128, 127]: zero code 128, so code 133 is +5 steps of 1
    y, _, _ = _run(_HAND_X, _HAND_W, [133], br=(-128.0, 127.0), bias32=False)
    assert y.reshape(-1).tolist() == [79]


def test_by_hand_channels_past_the_bias_read_its_zero_code(path):
    # fill_bias_buf: "if (i >= bias_depth) biasval = bias_offset": channel 1 has no bias
    x = np.repeat(_HAND_X, 2, axis=3)
    w = np.repeat(_HAND_W, 2, axis=2)
    y, _, _ = _run(x, w, [133], br=(-128.0, 127.0), bias32=False)
    assert y.reshape(-1).tolist() == [79, 74]
    y, _, _ = _run(x, w, [5], bias32=True)
    assert y.reshape(-1).tolist() == [79, 74]
    # a bias range below 0: quantize_uint's zero code is 510 (not clamped to 255), so the
    # missing bias is still 0 (74); code 133 is (133 - 510) / 255 = -1.478 -> 72.52 -> 73
    y, _, _ = _run(x, w, [133], br=(-2.0, -1.0), bias32=False)
    assert y.reshape(-1).tolist() == [73, 74]


def test_round_up_quarter_octave_by_hand():
    # the next power of 2**(1/4) above x * 1.189 (supernode_utils.h)
    assert dwise_scaling.round_up_quarter_octave(1.0) == f32(1.4142135)
    assert dwise_scaling.round_up_quarter_octave(1.5) == f32(2.0)
    assert dwise_scaling.round_up_quarter_octave(-0.0625) == f32(-0.088388346)
    assert dwise_scaling.roundf_u32(2.0**31) == 2**31 and dwise_scaling.roundf_u32(-3.0) == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), max_size=40))
def test_roundf_u32_array_is_the_scalar_roundf_u32_per_element(values):
    # the per-channel multipliers are made in one numpy pass; each must be the scalar C's
    x = np.array(values + [0.5, -0.5, 2.0**32, 4294967040.0, 1.4999999], np.float32)
    assert dwise_scaling.roundf_u32_array(x).tolist() == [dwise_scaling.roundf_u32(v) for v in x]


def test_a_free_max_starts_at_the_first_guess(path):
    # from [0, 0.125] the gain would be 2040 > 1.75: the first guess sets max to 255 sum
    # steps / 1.75 = 145.714; shamt 1, recip 1.75 * 2**30: ((15 << 1) * recip + 2**30) >> 31
    # = floor(26.25 + 0.5) = 26
    y, mn, mx = _run(_HAND_X, _HAND_W, [5], out=(0.0, np.inf))
    assert (mn, mx) == (0.0, float(f32(f32(255.0) * f32(f32(1.0) / f32(1.75)))))
    assert y.reshape(-1).tolist() == [26]


def test_a_free_max_grows_by_quarter_octaves_and_stays_in_the_node(path):
    ctx = KernelContext(1, "DepthwiseSupernode", padding=Padding.VALID)
    # real output 10 + 500 = 510 > 145.714: code 892 at gain 1.75 -> the max moves to the
    # quarter octave past 0.5714 * 892.5 = 510.0: 510 * 1.189 = 606.5 -> 2**(-3/4) * 1024
    y, mn, mx = _run(_HAND_X, _HAND_W, [500], out=(0.0, np.inf), ctx=ctx)
    assert mn == 0.0 and mx == pytest.approx(2 ** -0.75 * 1024, rel=1e-6)
    assert y.reshape(-1).tolist() == [round(510 * 255 / mx)]
    assert ctx.state["dwise_range"].mx == f32(mx)
    y2, mn2, mx2 = _run(_HAND_X, _HAND_W, [500], out=(0.0, np.inf), ctx=ctx)
    assert (mn2, mx2) == (mn, mx) and np.array_equal(y, y2)


def test_no_range_after_four_retries_fails_as_the_device():
    # a huge output (bias 2**30 unit steps) from a range starting at 0.125: each retry only
    # moves a quarter octave past the extreme code the int32 arithmetic saw
    with pytest.raises(KernelError, match="can't find range|Final too big"):
        _run(_HAND_X, _HAND_W, [2**30], out=(0.0, np.inf), xr=(0.0, 0.001), fr=(-0.001, 0.001))


@pytest.mark.parametrize("change, message", [
    ({"w": np.full((3, 9, 1, 1), 128)}, "width 9 > 7"),
    ({"w": np.full((3, 3, 1, 2), 128), "bias": [0, 0]}, "multiplier 2"),
    ({"w": np.full((1, 3, 1, 1), 128)}, "height >= 2"),
    ({"stride": (1, 3)}, "stride width 3"),
    ({"w": np.full((3, 4, 1, 1), 128)}, "filter width 4"),
    ({"scales": [0.5, 0.5]}, "expected size 1"),
    ({"scales": [0.0001]}, "bad channel scale"),
])
def test_the_device_refusals(change, message):
    args = {"x": np.ones((1, 5, 9, 1)), "w": _HAND_W, "bias": [0]} | change
    x, w, bias = args.pop("x"), args.pop("w"), args.pop("bias")
    with pytest.raises(KernelError, match=message):
        _run(x, w, bias, **args)


def _ideal(x, w, bias, xr, fr, br, scales, padding, stride, mn, mx):
    """float64: the exact sums of (x - zx)(w - zf) (zero codes as the C finds them: rule ZB
    for the data, ZA for the filter, spec §1.4), in real units, x k, + the real bias, in
    output steps. An independent loop over the taps (not the numba kernel)."""
    zx, _ = level_size_zero(xr[0], xr[1])
    zf = quantize_uint8(0.0, fr[0], fr[1])
    fh, fw = w.shape[:2]
    (_, h, wd, c), (sh, sw) = x.shape, stride
    rows = output_window(h, fh, sh, padding)
    cols = output_window(wd, fw, sw, padding)
    s = np.zeros((1, rows.out, cols.out, c))
    for oy in range(rows.out):
        for ox in range(cols.out):
            for fy in range(fh):
                for fx in range(fw):
                    iy, ix = oy * sh - rows.before + fy, ox * sw - cols.before + fx
                    if 0 <= iy < h and 0 <= ix < wd:
                        s[0, oy, ox] += (x[0, iy, ix] - zx) * (w[fy, fx, :, 0] - zf)
    real = s * ((xr[1] - xr[0]) / 255) * ((fr[1] - fr[0]) / 255)
    if scales is not None:
        real = real * np.asarray(scales, np.float64)
    real = real + np.asarray(bias, np.float64) * ((br[1] - br[0]) / 2**32)
    return (real - mn) / ((mx - mn) / 255.0)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), fw=st.sampled_from([3, 5, 7]), fh=st.integers(2, 4),
       sw=st.sampled_from([1, 2]), sh=st.integers(1, 3), c=st.integers(1, 5),
       padding=st.sampled_from([Padding.SAME, Padding.VALID]),
       free=st.sampled_from(["both", "max", "none"]), scaled=st.booleans())
def test_within_a_step_of_the_float64_requantization(data, fw, fh, sw, sh, c, padding, free,
                                                     scaled):
    h, wd = data.draw(st.integers(fh, fh + 4)), data.draw(st.integers(fw, fw + 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = rng.integers(0, 256, (1, h, wd, c))
    w = rng.integers(0, 256, (fh, fw, c, 1))
    # ranges holding 0 (a range that misses it moves the data by its clamped zero code)
    xr = (data.draw(st.floats(-3.0, 0.0)), data.draw(st.floats(0.05, 3.0)))
    fr = (data.draw(st.floats(-1.0, 0.0)), data.draw(st.floats(0.01, 1.0)))
    br = (-4.0, 4.0)
    bias = rng.integers(-2**30, 2**30, c)
    scales = rng.uniform(1 / 1024, 1.0, c).astype(f32) if scaled else None
    out = {"both": (-np.inf, np.inf), "max": (0.0, np.inf), "none": (-8.0, 8.0)}[free]
    in_step = (xr[1] - xr[0]) / 255
    sum_step = in_step * (fr[1] - fr[0]) / 255
    try:
        y, mn, mx = _run(x, w, bias, xr=xr, fr=fr, br=br, out=out, stride=(sh, sw),
                         padding=padding, scales=scales)
    except KernelError as e:     # only where bias - out_min is beyond int32 sum steps
        assert "Final too big" in str(e)
        k = np.ones(c) if scales is None else np.asarray(scales, np.float64)
        if free != "both":       # out_min is the input's (a free min has moved meanwhile)
            folded = (bias * (br[1] - br[0]) / 2**32 - out[0]) / sum_step / k
            assert np.abs(folded).max() > 2**31 * 0.99
        return
    ideal = _ideal(x, w, bias, xr, fr, br, scales, padding, (sh, sw), mn, mx)
    # the C's roundings: the bias buffer to a sum step (half a sum step: half the gain
    # g <= 1.75 of an output step), the final shift (half a step), the multiplier
    # round(g k 2**31) (relative 0.5 / multiplier: "lossless unless final_scaling < 1/128"),
    # float32 steps
    gain = sum_step / ((mx - mn) / 255)
    recip = gain * (1.0 if scales is None else float(np.min(scales))) * 2**31
    top = max(1.0, float(np.abs(ideal).max()))
    tol = 0.5 + 0.5 * gain + top * (0.5 / recip + 1e-5)
    assert np.all(np.abs(y - np.clip(ideal, 0, 255)) <= tol)
    if free == "max":     # a free max is the first guess (255 sum steps / 1.75, or the
        # initial 0.125) or a quarter octave that round_up_quarter_octave picked
        mant = mx / 2.0 ** np.floor(np.log2(mx))
        quarter = min(abs(mant - 2 ** (q / 4)) for q in range(5)) < 1e-6
        first = abs(mx * 1.75 / (255 * sum_step) - 1) < 1e-5 or mx == 0.125
        assert quarter or first, mx
    if free != "none":    # the search stops only once every output fits its free bounds
        assert ideal.max() <= 255 + tol or free == "none"
        if free == "both":
            assert ideal.min() >= -tol


# --- the integer path against nnlib's C model of the HVX kernels ---------------------------
GOLDEN = Path(__file__).parents[2] / "data" / "oracle" / "dwconv2dbbb_mxn_cn.json"


def _golden() -> list[dict]:
    return json.loads(GOLDEN.read_text())["cases"]


def _arr(spec: dict) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(spec["hex"]), np.uint8).reshape(spec["shape"])


@pytest.mark.parametrize("case", _golden(), ids=lambda c: f"{c['padding']}-{c['stride']}-"
                         f"{c['x']['shape']}-{c['w']['shape'][:2]}")
def test_the_integer_path_is_the_c_model_of_the_hvx_kernel(case, path):
    # exported by tests/oracle/py/campaigns_dwise.py from dwconv2dbbb_MxN_cn
    # (hexagon/asm_ref/dwconv2dbbb_c.c): padded d32 input, rearranged filter, bias buffer,
    # one multiplier and shift; padded channels (sum 0, bias 0) join the min/max
    x, w, zx, zf = _arr(case["x"]), _arr(case["w"]), case["zx"], case["zf"]
    (_, h, wd, c), (fh, fw) = x.shape, w.shape[:2]
    sh, sw = case["stride"]
    pad = Padding[case["padding"]]
    rows, cols = output_window(h, fh, sh, pad), output_window(wd, fw, sw, pad)
    sums = depthwise_sums(x, w, zx, zf, sh, sw, rows.before, cols.before, rows.out, cols.out)
    gemsumb = w.reshape(-1, c).astype(np.int64).sum(0) - zf * fh * fw
    dd = (c + 31) // 32 * 32
    full = np.zeros(sums.shape[:3] + (dd,), np.int32)
    full[..., :c] = sums
    bias = np.zeros(dd, np.int64)
    bias[:c] = np.asarray(case["bias"], np.int64) + gemsumb * zx
    codes, lo, hi = dwise_requant.dwise_requantize(full, bias, np.full(dd, case["recip"]),
                                                   case["shamt"])
    assert codes[..., :c].tobytes().hex() == case["codes"]
    assert (lo, hi) == (case["min"], case["max"])


@settings(max_examples=300, deadline=None)
@given(x=st.floats(2.0**-30, 2.0**30), sign=st.sampled_from([1.0, -1.0]))
def test_round_up_quarter_octave_is_a_power_of_the_fourth_root_of_2_above_x(x, sign):
    # supernode_utils.h: "the first power of 2^(1/4) which is > x, and then ... the one after
    # that. So y/x > 1.189 but <= 1.414" (float32 steps: a few ulps either side)
    y = float(dwise_scaling.round_up_quarter_octave(f32(sign * x)))
    xf = abs(float(f32(x)))
    assert np.sign(y) == sign
    assert 1.189 * (1 - 1e-6) < abs(y) / xf <= 1.4143
    q = np.log2(abs(y)) * 4
    assert abs(q - round(q)) < 1e-5



def test_the_set_up_kept_in_the_node_follows_its_inputs(path):
    """The filter terms and scaling kept between runs (same Const tensors) give what the node
    gives when it works them out again, run after run, and a changed input range, bias or
    filter is not served from them."""
    rng = np.random.default_rng(5)
    x = _u8(rng.integers(0, 256, (1, 6, 7, 8)))
    w, w2 = (_u8(rng.integers(0, 256, (3, 3, 8, 1))) for _ in range(2))
    bias = Tensor.from_array(rng.integers(-5000, 5000, 8).astype(np.int32), DType.QINT32)
    other = Tensor.from_array(np.full(8, 7000, np.int32), DType.QINT32)
    stride = Tensor.shape_only((1, 1, 1, 1))

    def run(ctx, filt, b, xr, keep):
        if not keep:
            ctx.state.pop("dwise_filter", None)
            ctx.state.pop("dwise_scaling", None)
        y, mn, mx = depthwise_supernode_8x8p32to8(
            ctx, x, filt, _s(xr[0]), _s(xr[1]), _s(-1.0), _s(1.0), stride, b, _s(-100.0),
            _s(100.0), _s(-np.inf), _s(np.inf))
        return y.array.tolist(), mn.array.tolist(), mx.array.tolist()

    kept, redone = (KernelContext(1, "DepthwiseSupernode", padding=Padding.SAME)
                    for _ in range(2))
    history = [(w, bias, (-1.0, 3.0))] * 3 + [(w, bias, (-2.0, 5.0)), (w, other, (-2.0, 5.0)),
                                              (w2, other, (-2.0, 5.0)), (w, bias, (-1.0, 3.0))]
    outputs = set()
    for filt, b, xr in history:
        got = run(kept, filt, b, xr, True)
        assert got == run(redone, filt, b, xr, False)
        outputs.add(str(got[0]))
    assert "dwise_scaling" in kept.state and len(outputs) >= 4


@settings(max_examples=40, deadline=None)
@given(data=st.data(), fh=st.integers(2, 4), fw=st.sampled_from([3, 5, 7]),
       sh=st.integers(1, 3), sw=st.integers(1, 2), c=st.integers(1, 40),
       shamt=st.integers(0, 31))
def test_the_fused_pass_is_the_sums_then_the_requantization(data, fh, fw, sh, sw, c, shamt):
    """depthwise_requantized against depthwise_sums then dwise_requantize (codes and the
    min/max the range retry reads), with biases and multipliers up to their limits."""
    from hexscope.engine.ops.kernels.depthwise import depthwise_requantized

    if depthwise._numba_kernels() is None:
        pytest.skip("numba does not load on this machine")
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    h, w = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 12))
    top, left = data.draw(st.integers(0, fh - 1)), data.draw(st.integers(0, fw - 1))
    oh, ow = (h + top + 1 - fh) // sh + 1, (w + left + 1 - fw) // sw + 1
    if oh < 1 or ow < 1:
        return
    x = rng.integers(0, 256, (2, h, w, c), np.uint8)
    f = rng.integers(0, 256, (fh, fw, c, 1), np.uint8)
    zx, zf = (data.draw(st.integers(0, 255)) for _ in range(2))
    big = data.draw(st.sampled_from([2**8, 2**20, 2**31]))
    bias = rng.integers(-big, big, c, dtype=np.int64)
    recip = rng.integers(0, 2**31, c, dtype=np.int64)
    got = depthwise_requantized(x, f, zx, zf, sh, sw, top, left, oh, ow, bias, recip, shamt)
    sums = depthwise_sums(x, f, zx, zf, sh, sw, top, left, oh, ow)
    want = dwise_requant.dwise_requantize(sums, bias, recip, shamt)
    assert got is not None and np.array_equal(got[0], want[0]) and got[1:] == want[1:]


@pytest.mark.parametrize(("w_before", "filt_w", "message"), [
    (0, 3, "Need at least 1 left pad"),
    (1, 5, "output left padding would be -1"),
    (1, 3, None),
    (4, 7, None),
])
def test_the_d32_form_refuses_a_left_padding_nnlib_cannot_lay_out(w_before, filt_w, message):
    """``dwise_supernode_execute`` refuses an input without left padding; with less left
    padding than a SAME filter's reach before, nnlib's output padding
    ((in_left_pad - required_w_before) / stride, op_dwise_snode_8bit.c) goes negative: the
    d32 form raised an uncaught ValueError there (found under QEMU by the HVX oracle)."""
    from hexscope.engine.d32 import D32Padding
    from hexscope.engine.errors import KernelError
    from hexscope.engine.ops.registry import REGISTRY

    rng = np.random.default_rng(w_before + filt_w)
    pad = D32Padding(4, 4, w_before, (-(8 + w_before)) & 3, 0, 0)
    x = Tensor.from_array(rng.integers(0, 256, (1, 4, 8, 32), dtype=np.uint8),
                          DType.QUINT8).to_d32(pad)
    w = _u8(rng.integers(0, 256, (filt_w, filt_w, 32, 1)))
    args = (x, w, _s(0.0), _s(255.0), _s(-128.0), _s(127.0), Tensor.shape_only((1, 1, 1, 1)),
            Tensor.from_array(np.zeros(32, np.int32), DType.QINT32), _s(-2.0**31),
            _s(2.0**31), _s(-64.0), _s(191.0))
    ctx = KernelContext(1, "DepthwiseSupernode_8x8p32to8_d32", padding=Padding.SAME)
    kernel = REGISTRY.get("DepthwiseSupernode_8x8p32to8_d32").kernel
    if message is None:
        y = kernel(ctx, *args)[0]
        assert y.shape == (1, 4, 8, 32) and y.padding.w_before >= 0
    else:
        with pytest.raises(KernelError, match=message):
            kernel(ctx, *args)
