"""QuantizedSplit_8_d32 (op_chanshuffle_d32.c, split_d32_execute with k = 1): logical values
equal the flat split's, the padding nnlib chooses, and what its whole-vector stores leave in
the padding (hand-computed from channelshuf_d32_k1_template's three alignment modes)."""

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
from hexscope.engine.ops.d32.split import quantized_split_8_d32
from hexscope.engine.tensor import Tensor

FILL = 0x33
IN_PAD = 7


def _split(x: np.ndarray, n: int, pad: D32Padding | None = None, axis: int = 3,
           defs: tuple[OutputDef, ...] | None = None):
    t = Tensor.from_array(x, DType.QUINT8).to_d32(pad, fill=IN_PAD)
    ctx = KernelContext(9, "QuantizedSplit_8_d32", padding_fill=FILL,
                        output_defs=defs or (OutputDef(()),) * (n + 2))
    a = Tensor.from_array(np.array([axis], np.int32).reshape(1, 1, 1, 1), DType.INT32)
    out = quantized_split_8_d32(ctx, a, t, Tensor.scalar(np.float32(0.5)),
                                Tensor.scalar(np.float32(2.0)))
    return out, ctx


def _row(part: Tensor, h: int, s: int) -> np.ndarray:
    """(width units, 32) of output slice s in padded row h."""
    return part.memory[0, h, s]


def test_split_d32_mode1_rotates_whole_vectors_by_hand():
    # 64 channels 100..163 at one pixel, width padding 0/3: one 4-unit vector per slice row
    x = (100 + np.arange(64, dtype=np.uint8)).reshape(1, 1, 1, 64)
    out, _ = _split(x, 4, D32Padding(0, 0, 0, 3, 0, 0))
    p1, p2, p3 = out[1], out[2], out[3]
    assert p1.padding == D32Padding(0, 0, 0, 3, 0, 16)
    # part 1 (depth 16..31, r = 16 <= 32 - 16: one vror by 16 of the 128-byte vector)
    np.testing.assert_array_equal(_row(p1, 0, 0)[0], [*range(116, 132), *[IN_PAD] * 16])
    np.testing.assert_array_equal(_row(p1, 0, 0)[3], [*[IN_PAD] * 16, *range(100, 116)])
    # part 2 starts a slice (mode 0): its depth padding holds part 3's channels
    np.testing.assert_array_equal(_row(p2, 0, 0)[0], range(132, 164))
    np.testing.assert_array_equal(_row(p3, 0, 0)[0], [*range(148, 164), *[IN_PAD] * 16])
    # range: fminf(0, min), max
    assert out[4].array.item() == 0.0 and out[5].array.item() == 2.0


def test_split_d32_mode2_reads_the_next_slice_and_past_the_row_by_hand():
    x = np.arange(192, dtype=np.uint8).reshape(1, 2, 1, 96)
    out, ctx = _split(x, 2, D32Padding(0, 0, 0, 3, 0, 0))
    p1 = out[1]                                   # depth 48..95, r = 16 > 32 - 48
    np.testing.assert_array_equal(_row(p1, 0, 0)[0], range(48, 80))
    # lanes past depth 95 are channels 96.. = the input's slice 3, i.e. row 1's slice 0
    np.testing.assert_array_equal(_row(p1, 0, 1)[0], [*range(80, 96), *range(96, 112)])
    # row 1 reads past the input buffer: the fill byte, and a warning
    np.testing.assert_array_equal(_row(p1, 1, 1)[0], [*range(176, 192), *[FILL] * 16])
    assert any("past the input" in w for w in ctx.warnings)


def test_split_d32_leaves_height_padding_and_outer_width_units_unwritten():
    x = np.arange(2 * 3 * 64, dtype=np.uint8).reshape(1, 2, 3, 64)
    out, _ = _split(x, 2, D32Padding(2, 1, 5, 4, 0, 0))    # width units 4..7 are written
    mem = out[0].memory
    assert (mem[0, :2] == FILL).all() and (mem[0, 4:] == FILL).all()
    assert (mem[0, 2:4, :, :4] == FILL).all() and (mem[0, 2:4, :, 8:] == FILL).all()
    assert (mem[0, 2:4, :, 4] == IN_PAD).all()        # the input's width padding, copied


@settings(max_examples=60, deadline=None)
@given(b=st.integers(1, 2), h=st.integers(1, 4), w=st.integers(1, 6), d0=st.integers(1, 70),
       n=st.integers(2, 4), pads=st.tuples(*[st.integers(0, 4)] * 4), data=st.data())
def test_split_d32_logical_values_equal_the_flat_split(b, h, w, d0, n, pads, data):
    hb, ha, wb, wa = pads
    wa += -(wb + w + wa) % 4
    x = data.draw(st.integers(0, 2**32 - 1).map(
        lambda s: np.random.default_rng(s).integers(0, 256, (b, h, w, d0 * n), np.uint8)))
    out, _ = _split(x, n, D32Padding(hb, ha, wb, wa, 0, -(d0 * n) % 32))
    for k, part in enumerate(np.split(x, n, axis=3)):
        np.testing.assert_array_equal(out[k].array, part)
        assert out[k].padding == D32Padding(hb, ha, wb, wa, 0, -d0 % 32)


@pytest.mark.parametrize(("shape", "n", "axis", "pad", "message"), [
    ((1, 1, 1, 64), 3, 3, None, "can't divide 64 by 3"),
    ((1, 1, 2, 64), 2, 2, None, "must be on dim 3"),
    ((1, 1, 1, 64), 2, 4, None, "out of range"),
    ((1, 1, 1, 64), 2, 3, D32Padding(0, 0, 0, 3, 16, 16), "depth_before"),
])
def test_split_d32_errors(shape, n, axis, pad, message):
    with pytest.raises(KernelError, match=message):
        _split(np.zeros(shape, np.uint8), n, pad, axis)


def test_split_d32_axis_minus_one_and_a_small_output():
    x = np.zeros((1, 1, 1, 64), np.uint8)
    out, _ = _split(x, 2, axis=-1)
    assert out[0].shape == (1, 1, 1, 32)
    small = (OutputDef((1, 1, 1, 32)),) * 4
    with pytest.raises(KernelError, match="failed to allocate channelshuf output #0"):
        _split(x, 2, D32Padding(8, 8, 4, 3, 0, 0), defs=small)     # 17 rows > widened 9
