"""Supernode_8x8p8to8: the fused convolution chain, after nnlib's plain-C
``supernode_execute_ref`` / ``supernode_check_ref`` (hexagon/ops/src/op_supernode.c).

Golden vectors: ``tests/data/oracle/supernode_8x8p8to8_ref.json`` holds cases drawn by the
nnlib host oracle (``../shared/oracle``, campaign Supernode_8x8p8to8_ref, exported with its
``export_cases.py``) with the outputs of the C compiled on x86 with Hexagon's float-to-int
conversions emulated; 839 of 839 comparable oracle cases were bit exact when this was written,
and every case where the C divides by zero fails here too.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv import supernode
from hexscope.engine.ops.conv.conv2d import output_window
from hexscope.engine.ops.conv.supernode import initial_range, requantize_sums, supernode_8x8p8to8
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.tensor import Tensor

GOLDEN = Path(__file__).parents[2] / "data" / "oracle" / "supernode_8x8p8to8_ref.json"
# NA padding with small images and strides 1-3 (issue 32 item 4): campaign
# Supernode_8x8p8to8_NA, exported by tests/oracle/py/campaigns_conv25.py
GOLDEN_NA = GOLDEN.with_name("supernode_8x8p8to8_na.json")
_DT = {"u8": (np.uint8, DType.QUINT8), "f32": (np.float32, DType.FLOAT32)}


def _tensor(spec: dict) -> Tensor:
    shape = tuple(spec["shape"])
    if spec["hex"] is None:
        return Tensor.shape_only(shape)
    np_type, dtype = _DT[spec["dtype"]]
    data = np.frombuffer(bytes.fromhex(spec["hex"]), np_type).reshape(shape)
    return Tensor.from_array(data.copy(), dtype)


def _w(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def _run(x, w, bias, out_range, *, x_rng=(0.0, 255.0), f_rng=(0.0, 255.0),
         b_rng=(0.0, 255.0), padding=Padding.SAME, ctx=None):
    ctx = ctx or KernelContext(0x20, "Supernode_8x8p8to8", padding=padding)
    y, mn, mx = supernode_8x8p8to8(
        ctx, Tensor.from_array(np.asarray(x, np.uint8), DType.QUINT8),
        Tensor.from_array(np.asarray(w, np.uint8), DType.QUINT8),
        _w(x_rng[0]), _w(x_rng[1]), _w(f_rng[0]), _w(f_rng[1]),
        Tensor.shape_only((1, 1, 1, 1)),
        Tensor.from_array(np.asarray(bias, np.uint8).reshape(1, 1, 1, -1), DType.QUINT8),
        _w(b_rng[0]), _w(b_rng[1]), _w(out_range[0]), _w(out_range[1]))
    return y.array.reshape(-1).tolist(), float(mn.array.reshape(-1)[0]), \
        float(mx.array.reshape(-1)[0]), ctx


X22 = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)          # codes = reals (range 0..255)
IDENTITY = np.array([1, 0, 0, 1]).reshape(2, 2, 1, 1)     # taps (0,0) and (1,1)


def test_fixed_range_by_hand():
    # SAME, stride 1: sums [1+4, 2, 3, 4] (taps past the image skipped); zero codes 0, steps
    # of 1, so the bias code 2 adds 2: [7, 4, 5, 6]. Range [0, 10] is fixed: 10 steps,
    # recip = 0xff0000 // 10 = 1671168, out = (s * recip + 2**15) >> 16.
    out, mn, mx, _ = _run(X22, IDENTITY, [2], (0.0, 10.0))
    assert out == [(s * 1671168 + 32768) >> 16 for s in (7, 4, 5, 6)] == [179, 102, 128, 153]
    assert (mn, mx) == (0.0, 10.0)


def test_na_padding_with_an_output_smaller_than_the_stride_pads_nothing():
    # Issue 32 item 4. supernode_execute_ref (op_supernode.c) takes its padding before from
    # nn_pad_compute_before(out_height, ...): with NA padding and out_height 1 < stride 2,
    # nn_pad_compute_outsize_padding (nn_graph_padding.h) returns pad_before 0, so the
    # window is rows 0..4 and only x[0], x[1] meet the taps w[0], w[1]: 1*1 + 2*2 = 5.
    # recip = 0xff0000 // 10; (5 * 1671168 + 2**15) >> 16 = 128, nnlib's
    # Supernode_8x8p8to8_ref output (tests/oracle/py/repro.py sn_na). It gave 204 (sum 8).
    ctx = KernelContext(0x20, "Supernode_8x8p8to8", padding=Padding.NA)
    y, mn, mx = supernode_8x8p8to8(
        ctx, Tensor.from_array(np.array([1, 2], np.uint8).reshape(1, 2, 1, 1), DType.QUINT8),
        Tensor.from_array(np.arange(1, 6, dtype=np.uint8).reshape(5, 1, 1, 1), DType.QUINT8),
        _w(0.0), _w(255.0), _w(0.0), _w(255.0), Tensor.shape_only((1, 2, 1, 1)),
        Tensor.from_array(np.zeros((1, 1, 1, 1), np.uint8), DType.QUINT8),
        _w(0.0), _w(255.0), _w(0.0), _w(10.0))
    assert y.array.reshape(-1).tolist() == [(5 * (0xFF0000 // 10) + 2**15) >> 16] == [128]


@given(st.integers(1, 12), st.integers(1, 8), st.integers(1, 4))
def test_output_window_pads_nothing_where_the_output_is_empty(n, f, s):
    # nn_pad_compute_outsize_padding: pad_before stays 0 unless an output exists
    for padding in Padding.NA, Padding.SAME, Padding.SAME_CAFFE, Padding.VALID:
        win = output_window(n, f, s, padding)
        assert win.before == 0 or win.out > 0
    if n < s:
        assert output_window(n, f, s, Padding.NA) == Window(n, f, s, 0, 0)


def test_free_maximum_doubles_from_1_128_and_stays_in_the_node():
    # A Relu's range: min 0 fixed, max +inf free -> starts at 1/128. Steps: data 0.1, filter
    # 0.01, sums 0.001; codes [10,20,30,40] through the identity (100 = 1.0) give 5.0, 2.0,
    # 3.0, 4.0 (the largest, without the bias, is 5.0): 1/128 doubles to 8.0. With the bias
    # 2.0 the outputs are 7, 4, 5, 6 of 8 -> 255 * [7/8, 4/8, 5/8, 6/8].
    x, w = X22 * 10, IDENTITY * 100
    rngs = {"x_rng": (0.0, 25.5), "f_rng": (0.0, 2.55)}
    out, mn, mx, ctx = _run(x, w, [2], (0.0, np.inf), **rngs)
    assert (mn, mx) == (0.0, 8.0)
    np.testing.assert_allclose(out, [223.1, 127.5, 159.4, 191.3], atol=1.0)
    # The next run starts from the widened range, as the C's supernode_info does.
    _, mn2, mx2, _ = _run(x // 10, w, [0], (0.0, np.inf), ctx=ctx, **rngs)
    assert (mn2, mx2) == (0.0, 8.0)
    _, _, fresh_max, _ = _run(x // 10, w, [0], (0.0, np.inf), **rngs)
    assert fresh_max == 0.5                  # 0.5 real is the largest: 1/128 * 2**6


def test_a_range_narrower_than_half_a_step_fails_at_once():
    # steps of 1.0 (both ranges 0..255): the initial 1/128 is 0 steps wide, and the C divides
    # by it before it looks at the sums (a crash on the device)
    with pytest.raises(KernelError, match="divides by zero"):
        _run(X22, IDENTITY, [2], (0.0, np.inf))


def test_initial_range_follows_supernode_check_ref():
    assert initial_range(-np.inf, np.inf) == (-1 / 128, 1 / 128, False, False)
    assert initial_range(0.0, np.inf) == (0.0, 1 / 128, True, False)
    assert initial_range(-np.inf, 6.0) == (-6.0, 6.0, False, True)
    assert initial_range(-2.0, 3.0) == (-2.0, 3.0, True, True)


def test_a_fixed_range_of_zero_steps_fails():
    with pytest.raises(KernelError, match="divides by zero"):
        _run(X22, IDENTITY, [0], (0.0, 1e-9), f_rng=(0.0, 255.0), x_rng=(0.0, 2.55e5))


def test_bias_shorter_than_the_output_depth_fails():
    with pytest.raises(KernelError, match="bias has 1 values but the filter makes 2"):
        _run(X22, np.ones((1, 1, 1, 2)), [0], (0.0, 10.0))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=4, max_size=4),
       st.lists(st.integers(0, 255), min_size=4, max_size=4), st.integers(0, 255))
def test_a_free_maximum_is_the_smallest_power_of_two_over_128_holding_the_sums(xs, ws, b):
    rngs = {"x_rng": (0.0, 25.5), "f_rng": (0.0, 2.55)}      # steps 0.1 x 0.01
    _, mn, mx, _ = _run(np.array(xs).reshape(1, 2, 2, 1), np.array(ws).reshape(2, 2, 1, 1),
                        [b], (0.0, np.inf), **rngs)
    k = np.log2(mx * 128)
    assert mn == 0.0 and k == int(k) and k >= 0
    x, w = np.array(xs).reshape(2, 2), np.array(ws).reshape(2, 2)
    sums = [x[0, 0] * w[0, 0] + x[0, 1] * w[0, 1] + x[1, 0] * w[1, 0] + x[1, 1] * w[1, 1],
            x[0, 1] * w[0, 0] + x[1, 1] * w[1, 0], x[1, 0] * w[0, 0] + x[1, 1] * w[0, 1],
            x[1, 1] * w[0, 0]]
    largest = max(sums) * 0.1 * 0.01
    assert mx >= largest * (1 - 1e-6)
    assert k == 0 or mx / 2 < largest * (1 + 1e-6)


def _golden_cases() -> list[dict]:
    return json.loads(GOLDEN.read_text())["cases"]


def _na_cases() -> list[dict]:
    return json.loads(GOLDEN_NA.read_text())["cases"]


@pytest.fixture(params=["compiled", "numpy", "general"])
def epilogue(request, monkeypatch):
    """The output step three ways: the compiled kernel, numpy's 32-bit passes, and the
    general int64 formula (what the other two must equal)."""
    import functools

    from hexscope.engine.ops.kernels import compiled

    monkeypatch.delenv("HEXSCOPE_KERNELS", raising=False)
    if request.param == "compiled" and compiled.kernel("supernode_epilogue") is None:
        pytest.skip("the compiled kernels do not load on this machine")
    if request.param != "compiled":
        monkeypatch.setenv("HEXSCOPE_KERNELS", "numpy")
    if request.param == "general":
        monkeypatch.setattr(supernode, "requantize_sums",
                            functools.partial(requantize_sums, fast=False))
    return request.param


@pytest.mark.parametrize("case", _golden_cases() + _na_cases(), ids=lambda c: c["desc"][:60])
def test_bit_exact_with_the_c_ref(case, epilogue):
    inputs = [_tensor(t) for t in case["inputs"]]
    ctx = KernelContext(0x20, "Supernode_8x8p8to8_ref", padding=Padding.parse(case["padding"]))
    if "fails" in case:
        with pytest.raises(KernelError):
            supernode_8x8p8to8(ctx, *inputs)
        return
    outs = supernode_8x8p8to8(ctx, *inputs)
    for got, want in zip(outs, case["outputs"], strict=True):
        assert list(got.shape) == want["shape"]
        assert np.asarray(got.array).tobytes().hex() == want["hex"], case["desc"]


def test_the_na_golden_file_has_outputs_smaller_than_the_stride():
    small = 0
    for case in _na_cases():
        _, h, w, _ = case["inputs"][0]["shape"]
        fh, fw = case["inputs"][1]["shape"][:2]
        _, sh, sw, _ = case["inputs"][6]["shape"]
        rows = output_window(h, fh, sh, Padding.NA).out
        cols = output_window(w, fw, sw, Padding.NA).out
        small += (0 < rows < sh) or (0 < cols < sw)
    assert small >= 10


def test_the_golden_file_covers_every_kind_of_output_range():
    descs = " ".join(c["desc"] for c in _golden_cases())
    for kind in ("qdown (-inf,inf)", "relu (0,inf)", "relux (0,m)", "fixed (-m,m)",
                 "(-inf, m)"):
        assert kind in descs
    assert any("fails" in c for c in _golden_cases())


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from([2**8, 2**16, 2**24, 2**31 - 1]),
       st.integers(0, 0x00FF0000), st.floats(-2.0**31, 2.0**31, width=32))
def test_the_output_step_is_the_same_on_every_path(data, scale, recip, offset):
    """Compiled kernel, numpy passes and the general int64 formula agree, including sums and
    offsets at the edges where the fast paths must hand over (wrap, saturation)."""
    from hexscope.engine.ops.kernels import compiled

    n, c = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 9))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    sums = rng.integers(-scale, scale, (n, c), dtype=np.int64).clip(-2**31, 2**31 - 1)
    sums = sums.astype(np.int32)
    bias = rng.integers(-scale, scale, c, dtype=np.int64).clip(-2**31, 2**31 - 1)
    bounds = (int(sums.min()), int(sums.max()))
    offset = np.float32(offset)
    want = requantize_sums(sums.copy(), bias, offset, recip, bounds, fast=False)
    assert np.array_equal(requantize_sums(sums.copy(), bias, offset, recip, None), want)
    kernel = compiled.kernel("supernode_epilogue")
    if kernel is not None:
        assert np.array_equal(requantize_sums(sums.copy(), bias, offset, recip, bounds), want)
    import os
    os.environ["HEXSCOPE_KERNELS"] = "numpy"
    try:
        got = requantize_sums(sums.copy(), bias, offset, recip, bounds)
    finally:
        del os.environ["HEXSCOPE_KERNELS"]
    assert np.array_equal(got, want)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([(0.0, np.inf), (-np.inf, np.inf), (-np.inf, 6.0), (-2.0, 3.0)]),
       st.floats(2.0**-20, 2.0**-7, width=32),
       st.lists(st.tuples(st.integers(0, 2**20), st.integers(-2**20, 0)), min_size=1,
                max_size=8))
def test_the_remembered_fit_gives_what_widen_range_gives(out_range, level, sums):
    """fitted_offset skips widen_range for sums inside ones that already fitted the same
    range: run after run it must give the offset and the range widen_range gives."""
    from hexscope.engine.errors import KernelError
    from hexscope.engine.ops.conv.supernode import fitted_offset, widen_range

    level = np.float32(level)
    memo = list(initial_range(*out_range))
    plain = list(memo)
    for maxsum, minsum in sums:
        try:
            want = widen_range(maxsum, minsum, level, plain)
        except KernelError:
            with pytest.raises(KernelError):
                fitted_offset(maxsum, minsum, level, memo)
            return
        assert fitted_offset(maxsum, minsum, level, memo) == want
        assert [float(v) for v in memo] == [float(v) for v in plain]
