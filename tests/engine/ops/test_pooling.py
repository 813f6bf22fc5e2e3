"""QuantizedMaxPool_8 and QuantizedAvgPool_8 (quantized-ops spec §1.7, §8, §9)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.pooling.pool import (
    Span,
    out_size_and_pad,
    quantized_avg_pool_8,
    quantized_max_pool_8,
)
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

# every test runs with the compiled kernels and with the numpy paths (tests/conftest.py)
pytestmark = __import__("pytest").mark.usefixtures("kernels")


def _ctx(padding: Padding) -> KernelContext:
    return KernelContext(node_id=0x20, op="QuantizedMaxPool_8", padding=padding)


def _pool(kernel, x: np.ndarray, win: tuple[int, int], stride: tuple[int, int],
          padding: Padding = Padding.SAME) -> np.ndarray:
    y, lo, hi = kernel(_ctx(padding), Tensor.from_array(x.astype(np.uint8)), Tensor.scalar(-2.0),
                       Tensor.scalar(5.0), Tensor.shape_only((1, *win, 1)),
                       Tensor.shape_only((1, *stride, 1)))
    assert (lo.item(), hi.item()) == (-2.0, 5.0)       # §8, §9: the range is copied
    return np.asarray(y)


@pytest.mark.parametrize(("n", "f", "s", "padding", "expected"), [
    (5, 3, 2, Padding.VALID, Span(2, 0)),          # (5 - 3)/2 + 1
    (2, 3, 1, Padding.VALID, Span(0, 0)),          # window larger than the input: empty
    (5, 3, 2, Padding.SAME, Span(3, 1)),           # P = 2*2 - 2 = 2, before 1
    (4, 2, 1, Padding.SAME, Span(4, 0)),           # P = 1: SAME puts it after
    (4, 2, 1, Padding.SAME_CAFFE, Span(4, 1)),     # ... SAME_CAFFE before
    (20, 3, 4, Padding.SAME, Span(5, 0)),          # P = -1: no padding
    (5, 3, 2, Padding.NA, Span(2, 0)),             # floor(5/2), P = 2 - 2 = 0
    (1, 1, 2, Padding.NA, Span(0, 0)),             # n < s
    (5, 3, 1, Padding.MIRROR_REFLECT, Span(0, 0)),
])
def test_out_size_and_pad_follows_spec_1_7(n, f, s, padding, expected) -> None:
    assert out_size_and_pad(n, f, s, padding) == expected


def test_max_pool_ignores_padding_cells() -> None:
    # §8: 3x3 SAME stride 1 on a 2x2 image: every window holds the whole image.
    x = np.array([1, 9, 4, 2]).reshape(1, 2, 2, 1)
    assert _pool(quantized_max_pool_8, x, (3, 3), (1, 1)).ravel().tolist() == [9, 9, 9, 9]
    y = _pool(quantized_max_pool_8, x, (2, 2), (1, 1), Padding.VALID)
    assert y.shape == (1, 1, 1, 1) and y.item() == 9


def test_avg_pool_rounds_half_up_and_counts_only_valid_cells() -> None:
    # §9: sum 10 over 4 cells, rc = 8192: (10*8192 + 16384) >> 15 = 3 (2.5 rounds up).
    x = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)
    assert _pool(quantized_avg_pool_8, x, (2, 2), (2, 2), Padding.VALID).item() == 3
    # 3x3 SAME on all-255: each window has 4 valid cells, so the average stays 255.
    full = np.full((1, 2, 2, 1), 255)
    assert _pool(quantized_avg_pool_8, full, (3, 3), (1, 1)).ravel().tolist() == [255] * 4


def test_avg_pool_single_cell_is_exact() -> None:
    # §9: count = 1 gives rc = 32767, which still reproduces every code.
    x = np.arange(256).reshape(1, 16, 16, 1)
    assert np.array_equal(_pool(quantized_avg_pool_8, x, (1, 1), (1, 1)), x)


def test_avg_pool_hvx_sum_defect() -> None:
    # §9: 12x12 = 144 cells of 255 sum to 36720 >= 32768: read as signed, the result is 0.
    y = _pool(quantized_avg_pool_8, np.full((1, 12, 12, 1), 255), (12, 12), (1, 1),
              Padding.VALID)
    assert y.item() == 0
    # 17x17 = 289 cells: sum 73695 wraps to 8159; rc = 32768 // 289 = 113;
    # (8159*113 + 16384) >> 15 = 28.
    y = _pool(quantized_avg_pool_8, np.full((1, 17, 17, 1), 255), (17, 17), (1, 1),
              Padding.VALID)
    assert y.item() == 28


@pytest.mark.parametrize("kernel", [quantized_max_pool_8, quantized_avg_pool_8])
def test_pools_give_empty_outputs_without_error(kernel) -> None:
    x = np.ones((1, 2, 2, 3))
    assert _pool(kernel, x, (3, 3), (1, 1), Padding.VALID).shape == (1, 0, 0, 3)
    assert _pool(kernel, x, (1, 1), (1, 1), Padding.MIRROR_SYMMETRIC).shape == (1, 0, 0, 3)


@pytest.mark.parametrize("kernel", [quantized_max_pool_8, quantized_avg_pool_8])
def test_pools_reject_bad_window_stride_shape_and_na(kernel) -> None:
    x = Tensor.from_array(np.ones((1, 4, 4, 2), np.uint8))
    lo, hi = Tensor.scalar(0.0), Tensor.scalar(1.0)
    good = Tensor.shape_only((1, 2, 2, 1))
    for win, stride in (((2, 2, 2, 1), (1, 1, 1, 1)), ((1, 2, 2, 2), (1, 1, 1, 1)),
                        ((1, 2, 2, 1), (2, 1, 1, 1)), ((1, 2, 2, 1), (1, 1, 1, 3))):
        with pytest.raises(KernelError, match="bad window/stride shape"):
            kernel(_ctx(Padding.SAME), x, lo, hi, Tensor.shape_only(win),
                   Tensor.shape_only(stride))
    with pytest.raises(KernelError, match="This op might pad"):
        kernel(_ctx(Padding.NA), x, lo, hi, good, good)
    with pytest.raises(KernelError, match="at least 1x1"):
        kernel(_ctx(Padding.SAME), x, lo, hi, good, Tensor.shape_only((1, 0, 1, 1)))


def _ref_pool(x: np.ndarray, fh: int, fw: int, sh: int, sw: int, padding: Padding,
              average: bool) -> np.ndarray:
    """Slow loops over outputs and window cells, with §1.7 and §9 written out."""
    def span(n: int, f: int, s: int) -> tuple[int, int]:
        if padding is Padding.VALID:
            return (max(0, (n - f) // s + 1) if n >= f else 0), 0
        out = -(-n // s)
        pad = max(0, (out - 1) * s + f - n)
        return out, (pad + 1) // 2 if padding is Padding.SAME_CAFFE else pad // 2

    b, h, w, d = x.shape
    oh, ph = span(h, fh, sh)
    ow, pw = span(w, fw, sw)
    y = np.zeros((b, oh, ow, d), np.int64)
    for i in range(oh):
        for j in range(ow):
            rows = [r for r in range(i * sh - ph, i * sh - ph + fh) if 0 <= r < h]
            cols = [c for c in range(j * sw - pw, j * sw - pw + fw) if 0 <= c < w]
            cells = x[:, rows][:, :, cols].astype(np.int64)
            if not average:
                y[:, i, j] = cells.max(axis=(1, 2))
                continue
            total = cells.sum(axis=(1, 2)) % 65536
            signed = np.where(total >= 32768, total - 65536, total)
            rc = min(32767, 32768 // (len(rows) * len(cols)))
            y[:, i, j] = np.clip((signed * rc + 16384) >> 15, 0, 255)
    return y


@settings(max_examples=40, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 9), st.integers(1, 9),
                       st.integers(1, 5)),
       fh=st.integers(1, 4), fw=st.integers(1, 4), sh=st.integers(1, 3), sw=st.integers(1, 3),
       padding=st.sampled_from([Padding.SAME, Padding.VALID, Padding.SAME_CAFFE]),
       seed=st.integers(0, 2 ** 16))
def test_pools_match_a_loop_reference(shape, fh, fw, sh, sw, padding, seed) -> None:
    x = np.random.default_rng(seed).integers(0, 256, shape)
    for kernel, average in ((quantized_max_pool_8, False), (quantized_avg_pool_8, True)):
        got = _pool(kernel, x, (fh, fw), (sh, sw), padding)
        assert np.array_equal(got, _ref_pool(x, fh, fw, sh, sw, padding, average))


def test_avg_pool_large_windows_match_the_reference() -> None:
    # Windows of 130+ cells reach the 16-bit sum defect with random data too.
    x = np.random.default_rng(3).integers(150, 256, (1, 13, 12, 4))
    got = _pool(quantized_avg_pool_8, x, (11, 12), (1, 1), Padding.SAME)
    assert np.array_equal(got, _ref_pool(x, 11, 12, 1, 1, Padding.SAME, True))


def test_pool_runs_in_a_session_with_shape_only_window() -> None:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=1)
    g.append_const_node(0x101, np.array([-1.0], np.float32))
    g.append_const_node(0x102, np.array([1.0], np.float32))
    g.append_const_node(0x103, shape=(1, 2, 2, 1))
    g.append_const_node(0x104, shape=(1, 2, 2, 1))
    g.append_node(0x110, "QuantizedMaxPool_8",
                  inputs=[(0x100, 0), (0x101, 0), (0x102, 0), (0x103, 0), (0x104, 0)],
                  outputs=3, padding="VALID")
    g.append_node(0x120, "OUTPUT", inputs=[(0x110, 0), (0x110, 2)])
    x = np.arange(16, dtype=np.uint8).reshape(1, 4, 4, 1)
    y, hi = Session(g).execute([x])
    assert y.array.ravel().tolist() == [5, 7, 13, 15]
    assert hi.array.item() == 1.0
