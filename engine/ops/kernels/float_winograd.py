"""Winograd's minimal filtering for the float convolution of the references (issue 12).

The float analyses spend most of their time in 3x3 and 5x5 convolutions at stride 1, and the
direct form (``float_conv``) already runs them at the core's float32 peak; Winograd's
F(m x m, r x r) (Lavin and Gray, 2015) computes an m x m block of outputs from an n x n tile
of the input, n = m + r - 1, with n * n products per channel pair instead of m * m * r * r:

    Y = A^T [ (G g G^T) * (B^T d B) ] A

for each tile d and filter g, the products summed over the input channels (n * n GEMMs, one
per point of the transform). The fast forms use the points 0, 1, -1, 2, -2 (and 1/2, -1/2 for
r = 7) and infinity:

- F(4 x 4, 3 x 3), n = 6: 36 products for 16 outputs of 9 taps (144): 4 times fewer;
- F(2 x 2, 5 x 5), n = 6 (the same B^T): 36 products for 4 outputs of 25 taps: 2.8 times;
- F(2, 7) along the long axis of 1 x 7 and 7 x 1 filters, n = 8: 8 products for 14.

The transforms are exact in rational arithmetic (``transforms`` builds them from the points
with fractions; the kernels spell out the same matrices), but in float32 their larger
coefficients add rounding: the results stay within a few 1e-6 of the output's magnitude (the
tests hold them to the float64 sum). Against an 8-bit output's LSB (1/255 of its range) that
is nothing. Against a 32-bit accumulator's LSB it is not: on InceptionV3's layers the isolated
error of a QuantizedConv2d_8x8to32 (exact integers, so only the reference's rounding shows)
was 0.07-0.22 LSB with the direct form and up to 0.74 with F(4x4, 3x3), near the default
tolerance of one LSB. So the **precise** form, asked for where that output is compared with
the run's own inputs, is F(2 x 2, 3 x 3) on the points 0, 1, -1 and infinity: coefficients 0
and +-1 (and halves in G), whose sums rounded less than the direct form's on every such
layer it takes here (0.04-0.12 LSB), with 2.25 times fewer products; other filters then
take the direct form.

A tile mixes the values of its pixels, so an infinite or NaN input would spread further than
in the direct form: where the input or a result is not finite the direct form is used instead.

The tiles are transformed, multiplied and transformed back by blocks of tile rows, so a
block's transformed tiles and products stay in cache. Figures: bench/README.md
(compare_bench.py, round 4).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import cache

import numpy as np

from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.gemm import Window

#: The finite interpolation points: a form of n points takes the first n - 1 and infinity.
POINTS = (0, 1, -1, 2, -2, Fraction(1, 2), Fraction(-1, 2))
N = 6

#: Output block size m per filter size r of the fast square forms (n = m + r - 1 = 6).
M_OF = {3: 4, 5: 2}

#: The 1 x 7 and 7 x 1 filters take F(2, 7) along their long axis (n = 8).
LINE = ((1, 7), (7, 1))

#: Bytes of products per block of tile rows (a block's transformed tiles take a little
#: less): they stay in the core's L2 between the GEMMs and the output transform.
_BLOCK_BYTES = 1 << 20


@cache
def transforms(m: int, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A^T (m x n), G (n x r) and B^T (n x n) of F(m, r) on ``POINTS`` and infinity, computed
    exactly (Cook-Toom): A^T evaluates at the points, G divides by each point's Lagrange
    denominator, and B^T's rows are the Lagrange numerators and the points' product."""
    n = m + r - 1
    pts = [Fraction(p) for p in POINTS[:n - 1]]
    if len(pts) != n - 1:
        raise ValueError(f"F({m},{r}) needs {n - 1} points, there are {len(POINTS)}")
    at = np.zeros((m, n))
    g = np.zeros((n, r))
    bt = np.zeros((n, n))
    for k, a in enumerate(pts):
        others = [b for b in pts if b != a]
        denominator = np.prod([a - b for b in others]) if others else Fraction(1)
        at[:, k] = [float(a ** i) for i in range(m)]
        g[k] = [float(a ** j / denominator) for j in range(r)]
        bt[k, :n - 1] = _coefficients(others)
    at[m - 1, n - 1] = g[n - 1, r - 1] = 1.0
    bt[n - 1] = _coefficients(pts)
    for a in (at, g, bt):
        a.setflags(write=False)      # kept (cache): shared by every call
    return at, g, bt


def _coefficients(roots: list[Fraction]) -> list[float]:
    """The coefficients of prod (x - root), lowest power first."""
    poly = [Fraction(1)]
    for root in roots:
        poly = [Fraction(0), *poly]
        for t in range(len(poly) - 1):
            poly[t] -= root * poly[t + 1]
    return [float(c) for c in poly]


def _square_form(fh: int, fw: int, precise: bool) -> tuple[int, int] | None:
    """(m, n) of the square form for an fh x fw filter, or None."""
    if fh != fw:
        return None
    if precise:
        return (2, 4) if fh == 3 else None
    return (M_OF[fh], N) if fh in M_OF else None


def applies(w_shape: tuple[int, ...], rows: Window, cols: Window,
            precise: bool = False) -> bool:
    """True where a form is used: 3x3 and 5x5 filters (3x3 only when ``precise``), 1x7 and
    7x1 (not precise) at stride 1, with enough tiles and channels to pay for the transforms
    (measured on the InceptionV3 shapes)."""
    fh, fw, cin, cout = w_shape
    if rows.s != 1 or cols.s != 1:
        return False
    square = _square_form(fh, fw, precise)
    if (fh, fw) in LINE and not precise:
        tiles = rows.out * -(-cols.out // 2) if fh == 1 else -(-rows.out // 2) * cols.out
    elif square is not None:
        m = square[0]
        tiles = -(-rows.out // m) * -(-cols.out // m)
    else:
        return False
    return tiles >= 64 and cin >= 16 and cout >= 16 and compiled.enabled()


def winograd_conv2d(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window,
                    precise: bool = False) -> np.ndarray | None:
    """The convolution of ``xs`` [B, H, W, Cin] by ``w`` [FH, FW, Cin, Cout] at stride 1 as
    in ``float_conv2d`` (where ``applies``), or None when the kernels are missing or a value
    is not finite (the caller then takes the direct form)."""
    if _kernels() is None:
        return None
    if w.shape[:2] in LINE and not precise:
        return _line(xs, w, rows, cols)
    form = _square_form(w.shape[0], w.shape[1], precise)
    if form is None:
        raise ValueError(f"no Winograd form for a {w.shape[0]}x{w.shape[1]} filter"
                         f"{' (precise)' if precise else ''}")
    return _square(xs, w, rows, cols, *form)


def _square(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window, m: int,
            n: int) -> np.ndarray | None:
    from hexscope.engine.ops.kernels import winograd_defs as k

    input_tiles, output_tiles = (k.input_tiles, k.output_tiles) if n == N else \
        (k.input_tiles4, k.output_tiles4)
    r, _, cin, cout = w.shape
    ty_n, tx_n = -(-rows.out // m), -(-cols.out // m)
    u = _filter_matrix(r, r, m) @ w.reshape(r * r, cin * cout)   # G g G^T: (n * n, Cin, Cout)
    xp = np.zeros((ty_n * m + r - 1, tx_n * m + r - 1, cin), np.float32)
    tmp_in = np.empty((n, n, cin), np.float32)
    tmp_out = np.empty((m, n, cout), np.float32)
    return _by_blocks(
        xs, rows, cols, xp, u.reshape(n * n, cin, cout), ty_n, tx_n,
        lambda v, r0, r1: input_tiles(xp, m, r0, r1, tx_n, v, tmp_in),
        lambda prod, r0, r1, y: output_tiles(prod, m, r0, r1, tx_n, y, tmp_out))


def _line(xs: np.ndarray, w: np.ndarray, rows: Window, cols: Window) -> np.ndarray | None:
    """F(2, 7) along H (7 x 1) or W (1 x 7): tiles of eight pixels of one column or row."""
    from hexscope.engine.ops.kernels.winograd_defs import line_input_tiles, line_output_tiles

    fh, fw, cin, cout = w.shape
    along_h = fh > 1
    u = (_filter_matrix(fh, fw, 2) @ w.reshape(7, cin * cout)).reshape(8, cin, cout)  # G g
    if along_h:
        outer, per_row = -(-rows.out // 2), cols.out
        xp = np.zeros((outer * 2 + 6, cols.out + fw - 1, cin), np.float32)
    else:
        outer, per_row = rows.out, -(-cols.out // 2)
        xp = np.zeros((rows.out + fh - 1, per_row * 2 + 6, cin), np.float32)
    return _by_blocks(
        xs, rows, cols, xp, u, outer, per_row,
        lambda v, r0, r1: line_input_tiles(xp, along_h, r0, r1, per_row, v),
        lambda prod, r0, r1, y: line_output_tiles(prod, along_h, r0, r1, per_row, y))


def _by_blocks(xs: np.ndarray, rows: Window, cols: Window, xp: np.ndarray, u: np.ndarray,
               outer: int, per_row: int,
               tiles_in: Callable[[np.ndarray, int, int], bool],
               tiles_out: Callable[[np.ndarray, int, int, np.ndarray], bool]
               ) -> np.ndarray | None:
    """Each image padded into ``xp``, then by blocks of tile rows (``per_row`` tiles each,
    ``outer`` in all): ``tiles_in`` transforms a block's tiles into v, one GEMM per point
    with ``u`` [points, Cin, Cout], ``tiles_out`` transforms the products back into the
    image's output. None where a kernel met a value that is not finite."""
    points, _, cout = u.shape
    b, h, wd, cin = xs.shape
    hh, ww = min(h, len(xp) - rows.before), min(wd, xp.shape[1] - cols.before)
    y = np.empty((b, rows.out, cols.out, cout), np.float32)
    step = max(1, _BLOCK_BYTES // (4 * points * per_row * cout))
    v = np.empty((points, min(step, outer) * per_row, cin), np.float32)
    prod = np.empty((points, min(step, outer) * per_row, cout), np.float32)
    for bi in range(b):
        xp[rows.before:rows.before + hh, cols.before:cols.before + ww] = xs[bi, :hh, :ww]
        for r0 in range(0, outer, step):
            r1 = min(outer, r0 + step)
            t = (r1 - r0) * per_row
            if not tiles_in(v, r0, r1):
                return None
            np.matmul(v[:, :t], u, out=prod[:, :t])
            if not tiles_out(prod, r0, r1, y[bi]):
                return None
    return y


@cache
def _filter_matrix(fh: int, fw: int, m: int) -> np.ndarray:
    """G (x) G, or G alone along one axis: the filter's transform as one float32 GEMM
    over the flattened taps (a filter is read once; a float64 transform took as long as a
    tenth of the convolution)."""
    if (fh, fw) in LINE:
        g = transforms(2, 7)[1]
    else:
        g = np.kron(transforms(m, fh)[1], transforms(m, fw)[1])
    out = g.astype(np.float32)
    out.setflags(write=False)
    return out


def _kernels():  # type: ignore[no-untyped-def]
    if not compiled.enabled():
        return None
    try:
        from hexscope.engine.ops.kernels import winograd_defs
    except Exception:  # noqa: BLE001 - no numba, or it cannot compile here: direct form
        return None
    return winograd_defs


__all__ = ["applies", "transforms", "winograd_conv2d"]
