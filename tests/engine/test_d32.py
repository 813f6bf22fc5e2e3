"""d32 layout: graph spec §1.6 (offsets, strides, padding) and the d32_diagram.png example."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import D32Padding, Tensor
from hexscope.engine.d32 import D32Geometry, converter_padding, default_padding

DIAGRAM_SHAPE = (2, 4, 7, 112)
DIAGRAM_PAD = D32Padding(2, 2, 4, 1, 0, 16)


def test_d32_diagram_strides_and_totals():
    # graph spec §1.6.4: H_tot 8, W_tot 12, D_tot 128, strides 384 / 1536 / 12288
    g = D32Geometry(DIAGRAM_SHAPE, DIAGRAM_PAD)
    assert (g.h_total, g.w_total, g.d_total) == (8, 12, 128)
    assert (g.d32_stride, g.row_stride, g.batch_stride) == (384, 1536, 12288)
    assert g.n_data_slices == 4


@pytest.mark.parametrize("index, offset", [
    ((0, 0, 0, 0), 3200), ((0, -2, -4, 0), 0), ((0, 2, 5, 40), 6824),
    ((1, 3, 6, 111), 21455), ((1, 5, 7, 127), 24575),
])
def test_d32_diagram_offsets(index, offset):
    # graph spec §1.6.4, offsets checked there by compiling hexagon_nn's header helpers
    t = Tensor.from_array(np.zeros(DIAGRAM_SHAPE, np.uint8)).to_d32(DIAGRAM_PAD)
    assert t.offset(*index) == offset
    assert t.geometry.position(offset) == index


def test_d32_tensor_strides_property():
    t = Tensor.from_array(np.zeros(DIAGRAM_SHAPE, np.uint8)).to_d32(DIAGRAM_PAD)
    assert t.strides == (1536, 384, 12288)
    assert t.nbytes == 2 * 12288


def test_d32_offset_outside_padding_rejected():
    g = D32Geometry(DIAGRAM_SHAPE, DIAGRAM_PAD)
    for index in [(0, -3, 0, 0), (0, 6, 0, 0), (0, 0, -5, 0), (0, 0, 8, 0), (2, 0, 0, 0),
                  (0, 0, 0, 128)]:
        with pytest.raises(IndexError):
            g.offset(*index)


def test_default_padding_matches_converter_rule():
    # graph spec §4.17 defaults example: W 7, D 112 -> 4/4, 4/1, 0/16
    assert default_padding((1, 4, 7, 112)) == D32Padding(4, 4, 4, 1, 0, 16)
    # "minus 4" rule: left 4, W 3, min right 6 -> W_tot 16, wa 9 -> 5
    assert converter_padding((1, 1, 3, 1), w_left=4, w_right_min=6).w_after == 5


def test_d32_geometry_rejects_misaligned_totals():
    with pytest.raises(ValueError, match="multiple of 32"):
        D32Geometry((1, 1, 4, 30), D32Padding(0, 0, 0, 0, 0, 0)).check()
    with pytest.raises(ValueError, match="multiple of 4"):
        D32Geometry((1, 1, 3, 32), D32Padding(0, 0, 0, 0, 0, 0)).check()


@st.composite
def shapes_and_paddings(draw):
    b, h, w, d = (draw(st.integers(1, n)) for n in (2, 5, 9, 70))
    hb, ha = draw(st.integers(0, 8)), draw(st.integers(0, 8))
    wb = draw(st.integers(0, 7))
    wa = draw(st.integers(0, 7).filter(lambda x: (wb + w + x) % 4 == 0)
              if any((wb + w + x) % 4 == 0 for x in range(8)) else st.just(0))
    db = draw(st.integers(0, 31))
    da = (-(db + d)) % 32 + 32 * draw(st.integers(0, 1))
    return (b, h, w, d), D32Padding(hb, ha, wb, wa, db, da)


@settings(max_examples=60, deadline=None)
@given(shapes_and_paddings(), st.integers(0, 255))
def test_every_element_round_trips_through_the_buffer(case, fill):
    shape, pad = case
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, shape, dtype=np.uint8)
    t = Tensor.from_array(data).to_d32(pad, fill=fill)
    buf = t.buffer
    # independent check: each element sits at the byte its offset names
    for b, h, w, d in [tuple(rng.integers(0, n) for n in shape) for _ in range(40)]:
        assert buf[t.offset(b, h, w, d)] == data[b, h, w, d]
    assert np.array_equal(t.array, data)
    assert np.array_equal(t.to_flat().array, data)
    mask = t.padding_mask().reshape(-1)
    assert mask.sum() == t.nbytes - data.size
    assert np.all(buf[mask] == fill)


@settings(max_examples=40, deadline=None)
@given(shapes_and_paddings())
def test_padding_never_aliases_data(case):
    shape, pad = case
    g = D32Geometry(shape, pad)
    b, h, w, d = shape
    offsets = {g.offset(i, j, k, m) for i in range(b) for j in range(h) for k in range(w)
               for m in range(d)}
    assert len(offsets) == b * h * w * d          # no two elements share a byte
    mask = Tensor.from_array(np.zeros(shape, np.uint8)).to_d32(pad).padding_mask().reshape(-1)
    assert not mask[sorted(offsets)].any()        # no data byte is marked as padding
    # padding addressed with negative / past-the-end indices lands on padding bytes
    rng = np.random.default_rng(2)
    ranges = [(0, b), (-pad.h_before, h + pad.h_after), (-pad.w_before, w + pad.w_after),
              (-pad.d_before, d + pad.d_after)]
    for _ in range(60):
        idx = tuple(int(rng.integers(lo, hi)) for lo, hi in ranges)
        inside = 0 <= idx[1] < h and 0 <= idx[2] < w and 0 <= idx[3] < d
        off = g.offset(*idx)
        assert 0 <= off < g.elements
        assert mask[off] != inside
