"""QuantizedDepthwiseConv2d_8x8to32, after nnlib's ``depthwiseconv2d_execute_ref``
(hexagon/ops/src/op_depthwiseconv.c).

Golden vectors: ``tests/data/oracle/quantized_depthwiseconv2d_8x8to32_ref.json``, campaign
QuantizedDepthwiseConv2d_8x8to32_small of ``tests/oracle/py/campaigns_conv25.py`` (its
``export`` command), with the outputs of nnlib's C compiled on x86. Its failing cases are
outputs larger than declared ("output too small"), which the executor's capacity check
(``OutputDef.capacity``, nnlib's compute_max_size_with_pad) refuses.
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
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.conv2d import quantized_conv2d_8x8to32
from hexscope.engine.ops.conv.depthwise import (
    depthwise_reference,
    quantized_depthwiseconv2d_8x8to32,
)
from hexscope.engine.ops.kernels import depthwise
from hexscope.engine.tensor import Tensor

GOLDEN = Path(__file__).parents[2] / "data" / "oracle" / \
    "quantized_depthwiseconv2d_8x8to32_ref.json"
_DT = {"u8": (np.uint8, DType.QUINT8), "f32": (np.float32, DType.FLOAT32),
       "i32": (np.int32, DType.INT32)}


def _tensor(spec: dict) -> Tensor:
    shape = tuple(spec["shape"])
    if spec["hex"] is None:
        return Tensor.shape_only(shape)
    np_type, dtype = _DT[spec["dtype"]]
    return Tensor.from_array(np.frombuffer(bytes.fromhex(spec["hex"]), np_type)
                             .reshape(shape).copy(), dtype)


def _w(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def _u8(a) -> Tensor:
    return Tensor.from_array(np.asarray(a, np.uint8), DType.QUINT8)


@pytest.fixture(params=["compiled", "numpy"])
def path(request, monkeypatch):
    monkeypatch.delenv("HEXSCOPE_KERNELS", raising=False)
    if request.param == "numpy":
        monkeypatch.setattr(depthwise, "_numba_kernels", lambda: None)
    elif depthwise._numba_kernel() is None:
        pytest.skip("numba does not load on this machine")
    return request.param


def _cases() -> list[dict]:
    return json.loads(GOLDEN.read_text())["cases"]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["desc"][:70])
def test_bit_exact_with_the_c_ref(case, path):
    inputs = [_tensor(t) for t in case["inputs"]]
    ctx = KernelContext(0x20, "QuantizedDepthwiseConv2d_8x8to32",
                        padding=Padding.parse(case["padding"]))
    y, mn, mx = quantized_depthwiseconv2d_8x8to32(ctx, *inputs)
    fits = y.raw.nbytes <= OutputDef(tuple(case["declared"][0]), 4).capacity()
    if "fails" in case:
        assert "output too small" in case["fails"] and not fits
        return
    assert fits
    for got, want in zip((y, mn, mx), case["outputs"], strict=True):
        assert list(got.shape) == want["shape"]
        assert np.asarray(got.array).tobytes().hex() == want["hex"], case["desc"]


def test_the_golden_file_covers_the_edges():
    descs = " ".join(c["desc"] for c in _cases())
    for kind in ("SAME", "VALID", "NA", "SAME_CAFFE", "s(3, 3)", "min==max", "min>max",
                 "positive (0 outside)", "relu6"):
        assert kind in descs, kind
    assert any(c["inputs"][1]["shape"][3] > 1 for c in _cases())        # multipliers


def test_by_hand_with_a_multiplier_and_padding(path):
    # x codes [1, 2 | 3, 4] (1x1x2x2: two pixels, two channels), filter 1x2 taps, multiplier 2,
    # SAME: out width 2, padding before (2-1 - 1)//2 = 0, the second pixel's second tap past
    # the image (skipped). Ranges [0, 255]: codes are reals, zero codes 0.
    # channel 0: w[0,:,0,:] = [[1, 10], [2, 20]]; channel 1: [[3, 30], [4, 40]].
    # pixel 0: c0 (1*1 + 3*2, 1*10 + 3*20) = (7, 70); c1 (2*3 + 4*4, 2*30 + 4*40) = (22, 220)
    # pixel 1: c0 (3*1, 3*10) = (3, 30); c1 (4*3, 4*30) = (12, 120)
    x = np.array([1, 2, 3, 4]).reshape(1, 1, 2, 2)
    w = np.array([[1, 10], [3, 30], [2, 20], [4, 40]]).reshape(1, 2, 2, 2)
    ctx = KernelContext(1, "QuantizedDepthwiseConv2d_8x8to32", padding=Padding.SAME)
    y, mn, mx = quantized_depthwiseconv2d_8x8to32(
        ctx, _u8(x), _u8(w), _w(0), _w(255), _w(0), _w(255), Tensor.shape_only((1, 1, 1, 1)))
    assert y.dtype is DType.QINT32
    assert y.array.reshape(-1).tolist() == [7, 70, 22, 220, 3, 30, 12, 120]
    assert float(mx.array.reshape(-1)[0]) == float(np.float32(2.0**31))      # step 1 x 1


def test_zero_codes_outside_the_codes_wrap_as_int32(path):
    # x range [1, 2]: quantize_int(0) = round(-1 * 255 / 1) = -255 (not clamped);
    # filter range [-2**31 * 255 / 2, ...] puts zf far out: products wrap in int32
    ctx = KernelContext(1, "QuantizedDepthwiseConv2d_8x8to32", padding=Padding.VALID)
    x, w = np.full((1, 1, 1, 1), 200), np.full((1, 1, 1, 1), 7)
    y, _, _ = quantized_depthwiseconv2d_8x8to32(
        ctx, _u8(x), _u8(w), _w(1.0), _w(2.0), _w(-1e9), _w(1.0),
        Tensor.shape_only((1, 1, 1, 1)))
    zf = int(np.clip(np.round(np.float32(1e9) * np.float32(255) / np.float32(1e9 + 1)),
                     -2**31, 2**31 - 1))
    want = ((200 + 255) * (7 - zf) + 2**31) % 2**32 - 2**31
    assert y.array.reshape(-1).tolist() == [want]


def test_a_bad_filter_depth_or_stride_fails():
    ctx = KernelContext(1, "QuantizedDepthwiseConv2d_8x8to32", padding=Padding.SAME)
    x = _u8(np.zeros((1, 2, 2, 3)))
    with pytest.raises(KernelError, match="depth"):
        quantized_depthwiseconv2d_8x8to32(ctx, x, _u8(np.zeros((1, 1, 2, 1))), _w(0), _w(1),
                                          _w(0), _w(1), Tensor.shape_only((1, 1, 1, 1)))
    with pytest.raises(KernelError, match="stride"):
        quantized_depthwiseconv2d_8x8to32(ctx, x, _u8(np.zeros((1, 1, 3, 1))), _w(0), _w(1),
                                          _w(0), _w(1), Tensor.shape_only((1, 0, 1, 1)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from([Padding.SAME, Padding.VALID, Padding.NA, Padding.SAME_CAFFE]),
       st.integers(1, 6), st.data())
def test_multiplier_1_is_a_convolution_with_a_diagonal_filter(fh, fw, sh, sw, padding, c, data):
    # off the diagonal the filter holds its zero code (128 for [-1, 1]): (w - zf) = 0 there,
    # so QuantizedConv2d_8x8to32 (spec §2) gives the depthwise sums
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(0, 256, (2, 6, 5, c), dtype=np.uint8)
    w = rng.integers(0, 256, (fh, fw, c, 1), dtype=np.uint8)
    full = np.full((fh, fw, c, c), 128, np.uint8)
    for k in range(c):
        full[:, :, k, k] = w[:, :, k, 0]
    xr = data.draw(st.sampled_from([(-1.0, 1.0), (0.0, 6.0), (2.0, 3.0)]))
    args = (_w(xr[0]), _w(xr[1]), _w(-1.0), _w(1.0), Tensor.shape_only((1, sh, sw, 1)))
    ctx = KernelContext(1, "QuantizedDepthwiseConv2d_8x8to32", padding=padding)
    got = quantized_depthwiseconv2d_8x8to32(ctx, _u8(x), _u8(w), *args)
    want = quantized_conv2d_8x8to32(KernelContext(2, "QuantizedConv2d_8x8to32", padding=padding),
                                    _u8(x), _u8(full), *args)
    for g, e in zip(got, want, strict=True):
        assert np.asarray(g.array).tobytes() == np.asarray(e.array).tobytes()


def test_the_float_reference_is_the_real_depthwise_sum():
    x = np.array([1, 2, 3, 4]).reshape(1, 1, 2, 2)
    w = np.array([[1, 10], [3, 30], [2, 20], [4, 40]]).reshape(1, 2, 2, 2)
    ctx = KernelContext(1, "QuantizedDepthwiseConv2d_8x8to32", padding=Padding.SAME)
    y, _, _ = depthwise_reference(ctx, _u8(x), _u8(w), _w(0), _w(255), _w(0), _w(255),
                                  Tensor.shape_only((1, 1, 1, 1)))
    assert np.asarray(y).reshape(-1).tolist() == [7, 70, 22, 220, 3, 30, 12, 120]


def test_a_delegate_depthwise_supernode_validates_and_runs():
    # what TFLite's delegate emits for DEPTHWISE_CONV_2D (13 inputs with the channel scales)
    from hexscope.engine import Graph, Session
    from hexscope.engine.validate import validate

    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 4, 4, 3), 1)])
    for nid, v in ((0x11, 0.0), (0x12, 6.0), (0x13, -1.0), (0x14, 1.0), (0x17, -np.inf),
                   (0x18, np.inf)):
        g.append_const_node(nid, np.array([v], np.float32))
    g.append_const_node(0x15, np.full((3, 3, 3, 1), 130, np.uint8))
    g.append_const_node(0x16, None, shape=(1, 1, 1, 1))
    g.append_const_node(0x19, np.zeros((1, 1, 1, 3), np.int32))
    g.append_const_node(0x1A, np.ones((1, 1, 1, 3), np.float32))
    g.append_node(0x20, "DepthwiseSupernode_8x8p32to8",
                  inputs=[(0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x14, 0),
                          (0x16, 0), (0x19, 0), (0x13, 0), (0x14, 0), (0x17, 0), (0x18, 0),
                          (0x1A, 0)],
                  outputs=[OutputDef((1, 4, 4, 3), 1), OutputDef(), OutputDef()],
                  padding="SAME")
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    assert not [i for i in validate(g) if i.severity.name == "ERROR"]
    x = np.arange(48, dtype=np.uint8).reshape(1, 4, 4, 3)
    y = np.asarray(Session(g).execute([x])[0].array)
    # every tap adds x * 6/255 * (130 - 127.5) * 2/255 > 0, the bias 0: no code below zero's
    assert y.shape == (1, 4, 4, 3) and y.min() >= 0 and y.max() > 0


@settings(max_examples=40, deadline=None)
@given(data=st.data(), fh=st.integers(1, 4), fw=st.integers(1, 4), sh=st.integers(1, 3),
       sw=st.integers(1, 3), c=st.integers(1, 9), m=st.integers(1, 3))
def test_the_row_by_row_narrow_loop_is_the_general_one(data, fh, fw, sh, sw, c, m):
    """The narrow kernel (int32 lanes, one output row at a time) against the general
    wrapping one, with padding before and after on both axes."""
    kernels = depthwise._numba_kernels()
    if kernels is None:
        pytest.skip("numba does not load on this machine")
    h, w = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9))
    top, left = data.draw(st.integers(0, fh - 1)), data.draw(st.integers(0, fw - 1))
    oh, ow = (h + top + data.draw(st.integers(0, 2)) - fh) // sh + 1, \
        (w + left + data.draw(st.integers(0, 2)) - fw) // sw + 1
    if oh < 1 or ow < 1:
        return
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    x = rng.integers(0, 256, (2, h, w, c), np.uint8)
    f = rng.integers(0, 256, (fh, fw, c, m), np.uint8)
    zx, zf = (data.draw(st.integers(0, 255)) for _ in range(2))
    got, want = (np.zeros((2, oh, ow, c * m), np.int32) for _ in range(2))
    kernels[1](x, f, zx, zf, sh, sw, top, left, got)
    kernels[0](x, f, zx, zf, sh, sw, top, left, want)
    assert np.array_equal(got, want)
