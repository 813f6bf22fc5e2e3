"""QuantizedConcat_8_d32 (quantized-ops spec §11) on d32 inputs whose padding holds garbage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import NodeError
from hexscope.engine.ops.d32.concat import gain_offset
from hexscope.engine.quant import adjust_range_for_zero
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

f32 = np.float32
NODE = 0x300


def d32(codes, padding=None, fill=0xEE) -> Tensor:
    return Tensor.from_array(np.asarray(codes, np.uint8), DType.QUINT8).to_d32(padding, fill=fill)


def concat_session(n: int, axis: int, mins, maxes, padding_fill: int = 0xA5) -> Session:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=n)
    g.append_const_node(0x1FF, np.array([axis], np.int32))
    for i, v in enumerate(list(mins) + list(maxes)):
        g.append_const_node(0x200 + i, np.array([v], np.float32))
    inputs = ([(0x1FF, 0)] + [(0x100, k) for k in range(n)]
              + [(0x200 + i, 0) for i in range(2 * n)])
    g.append_node(NODE, "QuantizedConcat_8_d32", inputs=inputs, outputs=3)
    g.append_node(0x400, "OUTPUT", inputs=[(NODE, 0), (NODE, 1), (NODE, 2)])
    return Session(g, padding_fill=padding_fill)


def run(tensors, axis, mins, maxes, padding_fill=0xA5):
    out = concat_session(len(tensors), axis, mins, maxes, padding_fill).execute(tensors)
    return out[0], f32(out[1].scalar_value()), f32(out[2].scalar_value())


# --- hand-computed vectors --------------------------------------------------------------------
def test_requantizes_to_the_merged_range_with_truncated_gain_and_offset():
    # §11: ranges (-1, 1) and (0, 2) merge to (-1, 2); z = 85 exactly, so R2 keeps it.
    # k = 85; gain = trunc(85 * (2/255) * 32768) = trunc(21845.33) = 21845 for both inputs;
    # offsets trunc(0 * 85 * 128) = 0 and trunc(1 * 85 * 128) = 10880.
    # x=128 of input 0: (128*21845 + 16384) >> 15 = 85; x=255: 5586859 >> 15 = 170.
    # input 1: x=0: (0 + 10880*256 + 16384) >> 15 = 85; x=255: 8372139 >> 15 = 255.
    a = d32([[[[0, 128, 255]]]])
    b = d32([[[[0, 255]]]])
    y, mn, mx = run([a, b], 3, [-1.0, 0.0], [1.0, 2.0])
    assert (mn, mx) == (f32(-1.0), f32(2.0))
    assert y.layout is Layout.D32
    np.testing.assert_array_equal(y.array.reshape(-1), [0, 85, 170, 85, 255])


def test_nan_gain_and_offset_follow_the_conversion_convention():
    # §11 truncations of NaN: the conversion is unconfirmed on hardware (§23 item 4); the
    # project's convention (QEMU's Hexagon model, engine/hexmath) gives -1, so a NaN gain
    # is outside 0..32767 and becomes 32767, and the offset is -1.
    assert gain_offset(float("nan"), 1.0, f32(-1.0), f32(1.0)) == (32767, -1)
    # inf saturates: the gain to 32767 (out of range), the offset to int32 max, then mod 2**16
    assert gain_offset(3e38, -3e38, f32(-1.0), f32(1.0))[1] == -1


def test_input_with_the_merged_range_is_copied_exactly():
    # §11: offset 0 and gain >= 32704 is an exact copy.
    codes = np.arange(256, dtype=np.uint8).reshape(1, 2, 4, 32)
    other = np.zeros((1, 2, 4, 5), np.uint8)
    y, mn, mx = run([d32(codes), d32(other)], 3, [-1.0, 0.0], [2.0, 1.0])
    assert (mn, mx) == (f32(-1.0), f32(2.0))
    np.testing.assert_array_equal(y.array[..., :32], codes)


def test_merged_range_is_nudged_with_r2():
    # §1.10 worked example: (-1, 1) becomes (-1, 1.0078740) by raising the max.
    y, mn, mx = run([d32([[[[1]]]]), d32([[[[2]]]])], 3, [-1.0, -0.5], [1.0, 0.5])
    assert mn == f32(-1.0)
    assert mx == pytest.approx(1.0078740, abs=1e-6)


def test_positive_min_becomes_zero_and_negative_max_is_kept():
    # §11: "If mn > 0, set mn = 0" and "mx is never forced >= 0".
    _, mn, mx = run([d32([[[[1]]]]), d32([[[[2]]]])], 3, [0.5, 1.0], [1.0, 3.0])
    assert (mn, mx) == (f32(0.0), f32(3.0))
    _, mn, mx = run([d32([[[[1]]]]), d32([[[[2]]]])], 3, [-3.0, -2.0], [-1.0, -0.5])
    assert mn == f32(-3.0) and mx < 0


def test_output_padding_follows_the_library_and_holds_the_fill():
    # op_concat_d32.c: h pad 4 (0 if H == 1), w left 4 (0 if W == 1), right to a multiple
    # of 4, no depth-before, depth-after to 32; padding is never written.
    a = d32(np.ones((1, 3, 5, 7)), D32Padding(2, 1, 3, 0, 5, 20))
    b = d32(np.ones((1, 3, 5, 9)), D32Padding(4, 4, 4, 3, 0, 23))
    y, _, _ = run([a, b], 3, [0.0, 0.0], [1.0, 1.0], padding_fill=0x3C)
    assert y.padding == D32Padding(4, 4, 4, 3, 0, 16)
    assert np.all(y.memory[y.padding_mask()] == 0x3C)
    flat1 = d32(np.ones((1, 1, 1, 40)), D32Padding(0, 0, 0, 3, 0, 24))
    y, _, _ = run([flat1, flat1], 2, [0.0, 0.0], [1.0, 1.0])
    assert y.shape == (1, 1, 2, 40)
    assert y.padding == D32Padding(0, 0, 4, 2, 0, 24)
    y, _, _ = run([flat1, flat1], 1, [0.0, 0.0], [1.0, 1.0])
    assert y.padding == D32Padding(4, 4, 0, 3, 0, 24)


def test_garbage_in_input_padding_does_not_change_the_output():
    rng = np.random.default_rng(3)
    xs = [rng.integers(0, 256, (2, 3, 4, d), dtype=np.uint8) for d in (20, 45)]
    pads = [D32Padding(1, 2, 3, 1, 7, 5), D32Padding(4, 4, 4, 0, 30, 21)]
    outs = [run([d32(x, p, fill) for x, p in zip(xs, pads, strict=True)], 3, [-1.0, -3.0],
                [2.0, 1.5]) for fill in (0x00, 0xFF)]
    np.testing.assert_array_equal(outs[0][0].array, outs[1][0].array)
    assert outs[0][1:] == outs[1][1:]


# --- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [4, -1])
def test_bad_axis_is_rejected(axis):
    with pytest.raises(NodeError, match="bad concat dim"):
        run([d32([[[[1]]]]), d32([[[[1]]]])], axis, [0.0, 0.0], [1.0, 1.0])


def test_mismatched_dimension_is_rejected():
    with pytest.raises(NodeError, match="mismatch on tensor dim 1, concat on 3"):
        run([d32(np.zeros((1, 2, 3, 4))), d32(np.zeros((1, 3, 3, 4)))], 3, [0.0, 0.0],
            [1.0, 1.0])


def test_flat_input_is_rejected():
    flat = Tensor.from_array(np.zeros((1, 1, 1, 4), np.uint8), DType.QUINT8)
    with pytest.raises(NodeError, match="need d32 inputs"):
        run([d32(np.zeros((1, 1, 1, 4))), flat], 3, [0.0, 0.0], [1.0, 1.0])


# --- property test against a straightforward reference ----------------------------------------
def reference(codes_list, axis, mins, maxes):
    """§11 written out per element with float32 scalars."""
    mn, mx = f32(mins[0]), f32(maxes[0])
    for a, b in zip(mins, maxes, strict=True):
        mn, mx = min(mn, f32(a)), max(mx, f32(b))
    if mn > 0:
        mn = f32(0.0)
    elif mn < 0:
        mn, mx = (f32(v) for v in adjust_range_for_zero(mn, mx))
    k = f32(f32(255.0) / f32(mx - mn))
    parts = []
    for codes, imin, imax in zip(codes_list, mins, maxes, strict=True):
        level = f32(f32(f32(imax) - f32(imin)) / f32(255.0))
        off = int(np.trunc(f32(f32(f32(f32(imin) - mn) * k) * f32(128.0))))
        gain = int(np.trunc(f32(f32(k * level) * f32(32768.0))))
        gain = gain if 0 <= gain <= 32767 else 32767
        out = np.empty_like(codes)
        for idx, x in np.ndenumerate(codes):
            if off == 0 and gain >= 32704:
                out[idx] = x
            else:
                out[idx] = min(255, max(0, (int(x) * gain + off * 256 + 16384) >> 15))
        parts.append(out)
    return np.concatenate(parts, axis=axis), mn, mx


pads = st.builds(D32Padding, st.integers(0, 3), st.integers(0, 2), st.integers(0, 5),
                 st.just(0), st.integers(0, 31), st.just(0))
ranges = st.tuples(st.floats(-8, 0, width=32), st.floats(0.0625, 8, width=32))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.lists(st.tuples(pads, ranges, st.integers(1, 3)), min_size=1,
                                   max_size=3), st.integers(0, 2**32 - 1))
def test_matches_reference(axis, specs, seed):
    rng = np.random.default_rng(seed)
    base = [2, 2, 3, 5]
    tensors, codes_list, mins, maxes = [], [], [], []
    for pad, (lo, hi), size in specs:
        shape = list(base)
        shape[axis] = size
        codes = rng.integers(0, 256, shape, dtype=np.uint8)
        w_after = (-(pad.w_before + shape[2])) % 4
        d_after = (-(pad.d_before + shape[3])) % 32
        p = pad._replace(w_after=w_after, d_after=d_after)
        tensors.append(d32(codes, p, fill=int(rng.integers(0, 256))))
        codes_list.append(codes)
        mins.append(lo)
        maxes.append(hi)
    y, mn, mx = run(tensors, axis, mins, maxes)
    want, wmn, wmx = reference(codes_list, axis, mins, maxes)
    assert (mn, mx) == (wmn, wmx)
    np.testing.assert_array_equal(y.array, want)
