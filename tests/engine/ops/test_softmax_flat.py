"""QuantizedSoftmax_8 as nnlib's Hexagon build runs it (op_softmax_d32.c
``softmax_flat_execute``): one hand-computed vector or property per path, and the errors.
Byte-exactness against the Hexagon build is the golden replay in test_oracle_hvx.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.d32.softmax import quantized_softmax_8_d32
from hexscope.engine.ops.kernels.softmax_flat import d2_table, sffma
from hexscope.engine.ops.normalize.softmax import quantized_softmax_8_ref
from hexscope.engine.ops.normalize.softmax_device import quantized_softmax_8
from hexscope.engine.tensor import Tensor


def _w(v):
    return Tensor.scalar(np.float32(v))


def _run(codes, lo, hi, *beta, shape=None, kernel=quantized_softmax_8):
    x = Tensor.from_array(np.asarray(codes, np.uint8).reshape(shape or (1, 1, 1, -1)),
                          DType.QUINT8)
    y, mn, mx = kernel(KernelContext(1, "QuantizedSoftmax_8"), x, _w(lo), _w(hi),
                       *[_w(b) for b in beta])
    return np.asarray(y.array if isinstance(y, Tensor) else y)


def test_depth_1_is_255_whatever_the_beta():
    # softmax_flat_execute: d == 1 skips set_scaling_parms and writes 0xFF
    assert (_run([0, 7, 255], 0, 1, 1e6, shape=(1, 1, 3, 1)) == 255).all()


def test_depth_2_is_the_lookup_table():
    # range [0, 255], beta 1: k = 1; entry 1 = round(255 / (1 + e**-1)) = round(186.42) = 186;
    # (254, 255): d0 < d1, so the first output is 255 - 186 = 69 and the second 186
    y = _run([254, 255, 255, 254, 7, 7, 0, 255], 0, 255, shape=(1, 1, 4, 2))
    assert y.reshape(-1).tolist() == [69, 186, 186, 69, 128, 127, 0, 255]
    t = d2_table(np.float32(255.0))
    assert t[0] == 128 and t[1] == 186 and (np.diff(t.astype(int)) >= 0).all()
    # a beta far beyond the HVX path's limit: depth 2 has no check (and saturates to 255)
    assert _run([0, 1], 0, 1, 1e6).reshape(-1).tolist() == [0, 255]


def test_sffma_rounds_once():
    # 1 + 2**-24 is a float32 midpoint between 1 and 1 + 2**-23; a*b + c with a*b = 2**-24 +
    # 2**-48 lies just above it: one rounding gives 1 + 2**-23, two (product, sum) give 1
    a, b = np.float32(1 + 2.0 ** -23), np.float32(2.0 ** -24 + 2.0 ** -47)
    assert sffma(a, b, np.float32(1.0)) == np.float32(1 + 2.0 ** -23)


@settings(max_examples=30, deadline=None)
@given(w=st.integers(1, 3), d=st.integers(3, 200), lo=st.floats(-20, 0),
       hi=st.floats(0.5, 20), beta=st.sampled_from([0.5, 1.0, 2.0]),
       seed=st.integers(0, 2**32 - 1))
def test_hvx_depths_equal_the_d32_ops_hvx_path(w, d, lo, hi, beta, seed):
    # the flat HVX functions and softmax_operate_hvx_function share hvx_pow2_func and
    # final_scaling_op: the same bytes per pixel; and within a code of the float32 _ref
    x = np.random.default_rng(seed).integers(0, 256, (1, 1, w, d), np.uint8)
    y = _run(x, lo, hi, beta, shape=x.shape)
    xd = Tensor.from_array(x, DType.QUINT8).to_d32(D32Padding(0, 0, 0, (-w) % 4, 0, (-d) % 32))
    yd, _, _ = quantized_softmax_8_d32(KernelContext(1, "QuantizedSoftmax_8_d32"), xd,
                                       _w(lo), _w(hi), _w(beta))
    np.testing.assert_array_equal(y, yd.array)
    ref = _run(x, lo, hi, beta, shape=x.shape, kernel=quantized_softmax_8_ref)
    assert np.abs(y.astype(int) - ref.astype(int)).max() <= 1


def test_large_depth_histogram_path():
    # 4 rows of 1408 (5632 bytes): the histogram table. Range [-20, 20]: step 0.157 per code.
    # Row 0: one 255 among 60s (195 codes below, more than 191: their table index wraps
    # past 191 and vlut32 gives 0): 255 and 0. Row 1: every code equal, 255 / 1408 -> 0.
    # Row 2: two 255s among 0s (40 below: y32 = 0): the sum is 2 * 0xFFFFFFFF, kept as
    # 0x1FFFF; its reciprocal 2**29 / 0x7FFF -> 0x4000; y16[255] = 0x7F80 times it,
    # (2 * 32640 * 16384 + 2**15) >> 16 = 16320, and (16320 + 64) >> 7 = 128
    x = np.full((4, 1408), 60, np.uint8)
    x[0, 100] = 255
    x[1] = 77
    x[2] = 0
    x[2, [5, 900]] = 255
    y = _run(x, -20, 20, shape=(1, 1, 4, 1408)).reshape(4, 1408)
    assert y[0, 100] == 255 and np.delete(y[0], 100).max() == 0
    assert (y[1] == 0).all()
    assert y[2, 5] == y[2, 900] == 128 and np.delete(y[2], [5, 900]).max() == 0
    # the same depth with fewer than 5632 bytes runs the HVX functions
    one = _run(x[2], -20, 20)
    assert one[0, 0, 0, 5] in (127, 128)


def test_errors_as_nnlib_raises_them():
    with pytest.raises(KernelError, match="d=0 not supported"):
        _run(np.zeros((1, 1, 2, 0)), 0, 1, shape=(1, 1, 2, 0))
    # |beta (max - min)| / (255 ln 2) >= 128 on the HVX path
    with pytest.raises(KernelError, match="softmax_8: range = 0.000000 ... 1.000000, beta = "
                                          "23000.000000: beta too large"):
        _run(np.arange(36), 0, 1, 23000.0)
    _run(np.arange(36), 0, 1, 22000.0)
    # the large-depth path reads a table it never built when beta * range is exactly -1
    with pytest.raises(KernelError, match="exactly -1"):
        _run(np.zeros(4 * 1600), 0, 1, -1.0, shape=(1, 1, 4, 1600))
    with pytest.raises(KernelError, match="depth > 65536 not supported"):
        _run(np.zeros(65537), 0, 1)


def test_a_graph_names_the_node_that_nnlib_refuses():
    from hexscope.engine import Graph, Session
    from hexscope.engine.nodes import OutputDef

    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 1, 2, 36), 1)])
    for k, v in enumerate((0.0, 1.0, 23000.0)):
        g.append_const_node(0x11 + k, np.array([v], np.float32))
    g.append_node(0x20, "QuantizedSoftmax_8", inputs=[(0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0)],
                  outputs=[OutputDef((1, 1, 2, 36), 1), OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    with pytest.raises(Exception, match=r"node 0x20 \(QuantizedSoftmax_8\): softmax_8: .*beta too "
                                        "large"):
        Session(g).execute([np.zeros((1, 1, 2, 36), np.uint8)])
