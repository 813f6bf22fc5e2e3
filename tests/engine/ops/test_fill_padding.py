"""FillPadding_8_d32 (graph spec §4.19)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.d32.fill_padding import Lcg, fill_padding_8_d32
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

FILL = 0x33


def make_ctx(outputs=()):
    return KernelContext(0x60, "FillPadding_8_d32", output_defs=tuple(outputs),
                         padding_fill=FILL)


def i32(v: int) -> Tensor:
    return Tensor.scalar(v, DType.INT32)


def dirty_d32(shape, pad, seed=0) -> Tensor:
    rng = np.random.default_rng(seed)
    t = Tensor.from_array(rng.integers(0, 256, shape).astype(np.uint8)).to_d32(D32Padding(*pad))
    raw = t.buffer.copy()
    mask = t.padding_mask().reshape(-1)
    raw[mask] = rng.integers(0, 256, int(mask.sum()), dtype=np.uint8)
    return Tensor(t.shape, DType.QUINT8, raw, Layout.D32, t.padding)


class RefLcg:
    def __init__(self) -> None:
        self.s = 0x827EA91D91924124

    def next(self) -> int:
        out = self.s >> 32
        self.s = (self.s * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        return out


def reference(t: Tensor, capacity: int, spatial: int, depth: int) -> np.ndarray:
    """§4.19 written out again, byte by byte, with Python integers."""
    b_, h_, w_, d_ = t.shape
    hb, ha, wb, wa, db, da = t.padding
    wt, dt = wb + w_ + wa, db + d_ + da
    row, d32s, bs = wt * dt, wt * 32, (hb + h_ + ha) * wt * dt
    size = b_ * bs
    # padfill_d32_execute (op_padfill_d32.c) loops over nd32, the slices holding data
    # (tensor_addressing_d32, nn_graph_types.h), not over dt / 32.
    nd32 = (db + d_ + 31) // 32
    buf = bytearray(t.buffer.tobytes()) + bytearray([FILL]) * (capacity - size)
    lcg = RefLcg()

    def put(off: int, n: int, value: int) -> None:
        if n <= 0:
            return
        if off < 0:
            raise IndexError(off)
        if value != -1:
            buf[off:off + n] = bytes([value & 255]) * n
            return
        if off % 4 == 0 and n >= 4:
            for _ in range(n // 4):
                buf[off:off + 4] = lcg.next().to_bytes(4, "little")
                off += 4
            n %= 4
        for _ in range(n):
            buf[off] = lcg.next() & 255
            off += 1

    for b in range(b_):
        put(b * bs, hb * row, spatial)
        put(b * bs + (hb + h_) * row, ha * row, spatial)
    put(size, min(capacity - size, 4 * row), spatial)
    for b in range(b_):
        for k in range(h_ * nd32):
            put(b * bs + hb * row + k * d32s, 32 * wb, spatial)
        for k in range(h_ * nd32):
            put(b * bs + hb * row + 32 * (wb + w_) + k * d32s, 32 * wa, spatial)
    for b in range(b_):
        for h in range(h_):
            for w in range(w_):
                put(b * bs + (hb + h) * row + 32 * (wb + w), db, depth)
    for b in range(b_):
        for h in range(h_):
            for w in range(w_):
                base = b * bs + (hb + h) * row + 32 * (wb + w)
                put(base + (nd32 - 1) * d32s + 32 - da, da, depth)
    return np.frombuffer(bytes(buf), np.uint8)


def test_lcg_test_vectors():
    # §4.19: first four words, and bytewise from a fresh state
    assert list(Lcg().draw(4)) == [0x827EA91D, 0x08CBC9B3, 0xCE465116, 0x542F067C]
    assert list(Lcg().draw(6) & 0xFF) == [0x1D, 0xB3, 0x16, 0x7C, 0x1E, 0x4A]


def test_fixed_fill_defaults_to_255_and_keeps_valid_data():
    t = dirty_d32((1, 2, 3, 40), (4, 4, 4, 1, 0, 24))
    (y,) = fill_padding_8_d32(make_ctx(), t)
    assert np.array_equal(y.array, t.array)
    assert np.all(y.memory[t.padding_mask()] == 255)
    row = t.geometry.row_stride
    assert len(y.raw) == t.nbytes + 4 * row and np.all(y.raw[t.nbytes:] == 255)


def test_depth_fill_only_inside_valid_pixels_and_values_wrap():
    # depth padding in spatial regions gets the spatial value; 0x1AB keeps 0xAB
    t = dirty_d32((1, 1, 1, 3), (1, 1, 4, 3, 2, 27))
    (y,) = fill_padding_8_d32(make_ctx(), t, i32(0x1AB), i32(7))
    planes = y.padded_array()
    assert list(planes[0, 1, 4, :2]) == [7, 7] and np.all(planes[0, 1, 4, 5:] == 7)
    assert np.all(planes[0, 0] == 0xAB) and np.all(planes[0, 1, :4] == 0xAB)
    assert list(planes[0, 1, 4, 2:5]) == list(t.array.ravel())


def test_tail_rows_follow_declared_capacity():
    t = dirty_d32((1, 2, 5, 40), (4, 4, 4, 3, 0, 24))
    exact = OutputDef((1, 2, 5, 40), 1)          # widened capacity == data size: no tail
    assert exact.capacity(d32_output=True) == t.nbytes
    (y,) = fill_padding_8_d32(make_ctx([exact]), t, i32(9))
    assert len(y.raw) == t.nbytes
    roomy = OutputDef((1, 3, 5, 40), 1)          # one more row of capacity
    cap = roomy.capacity(d32_output=True)
    (y,) = fill_padding_8_d32(make_ctx([roomy]), t, i32(9))
    assert len(y.raw) == cap and np.all(y.raw[t.nbytes:] == 9)
    assert 0 < cap - t.nbytes < 4 * t.geometry.row_stride


def test_output_too_small_is_an_error():
    t = dirty_d32((1, 2, 5, 40), (4, 4, 4, 3, 0, 24))
    with pytest.raises(KernelError, match="output too small"):
        fill_padding_8_d32(make_ctx([OutputDef((1, 1, 1, 40), 1)]), t)


def test_random_fill_restarts_at_every_execute_and_ignores_session_seed():
    t = dirty_d32((1, 1, 2, 8), (1, 1, 4, 2, 0, 24))
    a = fill_padding_8_d32(make_ctx(), t, i32(-1))[0]
    ctx = make_ctx()
    ctx.seed = 1234
    b = fill_padding_8_d32(ctx, t, i32(-1))[0]
    assert np.array_equal(a.raw, b.raw)
    # the first region (top row at offset 0) starts with the seed's high word
    assert a.raw[:4].tobytes() == (0x827EA91D).to_bytes(4, "little")


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 6),
                       st.integers(1, 45)),
       pads=st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 7), st.integers(0, 7),
                      st.integers(0, 31)),
       fills=st.tuples(st.sampled_from([-1, 0, 17, 255, 300]),
                       st.sampled_from([-1, 5, None])),
       extra=st.integers(-1, 3000), seed=st.integers(0, 1000), pad_slice=st.booleans())
def test_fill_matches_byte_reference(shape, pads, fills, extra, seed, pad_slice):
    hb, ha, wb, wa_min, db = pads
    w_tot = -(-(wb + shape[2] + wa_min) // 4) * 4
    # pad_slice: a whole slice of depth padding more, as the d32 add's output can have
    pad = (hb, ha, wb, w_tot - wb - shape[2], db, (-(db + shape[3])) % 32 + 32 * pad_slice)
    t = dirty_d32(shape, pad, seed)
    args = [i32(fills[0])] + ([i32(fills[1])] if fills[1] is not None else [])
    spatial, depth = fills[0], fills[1] if fills[1] is not None else fills[0]
    d = OutputDef((1, 1, 1, t.nbytes + extra), 1)
    ctx = make_ctx() if extra < 0 else make_ctx([d])
    # no declared size: room for 4 rows; else the widened capacity, data size + ~`extra`
    capacity = t.nbytes + 4 * t.geometry.row_stride if extra < 0 else d.capacity(True)
    try:
        expected = reference(t, capacity, spatial, depth)
    except IndexError:          # the device would write before the buffer: the node fails
        with pytest.raises(KernelError, match="writes outside the output buffer"):
            fill_padding_8_d32(ctx, t, *args)
        return
    (y,) = fill_padding_8_d32(ctx, t, *args)
    assert np.array_equal(y.raw, expected)
    if pad_slice:
        return      # the device's depth-after fill overwrites data (see the test below)
    assert np.array_equal(y.array, t.array)
    # garbage in the input padding never reaches the output
    other = dirty_d32(shape, pad, seed)
    raw = other.buffer.copy()
    raw[other.padding_mask().reshape(-1)] ^= 0xFF
    (z,) = fill_padding_8_d32(make_ctx() if extra < 0 else make_ctx([d]),
                              Tensor(t.shape, DType.QUINT8, raw, Layout.D32, t.padding), *args)
    assert np.array_equal(z.raw, y.raw)


def test_fill_padding_in_a_graph():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x11, "Convert_to_d32", inputs=[(0x10, 0)], outputs=[OutputDef((1, 2, 3, 8), 1)])
    g.append_const_node(0x12, np.array([0], np.int32))
    g.append_node(0x13, "FillPadding_8_d32", inputs=[(0x11, 0), (0x12, 0)],
                  outputs=[OutputDef((1, 2, 3, 8), 1)])
    g.append_node(0x14, "Convert_from_d32", inputs=[(0x13, 0)], outputs=1)
    g.append_node(0x15, "OUTPUT", inputs=[(0x14, 0)])
    x = np.arange(48).reshape(1, 2, 3, 8).astype(np.uint8)
    s = Session(g)
    (out,) = s.execute([x])
    assert np.array_equal(out.array, x)
    filled = s.output(0x13)
    assert np.all(filled.memory[filled.padding_mask()] == 0)


def test_a_slice_of_depth_padding_overwrites_data_as_the_device_does():
    """The d32 add keeps its input's slice count with no depth-before padding (§13, source
    ``setup_elementwise_strategy``), so depth 30 after depth-before 5 gives depth-after 34:
    a second slice of padding only. padfill_d32_execute (op_padfill_d32.c) counts only the
    slices holding data (nd32 = 1, nn_graph_types.h), so its depth-after fill starts at
    32 - 34 = 2 bytes before each pixel and covers the pixel's 30 valid channels: the device
    overwrites the data, and the padding-only slice keeps what the input held. Its side loop
    (h * nd32 d32 rows from the first) fills the first row's two slices and not the last
    row's sides."""
    t = dirty_d32((1, 2, 3, 30), (1, 1, 4, 1, 0, 34), seed=5)
    (y,) = fill_padding_8_d32(make_ctx(), t, i32(0x11), i32(0x22))
    assert np.array_equal(y.raw, reference(t, t.nbytes + 4 * t.geometry.row_stride, 0x11, 0x22))
    assert (y.array == 0x22).all()                        # the data, overwritten
    mem, before = y.memory, t.memory                     # (B, H_tot, slices, W_tot, 32)
    assert np.array_equal(mem[0, 1:3, 1, 4:7], before[0, 1:3, 1, 4:7])  # padding slice kept
    # the side loop runs h * nd32 = 2 d32 rows from the first: row 0's two slices, not row 1
    assert (mem[0, 1, :, :3] == 0x11).all()
    assert np.array_equal(mem[0, 2, :, :3], before[0, 2, :, :3])
    assert (mem[0, 1:3, 0, 3, 30:] == 0x22).all()        # 2 bytes into the left padding
    assert (mem[0, 0] == 0x11).all()                     # top padding row


def test_a_depth_after_fill_before_the_buffer_fails_naming_the_writes():
    """With no top or left padding the first pixel's depth-after fill (padfill_d32_execute,
    offset 32 - 34 from the buffer's start) would write 2 bytes before the output buffer:
    memory the tensor does not own, so the node fails and names the write."""
    t = dirty_d32((1, 1, 1, 30), (0, 0, 0, 3, 0, 34), seed=2)
    with pytest.raises(KernelError, match=r"writes outside the output buffer of \d+ bytes: "
                                          r"34 bytes at offset -2 \(depth-after padding 34"):
        fill_padding_8_d32(make_ctx(), t, i32(0x11), i32(0x22))
