"""Exact integer GEMM on uint8 codes, and the im2col that feeds it.

Where the integer kernel of :mod:`igemm` runs (AVX2 and llvmlite), the centred codes are
int16 and the sums are exact by construction, with no chunks. Elsewhere, and with
``HEXSCOPE_GEMM=float``, they are float32 and go through BLAS as follows.

The quantized convolution and matrix multiply compute int32 sums of products of offset uint8
codes, ``sum_k (x_k - zx) * (w_k - zw)``, wrapping modulo 2**32 (quantized-ops spec §1.3,
§2, §3). Float32 BLAS is the fastest matrix product numpy has, and it is exact as long as
every partial sum is an integer of magnitude <= 2**24. So the codes are offset first (the
left-hand side by 128, ``cx = x - 128``, |cx| <= 128; the right-hand side by a code ``z``,
usually its own zero code) and the reduction dimension is cut into chunks in which
``128 * sum_k |cw[k, n]|`` stays within 2**24 for every column n, which bounds every partial
sum whatever order BLAS sums in (:func:`greedy_edges`; the bound of the values alone,
|cw| <= 128, would give chunks of 1024). The zero-point offsets are folded back exactly in
int32 arithmetic, which wraps just as the device's accumulator does::

    sum_k (cx + a)(cw + b) = sum cx*cw + b * sum cx + a * sum cw + K*a*b,
    a = 128 - zx, b = z - zw

``b`` is 0 when the right-hand side is offset by its own zero code; otherwise ``sum cx``
comes from a GEMV. Float64 GEMM would need no chunks but runs at half the speed (measured,
see bench/README.md).

The convolution runs by blocks of output rows (:func:`conv_gemm`): each block's patches are
copied (im2col) and multiplied while they are in cache, straight into the int32 output.

:data:`TIMES` accumulates the seconds spent in GEMM and im2col, for the benchmark's split.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from hexscope.engine.ops.kernels import compiled, igemm
from hexscope.engine.ops.kernels.code_bounds import Span

CENTER = 128
LIMIT = 2 ** 24         # float32 holds every integer up to this magnitude

F32 = npt.NDArray[np.float32]
I32 = npt.NDArray[np.int32]
#: A left-hand side: centred codes as int16 (integer kernel) or float32 (BLAS).
Lhs = npt.NDArray[np.int8] | npt.NDArray[np.int16] | F32


@dataclass
class StageTimes:
    """Seconds spent in each stage since the last :meth:`reset` (read by the benchmark)."""

    gemm: float = 0.0
    im2col: float = 0.0
    calls: dict[str, int] = field(default_factory=lambda: {"gemm": 0, "im2col": 0})

    def reset(self) -> None:
        self.gemm = self.im2col = 0.0
        self.calls = {"gemm": 0, "im2col": 0}


TIMES = StageTimes()


def wrap32(value: int) -> int:
    """``value`` modulo 2**32 as a signed int32 (two's complement, as the device's int32)."""
    return (int(value) + 2**31) % 2**32 - 2**31


@dataclass(frozen=True)
class Rhs:
    """A right-hand side of uint8 codes (K, N), offset and ready for :func:`offset_gemm`.

    ``mat`` is (K, N) float32, the codes minus ``zero`` (made on first use); ``colsum`` is
    sum_k (w - zero) per column. A convolution takes its filter's zero code as ``zero``
    (when it lies in 0..255), so the term ``b * sum_k lhs`` of :func:`offset_gemm` vanishes;
    there is no column of ones for those row sums either (an odd N + 1 slows BLAS down).
    ``edges`` cut K into the float32 GEMMs: with |lhs| <= 128, every partial sum within a
    chunk is an integer of magnitude <= 128 * sum |w - zero| over the chunk <= 2**24 (the
    filter's actual values, so a typical filter needs fewer chunks than the worst case).
    """

    codes: npt.NDArray[np.uint8]        # (K, N), read-only
    colsum: I32
    zero: int
    # offsets() by (a, b): a network's data zero codes repeat from run to run.
    _offsets: dict[tuple[int, int], I32] = field(default_factory=dict, compare=False,
                                                 repr=False)

    @property
    def k(self) -> int:
        return self.codes.shape[0]

    @property
    def n(self) -> int:
        return self.codes.shape[1]

    @functools.cached_property
    def mat(self) -> F32:
        """The codes minus ``zero`` as float32, made on first use: a convolution that runs
        by F(2,3) only needs the column sums (4 bytes per weight saved)."""
        mat = np.empty(self.codes.shape, np.float32)
        np.subtract(self.codes, np.float32(self.zero), out=mat, dtype=np.float32)
        mat.flags.writeable = False
        return mat

    @functools.cached_property
    def packed(self) -> igemm.PackedRhs:
        """The codes minus ``zero`` packed for the integer kernel, made on first use."""
        return igemm.PackedRhs.pack(self.codes.astype(np.int16) - np.int16(self.zero))

    @functools.cached_property
    def packed8(self) -> igemm.PackedRhs:
        """The codes themselves packed for the VNNI kernel, made on first use (``zero``
        enters as a row term: :func:`gemm_into`)."""
        return igemm.PackedRhs.pack8(self.codes)

    @classmethod
    def from_codes(cls, codes: npt.NDArray[np.uint8], zero: int = CENTER) -> Rhs:
        if not 0 <= zero <= 255:
            raise ValueError(f"zero must be a code in 0..255, got {zero}")
        k, _ = codes.shape
        if codes.flags.writeable:
            codes = codes.copy()
            codes.flags.writeable = False
        colsum = (codes.sum(axis=0, dtype=np.int64) - zero * k).astype(np.int32)
        return cls(codes, colsum, zero)

    @functools.cached_property
    def edges(self) -> tuple[int, ...]:
        """The K chunks of the float32 path (class text), made on first use: the integer
        kernel needs none."""
        k = self.k
        # Running sums of |w - zero| <= 255 * K: integers, exact in float32 for K < 65793.
        size = np.abs(self.codes.astype(np.float32) - np.float32(self.zero))
        return greedy_edges([(np.cumsum(size, axis=0, dtype=np.float64 if k > 65000
                                        else np.float32), LIMIT / CENTER)])

    def offsets(self, a: int, b: int) -> I32:
        """The per-column constant ``a * sum cw + K * a * b`` of :func:`offset_gemm`, int32
        (read-only: cached by (a, b))."""
        cached = self._offsets.get((a, b))
        if cached is not None:
            return cached
        a32 = np.int32(wrap32(a))
        value = (self.colsum * a32 + np.int32(wrap32(self.k * a * b))).astype(np.int32)
        value.flags.writeable = False
        if len(self._offsets) >= 16:
            self._offsets.clear()
        self._offsets[(a, b)] = value
        return value


def patch_dtype() -> type[np.int8] | type[np.int16] | type[np.float32]:
    """The type of the left-hand sides :func:`center` and :func:`im2col` make: int8 for the
    VNNI kernel where it runs (:func:`igemm.available8`), int16 for the AVX2 one
    (:func:`igemm.available`), else float32."""
    if igemm.available8():
        return np.int8
    return np.int16 if igemm.available() else np.float32


def center(codes: npt.NDArray[np.uint8], dtype: npt.DTypeLike = None) -> Lhs:
    """uint8 codes as ``q - 128`` (the left-hand side of :func:`offset_gemm`), of ``dtype``
    (default :func:`patch_dtype`)."""
    dtype = np.dtype(patch_dtype() if dtype is None else dtype)
    out = np.empty(codes.shape, dtype)
    centre_into(codes, out)
    return out


def centre_into(codes: npt.NDArray[np.uint8], out: Lhs) -> None:
    """``out[...] = codes - 128`` in ``out``'s type (int8: the top bit flipped, the same
    bits; 128 itself is not an int8)."""
    if out.dtype == np.int8:
        np.bitwise_xor(codes, np.uint8(CENTER), out=out.view(np.uint8))
    else:
        np.subtract(codes, out.dtype.type(CENTER), out=out, dtype=out.dtype)


def offset_gemm(lhs: Lhs, rhs: Rhs, a: int, b: int) -> I32:
    """``sum_k (lhs[p,k] + a) * (rhs_c[k,n] + b)`` modulo 2**32, as int32 (P, N).

    ``lhs`` holds centred codes (integers in [-128, 127], or fill - 128 for padding);
    ``rhs_c`` are the codes of ``rhs`` minus ``rhs.zero``. ``a`` and ``b`` may be any
    integers: only their values modulo 2**32 matter.
    """
    p, k = lhs.shape
    if k != rhs.k:
        raise ValueError(f"inner dimensions differ: {k} vs {rhs.k}")
    out = np.empty((p, rhs.n), np.int32)
    gemm_into(out, lhs, rhs, rhs.offsets(a, b), b)
    return out


def gemm_into(out: I32, lhs: Lhs, rhs: Rhs, offsets: I32, b: int,
              span: Span | None = None) -> None:
    """``out = lhs @ rhs_c + offsets + b * rowsum(lhs)`` in int32 (wrapping), exact.

    An int16 ``lhs`` goes to the integer kernel (:mod:`igemm`), exact by construction.
    A float32 one takes one float32 GEMM per K chunk of ``rhs.edges``; each chunk's result
    is an integer of magnitude <= 2**24, so it converts to int32 exactly, and the chunks and
    the offsets are added in int32, which wraps as the device's accumulator does. ``span``
    takes the result's min and max while it is in cache.
    """
    start = time.perf_counter()
    p, k = lhs.shape
    if lhs.dtype == np.int8:
        # lhs @ (w - zero) + b * rowsum = lhs @ w + (b - zero) * rowsum: the VNNI kernel
        # multiplies by the codes themselves and adds the row term as it starts each tile
        coef = wrap32(b - rhs.zero)
        rowterm = (_row_sums(lhs) * np.int32(coef)) if coef and k else None
        bounds = igemm.gemm_into(out, lhs, rhs.packed8, offsets, rowterm)
        if span is not None and bounds is not None:
            span.add_bounds(*bounds)
        TIMES.gemm += time.perf_counter() - start
        TIMES.calls["gemm"] += 1
        return
    if lhs.dtype == np.int16:
        bounds = igemm.gemm_into(out, lhs, rhs.packed, offsets)
        if span is not None and bounds is not None and not (b and k and wrap32(b)):
            span.add_bounds(*bounds)
            span = None                     # taken: the row-sum term below did not apply
    elif k == 0:
        out[...] = offsets
    else:
        part = np.empty((p, rhs.n), np.float32)
        edges = rhs.edges
        for i in range(len(edges) - 1):
            k0, k1 = edges[i], edges[i + 1]
            np.matmul(lhs[:, k0:k1], rhs.mat[k0:k1], out=part)
            # The cast float32 -> int32 is exact: |part| <= 2**24 is an integer. A plain
            # copy casts much faster than a ufunc with a casting output (measured).
            if k0 == 0:
                np.copyto(out, part, casting="unsafe")
                out += offsets
            else:
                out += part.astype(np.int32)
    if b and k and wrap32(b):
        out += (_row_sums(lhs) * np.int32(wrap32(b)))[:, None]
    if span is not None:
        span.add(out)
    TIMES.gemm += time.perf_counter() - start
    TIMES.calls["gemm"] += 1


_BOUNDS = np.array([2**31 - 1] * 8 + [-2**31] * 8, np.int32)


def prepared_gemm8(rhs: Rhs, m: int, b: int) -> Callable[[npt.NDArray[np.int8], I32], I32] | None:
    """:func:`gemm_into` of int8 left-hand sides of ``m`` rows against ``rhs`` with the row
    coefficient ``b``, its checks and set-up done once: a function of (lhs, offsets), lhs
    C-contiguous (m, K), offsets int32 (N,), giving a new int32 (m, N) result. None where the
    VNNI kernel does not run here (the caller keeps :func:`gemm_into`). A node whose GEMM has
    the same shapes at every run keeps one (the 1x1 d32 Supernodes)."""
    kernel = igemm.kernel8()
    k, n = rhs.k, rhs.n
    if kernel is None or not (m and n and k) or not igemm.available8():
        return None
    packed = rhs.packed8
    blocks = packed.blocks
    nb_full, tail = divmod(n, igemm.COLS)
    mc = max(igemm.ROWS, igemm.CHUNK_BYTES // k // igemm.ROWS * igemm.ROWS)
    b_ptr = blocks.ctypes.data
    tail_ptr = b_ptr + nb_full * blocks.strides[0]
    coef = wrap32(b - rhs.zero)
    rows_kernel = compiled.kernel("row_sums_i8")
    zeros = np.zeros(m, np.int32)
    scale = np.int32(coef)

    def run(lhs: npt.NDArray[np.int8], offsets: I32) -> I32:
        start = time.perf_counter()
        if coef:
            rows = np.empty(m, np.int32)
            if rows_kernel is not None:
                rows_kernel(lhs, rows)
            else:
                np.sum(lhs, axis=1, dtype=np.int32, out=rows)
            rows *= scale
        else:
            rows = zeros
        out = np.empty((m, n), np.int32)
        bounds = _BOUNDS.copy()              # the kernel's min/max, not read here
        a_ptr, r_ptr, bd_ptr = lhs.ctypes.data, rows.ctypes.data, bounds.ctypes.data
        if nb_full:
            kernel(a_ptr, k, m, k, b_ptr, nb_full, offsets.ctypes.data, out.ctypes.data, n, mc,
                   bd_ptr, r_ptr)
        if tail:
            # the last, partial block of 16 columns through a scratch (igemm.gemm_into)
            scratch = np.empty((m, igemm.COLS), np.int32)
            off = np.zeros(igemm.COLS, np.int32)
            off[:tail] = offsets[nb_full * igemm.COLS:]
            kernel(a_ptr, k, m, k, tail_ptr, 1, off.ctypes.data, scratch.ctypes.data,
                   igemm.COLS, mc, bd_ptr, r_ptr)
            out[:, nb_full * igemm.COLS:] = scratch[:, :tail]
        TIMES.gemm += time.perf_counter() - start
        TIMES.calls["gemm"] += 1
        return out

    return run


def greedy_edges(cums: list[tuple[np.ndarray, float]]) -> tuple[int, ...]:
    """Edges 0 = e0 < e1 < ... = K of the fewest greedy chunks of rows in which, for every
    column and every (running sums (K, N), limit) pair of ``cums``, the chunk's sum stays
    within the limit. A row that alone exceeds it is a chunk of its own (callers make sure
    one row never does). With no columns every row fits: one chunk (none when K = 0)."""
    k, n = cums[0][0].shape
    if n == 0:
        return (0, k) if k else (0,)
    edges = [0]
    while edges[-1] < k:
        start = edges[-1]
        over = np.zeros(k - start, bool)
        for cum, limit in cums:
            base = cum[start - 1] if start else 0.0
            over |= np.max(cum[start:] - base, axis=1) > limit
        bad = np.flatnonzero(over)
        edges.append(start + max(1, int(bad[0])) if bad.size else k)
    return tuple(edges)


def _row_sums(lhs: Lhs) -> I32:
    """sum_k lhs[p, k] in int32 (wrapping), exact: int64 sums of an int16 ``lhs``; float32
    GEMV on chunks of 2**17 columns (|partial sums| <= 2**17 * 128 = 2**24)."""
    p, k = lhs.shape
    if lhs.dtype == np.int8:
        kernel = compiled.kernel("row_sums_i8") if lhs.flags.c_contiguous else None
        if kernel is None:
            return lhs.sum(axis=1, dtype=np.int32)     # |sum| <= 128 K: exact below 2**24
        out = np.empty(p, np.int32)
        kernel(lhs, out)
        return out
    if lhs.dtype == np.int16:
        return lhs.sum(axis=1, dtype=np.int64).astype(np.int32)
    acc = np.zeros(p, np.int32)
    ones = np.ones(min(k, _ROWSUM_CHUNK), np.float32)
    for k0 in range(0, k, _ROWSUM_CHUNK):
        part = lhs[:, k0:k0 + _ROWSUM_CHUNK]
        acc += (part @ ones[:part.shape[1]]).astype(np.int32)
    return acc


_ROWSUM_CHUNK = 2**17


# im2col ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Window:
    """One spatial dimension of a convolution: sizes, stride and padding before (§1.7)."""

    n: int          # input size
    f: int          # filter size
    s: int          # stride
    out: int        # output size
    before: int     # padding before (0 if none)

    @property
    def after(self) -> int:
        """Padding after that im2col needs so every read of the last window is in bounds."""
        return max(0, (self.out - 1) * self.s + self.f - self.before - self.n)


def im2col(x: npt.NDArray[np.uint8], rows: Window, cols: Window, fill: int,
           dtype: npt.DTypeLike = None) -> Lhs:
    """Centred patches (B*OH*OW, FH*FW*C) of NHWC ``x``, in (fy, fx, c) order, of
    ``dtype`` (default :func:`patch_dtype`).

    Taps outside the image read ``fill`` (a code, may lie outside 0..255 only if the caller
    accepts values beyond [-128, 127] and asks for int16 or float32). A 1x1 filter at
    stride 1 without padding needs no copy beyond the centring.
    """
    start = time.perf_counter()
    b, _, _, c = x.shape
    if rows.f == cols.f == 1 and rows.s == cols.s == 1 and not (rows.before or cols.before):
        out = center(x[:, :rows.out, :cols.out, :], dtype).reshape(-1, c)
    else:
        out = _patches(padded(x, rows, cols, fill, dtype=dtype), rows, cols)
    TIMES.im2col += time.perf_counter() - start
    TIMES.calls["im2col"] += 1
    return out


def padded(x: npt.NDArray[np.uint8], rows: Window, cols: Window, fill: int,
           min_rows: int = 0, dtype: npt.DTypeLike = None) -> Lhs:
    """The centred image with ``fill`` around it as the windows need, and at least
    ``min_rows`` rows (extra rows at the bottom hold the fill too), of ``dtype`` (default
    :func:`patch_dtype`)."""
    dtype = np.dtype(patch_dtype() if dtype is None else dtype)
    b, h, w, c = x.shape
    hp = max(min_rows, rows.before + h + rows.after)
    wp = cols.before + w + cols.after
    if (hp, wp) == (h, w):
        return center(x, dtype)
    xp = np.empty((b, hp, wp, c), dtype)
    value = dtype.type(fill - CENTER)
    # Only the borders that exist (each slice assignment costs ~2 us even when empty).
    if rows.before:
        xp[:, :rows.before] = value
    if hp > rows.before + h:
        xp[:, rows.before + h:] = value
    if cols.before:
        xp[:, rows.before:rows.before + h, :cols.before] = value
    if cols.after:
        xp[:, rows.before:rows.before + h, cols.before + w:] = value
    centre_into(x, xp[:, rows.before:rows.before + h, cols.before:cols.before + w])
    return xp


def _patches(xp: Lhs, rows: Window, cols: Window) -> Lhs:
    b, _, _, c = xp.shape
    out = np.empty((b, rows.out, cols.out, rows.f, cols.f, c), xp.dtype)
    y_end = (rows.out - 1) * rows.s + 1
    x_end = (cols.out - 1) * cols.s + 1
    for fy in range(rows.f):
        for fx in range(cols.f):
            out[:, :, :, fy, fx, :] = xp[:, fy:fy + y_end:rows.s, fx:fx + x_end:cols.s, :]
    return out.reshape(b * rows.out * cols.out, rows.f * cols.f * c)


# convolution by blocks of output rows ------------------------------------------------------

#: Bytes of patches per block: the block stays in cache between im2col and the GEMM, which
#: measured ~20 % faster than one im2col of the whole image on the large layers.
BLOCK_BYTES = 1 << 21


def is_plain(rows: Window, cols: Window) -> bool:
    """A 1x1 filter at stride 1 without padding: the patches are the pixels themselves."""
    return rows.f == cols.f == 1 and rows.s == cols.s == 1 and not (rows.before or cols.before)


def conv_gemm(x: npt.NDArray[np.uint8], rows: Window, cols: Window, fill: int, rhs: Rhs,
              a: int, b: int, centred: Lhs | None = None, span: Span | None = None) -> I32:
    """``offset_gemm(im2col(x, rows, cols, fill), rhs, a, b)``, computed by blocks of output
    rows: the same int32 (B*OH*OW, N), without the whole patch matrix in memory.

    ``centred`` may give ``center(x)`` as (B*H*W, C) for a plain (:func:`is_plain`)
    convolution, already computed for another one reading the same tensor.
    """
    bsz, _, _, c = x.shape
    k, ow, n = rows.f * cols.f * c, cols.out, rhs.n
    if k != rhs.k:
        raise ValueError(f"inner dimensions differ: {k} vs {rhs.k}")
    plain = is_plain(rows, cols)
    if plain and centred is not None:
        out = np.empty((bsz * rows.out * ow, n), np.int32)
        gemm_into(out, centred, rhs, rhs.offsets(a, b), b, span)
        return out
    dtype = np.dtype(patch_dtype())
    start = time.perf_counter()
    src = x if plain else padded(x, rows, cols, fill, dtype=dtype)
    TIMES.im2col += time.perf_counter() - start
    TIMES.calls["im2col"] += 1
    out = np.empty((bsz, rows.out, ow, n), np.int32)
    offsets = rhs.offsets(a, b)
    r_blk = max(1, min(rows.out, BLOCK_BYTES // max(1, ow * k * dtype.itemsize)))
    buf = np.empty((r_blk, ow, rows.f, cols.f, c), dtype)
    for bi in range(bsz):
        for y0 in range(0, rows.out, r_blk):
            ny = min(r_blk, rows.out - y0)
            start = time.perf_counter()
            if plain:
                centre_into(x[bi, y0:y0 + ny, :ow], buf[:ny, :, 0, 0, :])
            else:
                _patch_rows(buf[:ny], src[bi], y0, rows, cols)
            TIMES.im2col += time.perf_counter() - start
            gemm_into(out[bi, y0:y0 + ny].reshape(ny * ow, n), buf[:ny].reshape(ny * ow, k),
                      rhs, offsets, b, span)
    return out.reshape(bsz * rows.out * ow, n)


def _patch_rows(dst: Lhs, xp: Lhs, y0: int, rows: Window, cols: Window) -> None:
    """Patches of output rows y0 .. y0 + len(dst) - 1 of one image into ``dst``
    (rows, OW, FH, FW, C), from the centred padded image ``xp`` (H', W', C).

    The FW taps of a window row are FW * C consecutive values of ``xp`` (NHWC), so all the
    patches are one overlapping strided view of ``xp``: a single copy.
    """
    ny, ow, fh, fw, c = dst.shape
    sy, sx, sc = xp.strides
    assert xp.flags.c_contiguous            # the FW * C run of a window row is contiguous
    src = np.ndarray((ny, ow, fh, fw * c), xp.dtype, buffer=xp, offset=y0 * rows.s * sy,
                     strides=(rows.s * sy, cols.s * sx, sy, sc))
    dst.reshape(ny, ow, fh, fw * c)[...] = src
