"""QuantizedSoftmax_8_d32 (op_softmax_d32.c, set_scaling_parms and
softmax_operate_ref_function): hand-computed fixed-point steps, the padding it writes, the
errors, and how far it is from QuantizedSoftmax_8's float32 (measured: at most 1 code)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.d32.softmax import (
    powm2,
    quantized_softmax_8_d32,
    quantized_softmax_8_d32_ref,
    scaling_parms,
)
from hexscope.engine.ops.normalize.softmax import quantized_softmax_8
from hexscope.engine.tensor import Tensor

FILL = 0x33
IN_PAD = 7


def _w(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def _ctx() -> KernelContext:
    return KernelContext(4, "QuantizedSoftmax_8_d32", padding_fill=FILL,
                         output_defs=(OutputDef(()),) * 3)


def _softmax(x, lo=0.0, hi=1.0, beta=1.0, pad=None, kernel=quantized_softmax_8_d32):
    t = Tensor.from_array(np.asarray(x, np.uint8), DType.QUINT8).to_d32(pad, fill=IN_PAD)
    return kernel(_ctx(), t, _w(lo), _w(hi), _w(beta))


def test_pow2_sections_by_hand():
    # section 0 at 0: c0 = 32767; section 15 at 2047: k = -11857 + 251 = -11606,
    # 17109 + round(2047 * -11606 / 2**15) = 17109 - 725 = 16384 (2**-1 with 15 bits)
    np.testing.assert_array_equal(powm2(np.array([0, 0x7FFF])), [32767, 16384])
    f = np.arange(0x8000)
    np.testing.assert_allclose(powm2(f) / 32768, 2.0 ** (-f / 32768), rtol=6e-5)


def test_scaling_parms_by_hand():
    # s = 1 / (255 ln 2) = 0.00566 = 0.72 * 2**-7: r = 7 + 7 = 14, betamul = round(s 2**22)
    assert scaling_parms(0.0, 1.0, 1.0, 2) == (23730, 14, 2)
    assert scaling_parms(0.0, 1.0, 1.0, 33)[2] == 6                      # ceil(log2 33)
    with pytest.raises(KernelError, match="beta too large"):
        scaling_parms(0.0, 1e5, 1.0, 2)                                   # s = 565 >= 256
    with pytest.raises(KernelError, match="beta too large"):
        scaling_parms(0.0, 1.0, 1.0, 65537)


def test_equal_codes_by_hand():
    # t = (32767 << 16) >> 2 each, kept 32767; the sum's top bits 32767, recip
    # (255 << 21 + 16383) / 32767 = 16320; y = (32767 * 16320 + 2**21) >> 22 = 127 (127.996),
    # where the flat op's float32 gives 127.5 -> 128
    y, mn, mx = _softmax(np.array([5, 5]).reshape(1, 1, 1, 2))
    np.testing.assert_array_equal(y.array.reshape(-1), [127, 127])
    assert (mn.array.item(), mx.array.item()) == (0.0, 1.0)


def test_padding_kept_and_written_as_the_c_loops_do():
    pad = D32Padding(1, 1, 2, 0, 0, 29)
    x = np.array([[1, 200, 3], [9, 9, 9]], np.uint8).reshape(1, 1, 2, 3)
    y, _, _ = _softmax(x, 0.0, 10.0, pad=pad)
    assert y.padding == pad
    mem = y.memory[0]                                       # (H_tot, slices, W_tot, 32)
    assert (mem[0] == FILL).all() and (mem[2] == FILL).all()        # height padding
    # width padding in the row vector: the softmax of the input's padding bytes (all 7)
    np.testing.assert_array_equal(mem[1, 0, 0, :3], mem[1, 0, 1, :3])
    assert mem[1, 0, 0, 0] in (85, 86)
    # the C (_ref) leaves the depth padding lanes unwritten
    ref, _, _ = _softmax(x, 0.0, 10.0, pad=pad, kernel=quantized_softmax_8_d32_ref)
    rmem = ref.memory[0]
    assert (rmem[1, 0, :, 3:] == FILL).all()
    assert np.array_equal(rmem[:, :, :, :3], mem[:, :, :, :3])
    # the HVX function (no depth-before padding) writes them: each lane's byte (7) against
    # the pixel's real maximum and sum (nnlib's HVX code under QEMU, docs/oracle-hvx.md):
    # the padding pixels' lanes equal their real ones, the real pixel's (max 200, step
    # 10 / (255 ln 2) = 0.057 octaves per code: 2**-10.9 of 255) are 0
    assert (mem[1, 0, :2, 3:] == mem[1, 0, :2, :1]).all()
    assert (mem[1, 0, 2, 3:] == 0).all()


@settings(max_examples=40, deadline=None)
@given(w=st.integers(1, 3), d=st.integers(1, 300), lo=st.floats(-20, 0),
       hi=st.floats(0.5, 20), beta=st.sampled_from([0.5, 1.0, 2.0]),
       seed=st.integers(0, 2**32 - 1))
def test_within_one_code_of_the_flat_op(w, d, lo, hi, beta, seed):
    x = np.random.default_rng(seed).integers(0, 256, (1, 1, w, d), np.uint8)
    y, _, _ = _softmax(x, lo, hi, beta)
    flat, _, _ = quantized_softmax_8(_ctx(), Tensor.from_array(x, DType.QUINT8), _w(lo),
                                     _w(hi), _w(beta))
    assert np.abs(y.array.astype(int) - np.asarray(flat).astype(int)).max() <= 1


def test_a_large_negative_beta_fails_the_node():
    # betamul saturates at -32768: ((255 * 256 * -32768) >> 8) >> 16 = -128, shift -126
    with pytest.raises(KernelError, match="negative shift"):
        _softmax(np.array([0, 255]).reshape(1, 1, 1, 2), beta=-50.0)


def test_prepare_runs_softmax_in_d32_within_a_code_of_the_flat_run():
    from hexscope.engine import Graph, Session

    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 4, 8, 40), 1)])
    g.append_const_node(0x11, np.array([-4.0], np.float32))
    g.append_const_node(0x12, np.array([6.0], np.float32))
    g.append_node(0x20, "QuantizedSoftmax_8", inputs=[(0x10, 0), (0x11, 0), (0x12, 0)],
                  outputs=[OutputDef((1, 4, 8, 40), 1), OutputDef(), OutputDef()])
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    x = np.random.default_rng(2).integers(0, 256, (1, 4, 8, 40), dtype=np.uint8)
    s = Session(g)
    assert s.prepared.nodes[0x20].op == "QuantizedSoftmax_8_d32"
    (got,) = s.execute([x])
    (want,) = Session(g, fusions=False).execute([x])
    assert np.abs(got.array.astype(int) - want.array.astype(int)).max() <= 1
