"""Requantize_8to8_d32's byte-table pass (kernels/d32_lut_defs.py, AVX-512 VBMI permutes)
against the arithmetic pass it stands in for (kernels/d32_elementwise_defs.requantize_d32),
byte for byte over the whole output memory: every code at every lane of a vector, each HVX
gain path (a negative gain's odd lanes included), random paddings and padding bytes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.ops.d32.requantize import checked_plan, lane_steps, written_region_of
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.d32_elementwise import (
    requantize_d32_lut_pass,
    requantize_d32_pass,
)
from hexscope.engine.ops.quant.requantize_fixed import requantize_u8_lanes
from hexscope.engine.quant import adjust_range

f32 = np.float32
_PROBE = requantize_d32_lut_pass((1, 1, 1, 4, 32), (slice(0, 1), slice(0, 1), slice(0, 4)),
                                 np.zeros(512, np.uint8), 0)
pytestmark = pytest.mark.skipif(not compiled.enabled() or _PROBE is None,
                                reason="compiled kernels off, or no AVX-512 VBMI here")


def _tables(gain: np.float32, in_off: int, out_off: int) -> np.ndarray:
    """The 256 codes through the op's lane arithmetic at an even, then an odd, lane."""
    y = requantize_u8_lanes(np.repeat(np.arange(256, dtype=np.uint8), 2), gain, in_off, out_off)
    return np.concatenate((y[0::2], y[1::2]))


def _passes(g: D32Geometry, plan, fill: int):
    gain, in_off, out_off = plan[:3]
    where = written_region_of(g)
    return (requantize_d32_lut_pass(g.memory_shape, where, _tables(gain, in_off, out_off), fill),
            requantize_d32_pass(g.memory_shape, where, lane_steps(gain, in_off, out_off), fill))


def _plan(gain: float, out_range: tuple[float, float]):
    lo, hi = (float(f32(v)) for v in adjust_range(f32(out_range[0]), f32(out_range[1])))
    x_range = (lo * gain, hi * gain) if gain > 0 else (hi * -gain, lo * -gain)
    return checked_plan(*x_range, lo, hi)


@pytest.mark.parametrize("gain", [1.0, 1.00003, 3.0, 20000.0, 0.3, 0.01, -0.5, -3.0])
def test_lut_pass_every_code_at_every_lane(gain):
    # one data row of 256 vectors: vector v holds code (v + lane) % 256 at each lane, so each
    # of the 64 lanes (both parities) sees all 256 codes
    g = D32Geometry((1, 1, 512, 32), D32Padding(1, 1, 0, 0, 0, 0))
    raw = np.full(g.elements, 0x33, np.uint8)
    lanes = (np.arange(256)[:, None] + np.arange(64)[None, :]) % 256
    raw.reshape(g.memory_shape)[0, 1, 0] = lanes.astype(np.uint8).reshape(512, 32)
    lut, arithmetic = _passes(g, _plan(gain, (-3.0, 5.0)), 0x5A)
    assert np.array_equal(lut(raw), arithmetic(raw))


@settings(max_examples=80, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 11),
                       st.integers(1, 70)),
       pad=st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 7), st.integers(0, 1),
                     st.integers(0, 31), st.booleans()),
       seed=st.integers(0, 2**32 - 1), fill=st.integers(0, 255),
       gain=st.sampled_from([1.0, 1.0002, 1.7, 250.0, 0.999, 0.3, -1.0, -3.0]),
       out_range=st.tuples(st.floats(-20, 0), st.floats(0.01, 20)))
def test_lut_pass_equals_the_arithmetic_pass(shape, pad, seed, fill, gain, out_range):
    hb, ha, wb, wa4, db, extra = pad
    da = (-(db + shape[3])) % 32 + (32 if extra else 0)
    padding = D32Padding(hb, ha, wb, (-(wb + shape[2])) % 4 + 4 * wa4, db, da)
    g = D32Geometry(shape, padding)
    raw = np.random.default_rng(seed).integers(0, 256, g.elements, dtype=np.uint8)
    lut, arithmetic = _passes(g, _plan(gain, out_range), fill)
    assert lut is not None
    want = arithmetic(raw)
    raw.flags.writeable = False         # a run's input is read-only
    assert np.array_equal(lut(raw), want)


def test_lut_pass_refuses_half_vectors():
    # an odd number of columns in the written span is not whole 64-byte vectors
    assert requantize_d32_lut_pass((1, 1, 1, 3, 32), (slice(0, 1), slice(0, 1), slice(0, 3)),
                                   np.zeros(512, np.uint8), 0) is None
