"""Exact Winograd F(2,3) along the rows of a convolution: 3-row filters at row stride 1.

A pair of output rows needs four input rows d0..d3. Direct, it costs 2 * 3 products per
tap column; F(2,3) transforms the four rows into

    u0 = d0 - d2,  u1 = d1 + d2,  u2 = d2 - d1,  u3 = d1 - d3

and the three filter rows g0, g1, g2 into

    G0 = g0,  G1 = (g0 + g1 + g2) / 2,  G2 = (g0 - g1 + g2) / 2,  G3 = g2,

so that with m_i = u_i . G_i (one GEMM each over the row's FW * C taps)

    y0 = m0 + m1 + m2,  y1 = m1 - m2 - m3:

4 products where the direct form takes 6, a third fewer multiply-adds, and a width-only
im2col (FW * C per patch instead of 3 * FW * C). Along the rows (not the width) the transform
is whole contiguous rows of NHWC, so it folds into the patch copy: the patches of u0 are
one subtraction of two overlapping strided views of the padded image.

Exactness in float32 (quantized-ops spec §1.3, §2: the sums are integers and must be exact).
The centred codes d are integers in [-128, 127], so the differences u0, u2, u3 lie in
[-255, 255] but the sum u1 = d1 + d2 reaches -256 (two codes 0). G0 and G3 are integers, G1
and G2 multiples of 1/2; a float32 holds every integer up to 2**24 and every multiple of 1/2
up to 2**23 exactly. The combination is evaluated as

    s = m1 + m2 = d1 g1 + d2 (g0 + g2),  y0 = m0 + s,  e = m1 - m2 = d1 (g0 + g2) + d2 g1,
    y1 = e - m3,

so each of its sums is an integer whose size the direct form bounds (|d| <= 128). The
reduction is cut into chunks (:func:`chunk_bounds`) where, for every output column,

    255 * sum|G0| <= 2**24,  255 * sum|G3| <= 2**24,  256 * sum|G1| <= 2**23,
    255 * sum|G2| <= 2**23,  128 * sum(|g0| + |g1| + |g2|) <= 2**24,

which bound every partial sum BLAS may form for m_i, and s, e, y0, y1 (|g0 + g2| <= |g0| +
|g2|); y0 and y1 of a chunk are then exact integers, converted to int32, and the chunks and
the zero-point offsets add in int32 as in :mod:`gemm` (which wraps as the device's
accumulator does). The bound uses the filter's actual values, so typical filters need one
chunk and adversarial ones (all 255 against zero code 0) many.

Used by the convolution for 3-row filters at row stride 1 whose filter is offset by its own
zero code (``gemm.Rhs.zero == zf``, so no row sums of the patches are needed); bench/README.md
(round 4) has the figures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hexscope.engine.ops.kernels import gemm
from hexscope.engine.ops.kernels.code_bounds import Span
from hexscope.engine.ops.kernels.gemm import CENTER, Window

F32 = npt.NDArray[np.float32]
I32 = npt.NDArray[np.int32]

#: |u| <= 255 for the differences of centred codes in [-128, 127] (padding reads a code, so
#: the same holds); the sum u1 = d1 + d2 reaches -256.
U_MAX = 255
U1_MAX = 256
#: Multiples of 1/2 are exact in float32 up to this magnitude.
HALF_LIMIT = 2 ** 23


@dataclass(frozen=True)
class WinogradRhs:
    """The transformed filter: ``mats[i]`` is G_i as float32 (FW * C, N); ``bounds`` the
    chunk edges of the reduction (:func:`chunk_bounds`)."""

    mats: tuple[F32, F32, F32, F32]
    bounds: tuple[int, ...]
    zero: int

    @property
    def k(self) -> int:
        return self.mats[0].shape[0]

    @property
    def n(self) -> int:
        return self.mats[0].shape[1]

    @classmethod
    def from_codes(cls, codes: npt.NDArray[np.uint8], zero: int) -> WinogradRhs:
        """From a (3, FW, C, N) uint8 filter and the code it is offset by."""
        fh, fw, c, n = codes.shape
        if fh != 3:
            raise ValueError(f"F(2,3) needs a 3-row filter, got {fh} rows")
        # float32 is exact here: multiples of 1/2 below 2**9 (chunk_bounds takes care of
        # the running sums).
        g = codes.reshape(3, fw * c, n).astype(np.float32) - np.float32(zero)
        half = np.float32(0.5)
        mats = (g[0], (g[0] + g[1] + g[2]) * half, (g[0] - g[1] + g[2]) * half, g[2])
        return cls(mats, chunk_bounds(g, mats), zero)


def chunk_bounds(g: F32, mats: tuple[F32, F32, F32, F32]) -> tuple[int, ...]:
    """Edges of the fewest greedy chunks of the reduction that keep every sum of the module
    text exact, for every column; ``g`` is the offset filter (3, K, N), ``mats`` its G_i.
    One row never exceeds a limit: |G| <= 3 * 255 / 2 and |g| <= 255."""
    # Running sums of multiples of 1/2 below K * 765: exact in float32 while K <= 10965.
    acc = np.float64 if g.shape[1] > 10000 else np.float32

    def running(a: np.ndarray) -> np.ndarray:
        return np.cumsum(a, axis=0, dtype=acc)

    a0, a1, a2, a3 = (np.abs(m) for m in mats)
    direct = np.abs(g[0]) + np.abs(g[1]) + np.abs(g[2])
    return gemm.greedy_edges([
        (running(a0), 2 ** 24 / U_MAX), (running(a3), 2 ** 24 / U_MAX),
        (running(a1), HALF_LIMIT / U1_MAX), (running(a2), HALF_LIMIT / U_MAX),
        (running(direct), 2 ** 24 / CENTER)])


def applies(rows: Window) -> bool:
    """F(2,3) runs along rows for 3-row filters at row stride 1 with at least two output
    rows."""
    return rows.f == 3 and rows.s == 1 and rows.out >= 2


def winograd_conv(x: npt.NDArray[np.uint8], rows: Window, cols: Window, fill: int,
                  wrhs: WinogradRhs, offsets: I32, span: Span | None = None) -> I32:
    """``sum (x - 128)(w - zero) + offsets`` per output, int32 (B*OH*OW, N): the same sums
    as ``gemm.conv_gemm(x, rows, cols, fill, rhs, a, 0)`` with ``offsets = rhs.offsets(a,
    0)``, by F(2,3) along the rows (:func:`applies` must hold). ``span`` takes the result's
    min and max while each block is in cache."""
    bsz, _, _, c = x.shape
    oh, ow, k, n = rows.out, cols.out, cols.f * c, wrhs.n
    if k != wrhs.k:
        raise ValueError(f"inner dimensions differ: {k} vs {wrhs.k}")
    start = time.perf_counter()
    pairs = -(-oh // 2)
    xp = gemm.padded(x, rows, cols, fill, 2 * pairs + 2, np.float32)
    gemm.TIMES.im2col += time.perf_counter() - start
    out = np.empty((bsz, oh, ow, n), np.int32)
    if k == 0:                      # no taps (no input channels): the sums are the offsets
        out[...] = offsets
        return out.reshape(bsz * oh * ow, n)
    tb = max(1, min(pairs, gemm.BLOCK_BYTES // max(1, 4 * ow * k * 4)))
    patches = np.empty((4, tb * ow, k), np.float32)
    prods = np.empty((5, tb * ow, n), np.float32)          # m0..m3 and s
    sy, sx, sc = xp.strides[1:]
    for bi in range(bsz):
        for t0 in range(0, pairs, tb):
            nt = min(tb, pairs - t0)
            start = time.perf_counter()
            _transformed_patches(patches[:, :nt * ow].reshape(4, nt, ow, k), xp[bi], t0,
                                 cols.s, (sy, sx, sc))
            gemm.TIMES.im2col += time.perf_counter() - start
            start = time.perf_counter()
            n_odd = min(nt, (oh - 2 * t0) // 2)          # the last pair may have no row 2t+1
            even = out[bi, 2 * t0:2 * (t0 + nt):2]
            odd = out[bi, 2 * t0 + 1:2 * (t0 + n_odd):2]
            _products(patches[:, :nt * ow], wrhs, prods[:, :nt * ow], even, odd, offsets,
                      nt, n_odd)
            if span is not None:
                span.add(out[bi, 2 * t0:2 * t0 + nt + n_odd])
            gemm.TIMES.gemm += time.perf_counter() - start
            gemm.TIMES.calls["gemm"] += 1
    return out.reshape(bsz * oh * ow, n)


def _transformed_patches(dst: F32, img: F32, t0: int, sw: int,
                         strides: tuple[int, int, int]) -> None:
    """u0..u3 of output row pairs t0 .. t0 + nt - 1 as width patches (4, nt, OW, FW * C):
    each is one add or subtract of two overlapping strided views of ``img`` (H', W', C)."""
    _, nt, ow, k = dst.shape
    sy, sx, sc = strides

    def rows_from(r: int) -> F32:               # input rows 2t + r, width patches
        return np.ndarray((nt, ow, k), np.float32, buffer=img, offset=(2 * t0 + r) * sy,
                          strides=(2 * sy, sw * sx, sc))

    d0, d1, d2, d3 = rows_from(0), rows_from(1), rows_from(2), rows_from(3)
    np.subtract(d0, d2, out=dst[0])
    np.add(d1, d2, out=dst[1])
    np.subtract(d2, d1, out=dst[2])
    np.subtract(d1, d3, out=dst[3])


def _products(patches: F32, wrhs: WinogradRhs, prods: F32, even: I32, odd: I32,
              offsets: I32, nt: int, n_odd: int) -> None:
    """The four GEMMs per chunk, combined into the even and odd output rows (int32)."""
    ow, n = even.shape[1], wrhs.n
    m0, m1, m2, m3, s = prods
    edges = wrhs.bounds
    for i in range(len(edges) - 1):
        k0, k1 = edges[i], edges[i + 1]
        for p, g, m in zip(patches, wrhs.mats, prods[:4], strict=True):
            np.matmul(p[:, k0:k1], g[k0:k1], out=m)
        # In this order every sum is one the module text bounds: s, y0, e, y1.
        np.add(m1, m2, out=s)
        m0 += s                                  # y0
        m1 -= m2                                 # e
        m1 -= m3                                 # y1
        y0 = m0.reshape(nt, ow, n)
        y1 = m1.reshape(nt, ow, n)[:n_odd]
        if i == 0:
            np.copyto(even, y0, casting="unsafe")
            np.copyto(odd, y1, casting="unsafe")
            even += offsets
            odd += offsets
        else:
            even += y0.astype(np.int32)
            odd += y1.astype(np.int32)
