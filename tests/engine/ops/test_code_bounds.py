"""The span a convolution notes for its output (engine/ops/kernels/code_bounds.py), and its use by
QuantizeDownAndShrinkRange (quantized-ops spec §7: the shrink reads the codes' min and max)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph, Session
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.conv2d import quantized_conv2d_8x8to32
from hexscope.engine.ops.kernels import code_bounds
from hexscope.engine.ops.quant import requantize
from hexscope.engine.ops.quant.requantize import quantize_down_and_shrink_range_32to8
from hexscope.engine.tensor import Tensor
from support.ref_conv import ref_zero


def _conv(x, w, stride=(1, 1), padding=Padding.SAME) -> Tensor:
    ctx = KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=padding)
    y, _, _ = quantized_conv2d_8x8to32(
        ctx, Tensor.from_array(x), Tensor.from_array(w), Tensor.scalar(-1.0),
        Tensor.scalar(3.0), Tensor.scalar(-1.0), Tensor.scalar(1.0078740),
        Tensor.shape_only((1, stride[0], stride[1], 1)))
    return y


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), pad=st.sampled_from([Padding.SAME, Padding.VALID]))
def test_the_noted_span_is_the_outputs_min_and_max(data, pad, gemm_backend) -> None:
    """Every fast path (1x1, blocked im2col, F(2,3) along the rows; the integer kernel's
    bounds, with whole and partial blocks of 16 columns): once frozen, the output's noted
    span is exactly its (min, max)."""
    h, w, c, n = (data.draw(st.integers(lo, hi)) for lo, hi in ((2, 9), (2, 9), (1, 6), (1, 40)))
    fh, fw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    stride = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(0, 256, (1, h, w, c), dtype=np.uint8)
    wt = rng.integers(0, 256, (fh, fw, c, n), dtype=np.uint8)
    y = _conv(x, wt, stride, pad).readonly()
    if not y.elements:
        assert code_bounds.known(y.raw) is None
        return
    assert code_bounds.known(y.raw) == (int(y.array.min()), int(y.array.max()))


def test_a_span_is_trusted_only_for_its_frozen_buffer() -> None:
    rng = np.random.default_rng(1)
    y = _conv(rng.integers(0, 256, (1, 5, 5, 3), dtype=np.uint8),
              rng.integers(0, 256, (3, 3, 3, 2), dtype=np.uint8))
    assert code_bounds.known(y.raw) is None            # still writable: could change
    y.readonly()
    assert code_bounds.known(y.raw) is not None
    copy = y.copy().readonly()                          # same data, another buffer
    assert code_bounds.known(copy.raw) is None


def test_requantize_gives_the_same_codes_with_or_without_a_noted_span() -> None:
    """Built so that a wrong span would show: the noted one is replaced by a narrower one,
    and the output range changes; the true span gives the result of measuring."""
    rng = np.random.default_rng(2)
    y = _conv(rng.integers(0, 256, (1, 12, 12, 8), dtype=np.uint8),
              rng.integers(0, 256, (3, 3, 8, 4), dtype=np.uint8)).readonly()
    mn, mx = Tensor.scalar(-1.0), Tensor.scalar(1.0)
    ctx = KernelContext(0x11, "QuantizeDownAndShrinkRange_32to8")
    with_span = [t if isinstance(t, np.ndarray) else t.array
                 for t in quantize_down_and_shrink_range_32to8(ctx, y, mn, mx)]
    measured = [t if isinstance(t, np.ndarray) else t.array
                for t in quantize_down_and_shrink_range_32to8(ctx, y.copy().readonly(), mn, mx)]
    assert all(np.array_equal(a, b) for a, b in zip(with_span, measured, strict=True))
    lo, hi = code_bounds.known(y.raw)
    narrow = code_bounds.Span()
    narrow.add(np.array([lo // 2, hi // 2]))
    code_bounds.note(y.raw, narrow)                    # a deliberately wrong span ...
    wrong = quantize_down_and_shrink_range_32to8(ctx, y, mn, mx)
    assert not np.array_equal(np.asarray(wrong[2]), np.asarray(measured[2]))  # ... shows


def test_a_session_run_uses_the_span_and_matches_a_fresh_measurement(monkeypatch) -> None:
    """Conv -> requantize in a session: the requantize finds the span (no measuring pass)
    and its outputs equal those of a requantize that measures."""
    rng = np.random.default_rng(3)
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    for node_id, value in ((0x11, -1.0), (0x12, 3.0), (0x13, -1.0), (0x14, 1.0078740)):
        g.append_const_node(node_id, np.array([value], np.float32))
    g.append_const_node(0x15, rng.integers(0, 256, (3, 3, 4, 6), dtype=np.uint8))
    g.append_const_node(0x16, shape=(1, 1, 1, 1))
    g.append_node(0x100, "QuantizedConv2d_8x8to32", inputs=[(0x10, 0), (0x15, 0), (0x11, 0),
                  (0x12, 0), (0x13, 0), (0x14, 0), (0x16, 0)], outputs=3, padding=Padding.SAME)
    g.append_node(0x101, "QuantizeDownAndShrinkRange_32to8",
                  inputs=[(0x100, 0), (0x100, 1), (0x100, 2)], outputs=3)
    g.append_node(0x20, "OUTPUT", inputs=[(0x101, 0)])
    x = rng.integers(0, 256, (1, 9, 9, 4), dtype=np.uint8)
    measured = []
    real = requantize.code_bounds

    def spy(codes):
        measured.append(codes.size)
        return real(codes)

    monkeypatch.setattr(requantize, "code_bounds", spy)
    session = Session(g)
    session.execute([x])
    assert measured == []
    conv_out = session.executor.trace[0x100].outputs[0]
    expect = quantize_down_and_shrink_range_32to8(
        KernelContext(0x101, "QuantizeDownAndShrinkRange_32to8"), conv_out.copy().readonly(),
        *session.executor.trace[0x100].outputs[1:])
    got = session.executor.trace[0x101].outputs
    assert measured == [conv_out.elements]
    assert np.array_equal(got[0].array, np.asarray(expect[0]).reshape(got[0].shape))
    for k in (1, 2):                                    # the range words, bit for bit
        assert got[k].array.tobytes() == np.asarray(expect[k], np.float32).tobytes()


@pytest.mark.parametrize(("x_rng", "f_rng", "pad"), [
    ((-1.0, 3.0), (-3.0, -1.0), Padding.SAME),      # zf = 383: a row-sum term after the GEMM
    ((0.5, 3.0), (-3.0, -1.0), Padding.VALID),      # and zx = -51 (no padding taps)
    ((0.5, 3.0), (-1.0, 1.0078740), Padding.SAME),  # zx = -51 padded: the 0/1 mask path
])
@pytest.mark.parametrize("n", [16, 21])
def test_improper_ranges_note_the_span_of_the_final_sums(x_rng, f_rng, pad, n,
                                                         gemm_backend) -> None:
    """Zero codes outside 0..255 (§1.4 ZA', unclamped) add terms after the GEMM; the span
    noted for the requantize must be that of the final output, not the GEMM's alone."""
    rng = np.random.default_rng(n)
    ctx = KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=pad)
    y, _, _ = quantized_conv2d_8x8to32(
        ctx, Tensor.from_array(rng.integers(0, 256, (2, 7, 6, 5), dtype=np.uint8)),
        Tensor.from_array(rng.integers(0, 256, (3, 3, 5, n), dtype=np.uint8)),
        *(Tensor.scalar(v) for v in (*x_rng, *f_rng)), Tensor.shape_only((1, 1, 1, 1)))
    y.readonly()
    noted = code_bounds.known(y.raw)
    assert noted is None or noted == (int(y.array.min()), int(y.array.max()))
    if ref_zero(*x_rng) >= 0 or pad is Padding.VALID:
        assert noted is not None                        # the GEMM paths note a span
