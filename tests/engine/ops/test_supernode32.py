"""Supernode_8x8p32to8: the Supernode with a 32-bit bias (TFLite's CONV_2D through the Hexagon
delegate), after nnlib's ``supernode_execute_ref`` ``is_bias32`` branch
(hexagon/ops/src/op_supernode.c).

Golden vectors: ``tests/data/oracle/supernode_8x8p32to8_ref.json``, campaign
Supernode_8x8p32to8_small of ``tests/oracle/py/campaigns_conv25.py`` (exported with its
``export`` command) with the outputs of nnlib's ``Supernode_8x8p32to8_ref`` compiled on x86;
cases where the C crashes (a division by a zero range) must fail here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.supernode import supernode_8x8p8to8
from hexscope.engine.ops.conv.supernode32 import supernode32_reference, supernode_8x8p32to8
from hexscope.engine.tensor import Tensor

GOLDEN = Path(__file__).parents[2] / "data" / "oracle" / "supernode_8x8p32to8_ref.json"
_DT = {"u8": (np.uint8, DType.QUINT8), "f32": (np.float32, DType.FLOAT32),
       "i32": (np.int32, DType.INT32)}


def _tensor(spec: dict) -> Tensor:
    shape = tuple(spec["shape"])
    if spec["hex"] is None:
        return Tensor.shape_only(shape)
    np_type, dtype = _DT[spec["dtype"]]
    data = np.frombuffer(bytes.fromhex(spec["hex"]), np_type).reshape(shape)
    return Tensor.from_array(data.copy(), dtype)


def _w(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def _u8(a) -> Tensor:
    return Tensor.from_array(np.asarray(a, np.uint8), DType.QUINT8)


def _i32(a) -> Tensor:
    return Tensor.from_array(np.asarray(a, np.int32).reshape(1, 1, 1, -1), DType.QINT32)


def _cases() -> list[dict]:
    return json.loads(GOLDEN.read_text())["cases"]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["desc"][:70])
def test_bit_exact_with_the_c_ref(case):
    inputs = [_tensor(t) for t in case["inputs"]]
    ctx = KernelContext(0x20, "Supernode_8x8p32to8_ref", padding=Padding.parse(case["padding"]))
    if "fails" in case:
        with pytest.raises(KernelError):
            supernode_8x8p32to8(ctx, *inputs)
        return
    outs = supernode_8x8p32to8(ctx, *inputs)
    for got, want in zip(outs, case["outputs"], strict=True):
        assert list(got.shape) == want["shape"]
        assert np.asarray(got.array).tobytes().hex() == want["hex"], case["desc"]


def test_the_golden_file_covers_the_edges():
    descs = " ".join(c["desc"] for c in _cases())
    for kind in ("near int32 limits", "delegate-like", "qdown (-inf,inf)", "relu [0,inf)",
                 "relux [0,X]", "+scale", "SAME", "VALID", "NA", "s(3, ", "min==max"):
        assert kind in descs, kind
    assert any("fails" in c for c in _cases())


X22 = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)          # codes = reals (range 0..255)
IDENTITY = np.array([1, 0, 0, 1]).reshape(2, 2, 1, 1)     # taps (0,0) and (1,1)


def _run(bias, b_rng, out_range, *scale):
    ctx = KernelContext(0x20, "Supernode_8x8p32to8", padding=Padding.SAME)
    y, mn, mx = supernode_8x8p32to8(
        ctx, _u8(X22), _u8(IDENTITY), _w(0.0), _w(255.0), _w(0.0), _w(255.0),
        Tensor.shape_only((1, 1, 1, 1)), _i32(bias), _w(b_rng[0]), _w(b_rng[1]),
        _w(out_range[0]), _w(out_range[1]), *scale)
    return y.array.reshape(-1).tolist(), float(mn.array[0, 0, 0, 0]), float(mx.array[0, 0, 0, 0])


def test_a_bias_of_one_step_per_unit_by_hand():
    # Sums [1+4, 2, 3, 4] in steps of 1 (ranges 0..255). A bias range of +-2**31 makes one
    # bias unit one step: bias step = 2**32 / 2**32 = 1, no zero code (is_bias32), so a bias
    # of 2 adds 2 -> [7, 4, 5, 6]; the fixed range [0, 10] gives recip 0xff0000 // 10 and
    # out = (s * recip + 2**15) >> 16.
    out, mn, mx = _run([2], (-2.0**31, 2.0**31), (0.0, 10.0))
    assert out == [(s * 1671168 + 32768) >> 16 for s in (7, 4, 5, 6)] == [179, 102, 128, 153]
    assert (mn, mx) == (0.0, 10.0)


def test_the_bias_has_no_zero_code():
    # bias range [0, 2**32): an 8-bit bias would subtract its zero code; the 32-bit one reads
    # its value as it is: bias 3 is 3 steps, whatever the range's minimum.
    out, _, _ = _run([3], (0.0, 2.0**32), (0.0, 10.0))
    assert out == [(s * 1671168 + 32768) >> 16 for s in (8, 5, 6, 7)]


def test_a_bias_past_the_range_clamps_at_255_and_0():
    out_hi, _, _ = _run([1000], (-2.0**31, 2.0**31), (0.0, 10.0))
    out_lo, _, _ = _run([-1000], (-2.0**31, 2.0**31), (0.0, 10.0))
    assert out_hi == [255] * 4 and out_lo == [0] * 4


def test_a_bias_at_the_int32_limit_wraps_with_the_sum():
    # biasbuf = fast_roundf(2147483647 * 1.0f) saturates to INT32_MAX; the C's
    # ``biasbuf[i] + tmp_out[...]`` is an int32 add, which wraps on Hexagon (spec §1.3):
    # INT32_MAX + 5 is negative, and the output clamps to 0 (the oracle's golden cases
    # "near int32 limits" agree).
    out, _, _ = _run([2**31 - 1], (-2.0**31, 2.0**31), (0.0, 10.0))
    assert out == [0] * 4


def test_the_channel_scale_input_is_ignored_as_by_supernode_check_ref():
    scale = Tensor.from_array(np.array([0.25], np.float32).reshape(1, 1, 1, 1), DType.FLOAT32)
    assert _run([2], (-2.0**31, 2.0**31), (0.0, 10.0), scale) == \
        _run([2], (-2.0**31, 2.0**31), (0.0, 10.0))


def test_a_free_maximum_grows_from_1_128():
    # Relu range [0, +inf): steps 0.1 (data) x 0.01 (filter) = 0.001; the sums are 5.0, 2.0,
    # 3.0, 4.0 and the largest (5.0, before the bias) takes 1/128 to 8.0 by doublings. The
    # bias 2000 steps of 0.001 (range +-2**31 x 0.001) adds 2.0: 255 x [7, 4, 5, 6] / 8.
    ctx = KernelContext(0x20, "Supernode_8x8p32to8", padding=Padding.SAME)
    y, mn, mx = supernode_8x8p32to8(
        ctx, _u8(X22 * 10), _u8(IDENTITY * 100), _w(0.0), _w(25.5), _w(0.0), _w(2.55),
        Tensor.shape_only((1, 1, 1, 1)), _i32([2000]), _w(-2.0**31 * 0.001),
        _w(2.0**31 * 0.001), _w(0.0), _w(np.inf))
    assert (float(mn.array.reshape(-1)[0]), float(mx.array.reshape(-1)[0])) == (0.0, 8.0)
    got = y.array.reshape(-1).astype(int)
    assert np.all(np.abs(got - np.array([7, 4, 5, 6]) * 255 / 8) <= 1)
    assert ctx.state["range"][1] == 8.0          # kept in the node for the next run


def test_an_8_bit_bias_is_refused():
    with pytest.raises(KernelError, match="32-bit"):
        ctx = KernelContext(0x20, "Supernode_8x8p32to8", padding=Padding.SAME)
        supernode_8x8p32to8(ctx, _u8(X22), _u8(IDENTITY), _w(0.0), _w(255.0), _w(0.0),
                            _w(255.0), Tensor.shape_only((1, 1, 1, 1)), _u8([[[[2]]]]),
                            _w(0.0), _w(1.0), _w(0.0), _w(10.0))


def test_the_op_is_declared_with_its_optional_channel_scale():
    spec = REGISTRY.get("Supernode_8x8p32to8")
    assert spec.summary and spec.reference is not None
    assert [p.name for p in spec.inputs.head][-1] == "channel_scale"
    assert REGISTRY.get("Supernode_8x8p32to8_ref").kernel is spec.kernel


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.sampled_from(
    [Padding.SAME, Padding.VALID, Padding.NA]), st.integers(1, 2), st.data())
def test_a_zero_bias_gives_what_the_8_bit_supernode_gives_with_its_zero_code(
        fh, fw, cout, padding, stride, data):
    # (b - zb) = 0 for the 8-bit bias at its zero code, b = 0 for the 32-bit one: the same
    # sums, range search and requantization must follow (supernode_execute_ref).
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(0, 256, (1, 5, 4, 3), dtype=np.uint8)
    w = rng.integers(0, 256, (fh, fw, 3, cout), dtype=np.uint8)
    lo, hi = data.draw(st.sampled_from([(-1.0, 1.0), (0.0, 6.0), (-3.0, -0.5)]))
    out = data.draw(st.sampled_from([(-np.inf, np.inf), (0.0, np.inf), (0.0, 6.0)]))
    common = (_u8(x), _u8(w), _w(lo), _w(hi), _w(-1.0), _w(1.0),
              Tensor.shape_only((1, stride, stride, 1)))
    tail = (_w(out[0]), _w(out[1]))
    ctx8 = KernelContext(1, "Supernode_8x8p8to8", padding=padding)
    ctx32 = KernelContext(2, "Supernode_8x8p32to8", padding=padding)
    try:
        want = supernode_8x8p8to8(ctx8, *common, _u8(np.zeros((1, 1, 1, cout))), _w(0.0),
                                  _w(255.0), *tail)
    except KernelError:
        with pytest.raises(KernelError):
            supernode_8x8p32to8(ctx32, *common, _i32(np.zeros(cout)), _w(-1.0), _w(1.0), *tail)
        return
    got = supernode_8x8p32to8(ctx32, *common, _i32(np.zeros(cout)), _w(-1.0), _w(1.0), *tail)
    for g, e in zip(got, want, strict=True):
        assert np.asarray(g.array).tobytes() == np.asarray(e.array).tobytes()


def test_the_float_reference_adds_the_bias_in_steps_of_range_over_2_32():
    ctx = KernelContext(0x20, "Supernode_8x8p32to8", padding=Padding.SAME)
    y, mn, mx = supernode32_reference(
        ctx, _u8(X22), _u8(IDENTITY), _w(0.0), _w(255.0), _w(0.0), _w(255.0),
        Tensor.shape_only((1, 1, 1, 1)), _i32([2]), _w(-2.0**31), _w(2.0**31), _w(0.0),
        _w(np.inf))
    assert np.asarray(y).reshape(-1).tolist() == [7.0, 4.0, 5.0, 6.0]
