"""Requantize_8to8_d32 (op_requantize.c ``do_requantize_8to8_execute_d32``, quantize.c
``nn_requantize_qu8_to_qu8_hvx_d32``): hand-computed vectors, padding included, and its
agreement with the flat Requantize_8to8. nnlib's HVX code under QEMU: the golden file
``Requantize_8to8_d32.hvx.json.gz``, replayed by test_oracle_hvx.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.quant import adjust_range
from hexscope.engine.tensor import Tensor

FILL = 0xA5


def _run(x: Tensor, x_range, out_range, defs=()):
    ctx = KernelContext(node_id=0x20, op="Requantize_8to8_d32", output_defs=tuple(defs))
    args = [Tensor.scalar(v) for v in (*x_range, *out_range)]
    return REGISTRY.get("Requantize_8to8_d32").kernel(ctx, x, *args)


def _flat(x: Tensor, x_range, out_range):
    ctx = KernelContext(node_id=0x21, op="Requantize_8to8")
    args = [Tensor.scalar(v) for v in (*x_range, *out_range)]
    return REGISTRY.get("Requantize_8to8").kernel(ctx, x, *args)


def _d32(codes, padding: D32Padding, fill: int) -> Tensor:
    return Tensor.from_array(np.asarray(codes, np.uint8), DType.QUINT8).to_d32(padding, fill)


def test_gain_one_half_rounds_up_and_writes_from_column_wskip():
    # in [0, 2] (offset 0), out [0, 4] (offset 0): gain 0.5, gi 16384, so each code c
    # becomes (2 c 16384 + 2^15) >> 16 = (c + 1) >> 1; the input's padding bytes are 130
    x = _d32([[[[200, 101]]]], D32Padding(1, 1, 5, 2, 0, 30), fill=130)
    y, lo, hi = _run(x, (0.0, 2.0), (0.0, 4.0))
    assert y.padding == x.padding and y.shape == (1, 1, 1, 2)
    assert y.array.reshape(-1).tolist() == [100, 51]
    mem = np.asarray(y.raw).reshape(y.geometry.memory_shape)     # [B, H_tot, slices, W_tot, 32]
    # the data row, from column wskip = 5 & ~3 = 4 to the end: the padding's 130 -> 65
    assert (mem[0, 1, 0, 4, :] == 65).all() and (mem[0, 1, 0, 6:, :] == 65).all()
    assert mem[0, 1, 0, 5, :2].tolist() == [100, 51] and (mem[0, 1, 0, 5, 2:] == 65).all()
    # not written: the columns before wskip and the height padding rows
    assert (mem[0, 1, 0, :4, :] == FILL).all()
    assert (mem[0, 0] == FILL).all() and (mem[0, 2] == FILL).all()
    assert (float(lo.array.reshape(-1)[0]), float(hi.array.reshape(-1)[0])) == (0.0, 4.0)


def test_left_padding_3_is_written_and_a_slice_of_padding_only_is_not():
    x = _d32(np.full((1, 2, 1, 20), 10), D32Padding(0, 0, 3, 0, 0, 44), fill=30)
    y, _, _ = _run(x, (0.0, 2.0), (0.0, 4.0))       # (c + 1) >> 1
    mem = np.asarray(y.raw).reshape(y.geometry.memory_shape)
    assert (mem[0, :, 0, :3, :] == 15).all()               # wskip 0: the whole left padding
    assert (mem[0, :, 0, 3, :20] == 5).all() and (mem[0, :, 0, 3, 20:] == 15).all()
    assert (mem[0, :, 1] == FILL).all()                     # nd32 is 1: slice 1 untouched


def test_a_negative_gain_pairs_odd_lanes_by_memory_not_by_element():
    # in [1, -1]: in_range -2, in_offset 128; out [0, 2]: gain -1, gi -32768 for the even
    # lanes, -1 (the upper half of gi | gi << 16) for the odd ones. Code 100 (d = -28):
    # even lane -d = 28, odd lane (56 + 2^15) >> 16 = 0.
    codes = np.full((1, 1, 2, 1), 100)
    flat, _, _ = _flat(Tensor.from_array(codes.astype(np.uint8)), (1.0, -1.0), (0.0, 2.0))
    assert flat.array.reshape(-1).tolist() == [28, 0]       # elements 0 and 1
    for d_before, want in ((0, [28, 28]), (1, [0, 0])):     # both at lane d_before
        x = _d32(codes, D32Padding(0, 0, 4, 2, d_before, 31 - d_before), fill=0)
        y, _, _ = _run(x, (1.0, -1.0), (0.0, 2.0))
        assert y.array.reshape(-1).tolist() == want


def test_a_given_minus_zero_output_min_stays_minus_zero():
    x = _d32(np.zeros((1, 1, 1, 4)), D32Padding(0, 0, 0, 3, 0, 28), fill=0)
    _, lo, _ = _run(x, (0.0, 2.0), (-0.0, 4.0))
    assert np.signbit(lo.array.reshape(-1)[0])


def test_errors_are_the_flat_ops_and_out_too_small():
    x = _d32(np.zeros((1, 2, 3, 4)), D32Padding(4, 4, 4, 1, 0, 28), fill=0)
    with pytest.raises(KernelError, match="integer zero code"):
        _run(x, (-1.0, 1.0), (-0.3, 1.0))
    with pytest.raises(KernelError, match="too small compared"):
        _run(x, (-65536.0, 65536.0), (0.0, 1.0))
    with pytest.raises(KernelError, match="out too small!"):
        _run(x, (-1.0, 1.0), (0.0, 1.0), defs=(OutputDef((1, 1, 3, 4), 1),))
    with pytest.raises(KernelError, match="not d32"):
        _run(x.to_flat(), (-1.0, 1.0), (0.0, 1.0))


_SHAPES = st.tuples(st.integers(1, 2), st.integers(1, 4), st.integers(1, 9), st.integers(1, 70))


@settings(max_examples=60, deadline=None)
@given(shape=_SHAPES, seed=st.integers(0, 2**32 - 1),
       x_range=st.tuples(st.floats(-20, 0), st.floats(0.01, 20)),
       out_range=st.tuples(st.floats(-20, 0), st.floats(0.01, 20)))
def test_data_bytes_agree_with_the_flat_op_for_a_nonnegative_gain(shape, seed, x_range,
                                                                  out_range):
    rng = np.random.default_rng(seed)
    wb = int(rng.integers(0, 8))
    db = int(rng.integers(0, 32)) if rng.random() < 0.5 else 0
    pad = D32Padding(int(rng.integers(0, 5)), int(rng.integers(0, 5)), wb,
                     (-(wb + shape[2])) % 4, db, (-(db + shape[3])) % 32)
    codes = rng.integers(0, 256, shape, dtype=np.uint8)
    lo, hi = (float(np.float32(v)) for v in adjust_range(np.float32(out_range[0]),
                                                         np.float32(out_range[1])))
    try:
        want, w_lo, w_hi = _flat(Tensor.from_array(codes), x_range, (lo, hi))
    except KernelError:         # a refused range: the d32 op refuses it the same way
        with pytest.raises(KernelError):
            _run(_d32(codes, pad, 0), x_range, (lo, hi))
        return
    y, y_lo, y_hi = _run(_d32(codes, pad, int(rng.integers(0, 256))), x_range, (lo, hi))
    assert np.array_equal(y.array, want.array)
    assert (y_lo.array.tobytes(), y_hi.array.tobytes()) == (w_lo.array.tobytes(),
                                                          w_hi.array.tobytes())
