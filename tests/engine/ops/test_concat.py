"""QuantizedConcat_8 (quantized-ops spec §10)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.shape.concat import quantized_concat_8
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

f32 = np.float32

# every test runs with the compiled kernels and with the numpy paths (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("kernels")


def _concat(xs: list[np.ndarray], ranges: list[tuple[float, float]],
            axis: int = 3) -> tuple[np.ndarray, float, float]:
    ctx = KernelContext(node_id=0x40, op="QuantizedConcat_8")
    ts = [Tensor.from_array(np.asarray(x, np.uint8)) for x in xs]
    mins = [Tensor.scalar(r[0]) for r in ranges]
    maxes = [Tensor.scalar(r[1]) for r in ranges]
    y, lo, hi = quantized_concat_8(ctx, Tensor.scalar(axis, DType.INT32), *ts, *mins, *maxes)
    return np.asarray(y), lo.item(), hi.item()


def _row(*codes: int) -> np.ndarray:
    return np.array(codes, np.uint8).reshape(1, 1, 1, -1)


def _rndi(x: float) -> int:
    return int(f32(f32(x) + f32(math.copysign(0.5, float(x)))))


def _ref_part(codes: np.ndarray, imin: float, imax: float, omin: f32, omax: f32) -> np.ndarray:
    """§10 written out: float32 gain/offset, HVX 16-bit offset add, rounded multiply."""
    imin = f32(0.0) if f32(imin) > 0 else f32(imin)
    level = f32(f32(f32(imax) - imin) / f32(255.0))
    off = max(0, _rndi(f32(f32(imin - omin) / level)))
    gain = _rndi(f32(f32(f32(f32(255.0) / f32(omax - omin)) * level) * f32(32768.0)))
    if off == 0 and gain >= 32704:
        return codes.copy()
    g = min(gain, 32767)
    off16 = (off + 32768) % 65536 - 32768
    out = []
    for c in codes.ravel().tolist():
        v = (c + off16 + 32768) % 65536 - 32768
        out.append(min(255, max(0, (v * g + 16384) >> 15)))
    return np.array(out, np.uint8).reshape(codes.shape)


def test_merged_range_and_rescale_hand_vector() -> None:
    # §10: ranges [-1, 1] and [0, 3] -> output [-1, 3]. Input 0: gain 16384, off 0:
    # y = (x + 1) >> 1 rounding -> 0, 64, 128. Input 1: off = rndi(1/(3/255)) = 85,
    # gain = 24576: (0+85)*0.75 -> 64, (64+85)*0.75 -> 112, (255+85)*0.75 -> 255.
    y, lo, hi = _concat([_row(0, 128, 255), _row(0, 64, 255)], [(-1.0, 1.0), (0.0, 3.0)])
    assert y.ravel().tolist() == [0, 64, 128, 64, 112, 255]
    assert (lo, hi) == (-1.0, 3.0)


def test_positive_mins_clamp_to_zero_and_no_nudge() -> None:
    # §10: out_min = min of mins, set to 0 if > 0; out_max = max of maxes; no R1/R2 nudge.
    _, lo, hi = _concat([_row(1), _row(2)], [(1.0, 2.0), (0.5, 3.0)])
    assert (lo, hi) == (0.0, 3.0)
    _, lo, hi = _concat([_row(1), _row(2)], [(-0.3, 1.0), (-0.1, 0.7)])
    assert (lo, hi) == (f32(-0.3), 1.0)     # zero point 0.3*255/1.3 = 58.8: left as is


def test_inputs_with_the_merged_range_are_copied() -> None:
    codes = _row(*range(256))
    y, _, _ = _concat([codes, codes], [(-2.0, 2.0), (-2.0, 2.0)])
    assert np.array_equal(y, np.concatenate([codes, codes], axis=3))


def test_hvx_offset_wraps_in_16_bits() -> None:
    # §10: input 1 ([-1, -0.745], step 0.001) sits 99 output steps above out_min = -100, so
    # off = 99000 > 32512 and the gain is a coarse 33. The _ref C formula gives code 100 for
    # x = 0 (the true code of -1 is 99); the plain op adds off modulo 2^16 (-32072), so 0.
    y, lo, hi = _concat([_row(0), _row(0, 255)], [(-100.0, 155.0), (-1.0, -0.745)])
    assert (lo, hi) == (-100.0, 155.0)
    assert y.ravel().tolist() == [0, 0, 0]
    assert ((0 + 99000) * 33 + 16384) >> 15 == 100


def test_depths_add_up_and_inputs_interleave_per_pixel() -> None:
    a = np.arange(12, dtype=np.uint8).reshape(1, 2, 3, 2)
    b = np.arange(100, 118, dtype=np.uint8).reshape(1, 2, 3, 3)
    y, _, _ = _concat([a, b], [(-1.0, 1.0), (-1.0, 1.0)])
    assert y.shape == (1, 2, 3, 5)
    assert np.array_equal(y, np.concatenate([a, b], axis=3))


def test_rejects_axis_other_than_depth() -> None:
    for axis in (0, 1, 2, -1):
        with pytest.raises(KernelError, match="only depth"):
            _concat([_row(1), _row(2)], [(0.0, 1.0), (0.0, 1.0)], axis=axis)


@pytest.mark.parametrize(("shape", "what"), [((1, 1, 2, 1), "width"), ((1, 2, 1, 1), "height"),
                                             ((2, 1, 1, 1), "batches")])
def test_rejects_other_dimension_mismatch(shape, what) -> None:
    with pytest.raises(KernelError, match=f"{what} mismatch tensor 1"):
        _concat([_row(1), np.zeros(shape)], [(0.0, 1.0), (0.0, 1.0)])


def test_declaration_takes_3n_plus_1_inputs() -> None:
    ports = REGISTRY.get("QuantizedConcat_8").inputs
    assert ports.allows(4) and ports.allows(7) and ports.allows(10)
    assert not ports.allows(1) and not ports.allows(5) and not ports.allows(6)
    names = [p.name for p in ports.ports_for(7)]
    assert names == ["axis", "x[0]", "x[1]", "x_min[0]", "x_min[1]", "x_max[0]", "x_max[1]"]


_RANGE = st.tuples(st.floats(-20, 5, width=32), st.floats(0.0625, 40, width=32)).map(
    lambda r: (r[0], r[0] + r[1]))


@settings(max_examples=40, deadline=None)
@given(ranges=st.lists(_RANGE, min_size=1, max_size=4), seed=st.integers(0, 2 ** 16),
       hw=st.tuples(st.integers(1, 3), st.integers(1, 3)))
def test_matches_a_loop_reference(ranges, seed, hw) -> None:
    rng = np.random.default_rng(seed)
    xs = [rng.integers(0, 256, (1, *hw, int(rng.integers(1, 5)))).astype(np.uint8)
          for _ in ranges]
    y, lo, hi = _concat(xs, ranges)
    omin = min(f32(r[0]) for r in ranges)
    omin = f32(0.0) if omin > 0 else omin
    omax = max(f32(r[1]) for r in ranges)
    assert (lo, hi) == (float(omin), float(omax))
    parts = [_ref_part(x, r[0], r[1], omin, omax) for x, r in zip(xs, ranges, strict=True)]
    assert np.array_equal(y, np.concatenate(parts, axis=3))


def test_runs_in_a_session() -> None:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=2)
    for k, v in enumerate((3, -1.0, 0.0, 1.0, 3.0)):
        g.append_const_node(0x101 + k, np.array([v], np.int32 if k == 0 else np.float32))
    g.append_node(0x110, "QuantizedConcat_8",
                  inputs=[(0x101, 0), (0x100, 0), (0x100, 1), (0x102, 0), (0x103, 0),
                          (0x104, 0), (0x105, 0)], outputs=3)
    g.append_node(0x120, "OUTPUT", inputs=[(0x110, 0)])
    (y,) = Session(g).execute([_row(0, 128, 255), _row(0, 64, 255)])
    assert y.array.ravel().tolist() == [0, 64, 128, 64, 112, 255]
