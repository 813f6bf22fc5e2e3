"""QuantizedRelu_8 and QuantizedReluX_8 (quantized-ops spec §5, §6)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.elementwise.activation import quantized_relu_8, quantized_relux_8
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

f32 = np.float32

# every test runs with the compiled kernels and with the numpy paths (tests/conftest.py)
pytestmark = __import__("pytest").mark.usefixtures("kernels")


def _ctx() -> KernelContext:
    return KernelContext(node_id=0x10, op="QuantizedRelu_8")


def _codes(values: list[int]) -> Tensor:
    return Tensor.from_array(np.array(values, np.uint8).reshape(1, 1, 1, -1))


def _s(v: float) -> Tensor:
    return Tensor.scalar(v)


def _ref_code(val: float, mn: float, mx: float) -> int:
    """quantize_uint8 written out: float32 steps, C roundf, clamp (§1.4 rule ZA)."""
    width = max(f32(1e-18), f32(f32(mx) - f32(mn)))
    k = f32(f32(255.0) / width)
    v = float(f32(f32(f32(val) - f32(mn)) * k))
    r = math.copysign(math.floor(abs(v) + 0.5), v)
    return int(min(255.0, max(0.0, r)))


def test_relu_clamps_below_the_zero_code_and_copies_the_range() -> None:
    # §5: range (-1, 3) has zero code 255/4 = 63.75 -> 64.
    y, lo, hi = quantized_relu_8(_ctx(), _codes([0, 63, 64, 65, 255]), _s(-1.0), _s(3.0))
    assert y.tolist() == [[[[64, 64, 64, 65, 255]]]]
    assert lo.item() == -1.0 and hi.item() == 3.0      # not narrowed to [0, max]


def test_relu_with_min_at_zero_is_the_identity() -> None:
    codes = list(range(0, 256, 17))
    y, _, _ = quantized_relu_8(_ctx(), _codes(codes), _s(0.0), _s(5.0))
    assert y.ravel().tolist() == codes


def test_relu_degenerate_range_saturates_the_zero_code() -> None:
    # §1.6: width floored at 1e-18; the zero code saturates (255 for min < 0, 0 for min > 0).
    y, _, _ = quantized_relu_8(_ctx(), _codes([0, 7, 200]), _s(-1.0), _s(-1.0))
    assert y.ravel().tolist() == [255, 255, 255]
    y, _, _ = quantized_relu_8(_ctx(), _codes([0, 7, 200]), _s(2.0), _s(2.0))
    assert y.ravel().tolist() == [0, 7, 200]


def test_relux_clamps_both_sides_with_a_tie_rounded_away() -> None:
    # §6: range (-1, 3), X = 1 -> (1 + 1) * 63.75 = 127.5 -> roundf -> 128.
    y, lo, hi = quantized_relux_8(_ctx(), _codes([0, 100, 127, 128, 200]), _s(-1.0), _s(3.0),
                                  _s(1.0))
    assert y.ravel().tolist() == [64, 100, 127, 128, 128]
    assert (lo.item(), hi.item()) == (-1.0, 3.0)


def test_relux_negative_x_gives_its_code_everywhere() -> None:
    # §6: X <= 0 gives qX <= z, so every output is qX = round(0.5 * 63.75) = 32.
    y, _, _ = quantized_relux_8(_ctx(), _codes([0, 64, 255]), _s(-1.0), _s(3.0), _s(-0.5))
    assert y.ravel().tolist() == [32, 32, 32]


def test_relux_x_above_max_is_a_plain_relu() -> None:
    x = _codes(list(range(0, 256, 5)))
    relu, _, _ = quantized_relu_8(_ctx(), x, _s(-1.0), _s(3.0))
    relux, _, _ = quantized_relux_8(_ctx(), x, _s(-1.0), _s(3.0), _s(10.0))
    assert np.array_equal(relu, relux)


def test_relu_arity_is_checked_by_the_declaration() -> None:
    spec = REGISTRY.get("QuantizedRelu_8")
    assert spec.inputs.allows(3) and not spec.inputs.allows(2) and not spec.inputs.allows(4)
    assert REGISTRY.get("QuantizedReluX_8").inputs.allows(4)
    assert not REGISTRY.get("QuantizedReluX_8").inputs.allows(3)


def test_relu_runs_in_a_session(small_graph) -> None:
    out = Session(small_graph).execute([np.array([[[[0, 10, 64, 200]]]], np.uint8)])
    assert out[0].array.ravel().tolist() == [64, 64, 64, 200]


_RANGES = st.tuples(st.floats(-50, 0, width=32), st.floats(0, 50, width=32))


@settings(max_examples=40, deadline=None)
@given(codes=st.lists(st.integers(0, 255), min_size=1, max_size=40), rng=_RANGES,
       x=st.floats(-60, 60, width=32))
def test_relu_and_relux_match_a_loop_reference(codes: list[int], rng: tuple[float, float],
                                               x: float) -> None:
    mn, mx = rng
    z, q = _ref_code(0.0, mn, mx), _ref_code(x, mn, mx)
    y, _, _ = quantized_relu_8(_ctx(), _codes(codes), _s(mn), _s(mx))
    assert y.ravel().tolist() == [max(c, z) for c in codes]
    y, _, _ = quantized_relux_8(_ctx(), _codes(codes), _s(mn), _s(mx), _s(x))
    assert y.ravel().tolist() == [min(max(c, z), q) for c in codes]
