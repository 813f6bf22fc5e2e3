"""The numba kernels behind :mod:`float_winograd`: the input and output transforms of
F(4x4, 3x3) and F(2x2, 5x5) on the points 0, 1, -1, 2, -2 and infinity, written out with
the integer matrices that ``float_winograd.transforms`` computes (the tests hold them equal):

    B^T = [[4,  0, -5,  0, 1, 0],      A^T (m = 4) = [[1, 1,  1, 1,  1, 0],
           [0, -4, -4,  1, 1, 0],                     [0, 1, -1, 2, -2, 0],
           [0,  4, -4, -1, 1, 0],                     [0, 1,  1, 4,  4, 0],
           [0, -2, -1,  2, 1, 0],                     [0, 1, -1, 8, -8, 1]]
           [0,  2, -1, -2, 1, 0],
           [0,  4,  0, -5, 0, 1]]      A^T (m = 2) = [[1, 1,  1, 1,  1, 0],
                                                      [0, 1, -1, 2, -2, 1]]

Each kernel runs over a block of tile rows, channels innermost (contiguous: LLVM vectorises
those loops), in two passes through a small scratch tile, and returns False when it met a
value that is not finite (the caller then uses the direct form)."""

from __future__ import annotations

import numpy as np
from numba import njit, types

_OPTS = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}
_F3 = types.Array(types.float32, 3, "C")


@njit(inline="always")
def _bt(d0, d1, d2, d3, d4, d5):  # pragma: no cover - compiled
    """B^T d for one column of six values."""
    a, b = d1 + d2, d1 - d2
    c = d1 - d3
    return (np.float32(4) * d0 - np.float32(5) * d2 + d4,
            d3 + d4 - np.float32(4) * a,
            d4 - d3 + np.float32(4) * b,
            d4 - d2 - np.float32(2) * c,
            d4 - d2 + np.float32(2) * c,
            np.float32(4) * d1 - np.float32(5) * d3 + d5)


@njit(types.boolean(_F3, types.int64, types.int64, types.int64, types.int64, _F3, _F3),
      **_OPTS)
def input_tiles(xp, m, ty0, ty1, tx_n, v, tmp):  # pragma: no cover - compiled
    """v[6 i + j, t, :] = (B^T d B)[i, j] for the tiles t of tile rows ty0 .. ty1 - 1 of the
    padded image ``xp`` [H, W, C] (tile (ty, tx) starts at pixel (m ty, m tx)); t counts
    from the block's first tile."""
    c_n = xp.shape[2]
    nonfinite = np.zeros(c_n, np.float32)     # x - x: 0, or NaN for inf and NaN
    for ty in range(ty0, ty1):
        for tx in range(tx_n):
            t = (ty - ty0) * tx_n + tx
            y0, x0 = ty * m, tx * m
            for i in range(6):                 # each row of the tile: d B
                row = xp[y0 + i]
                s0, s1, s2, s3 = row[x0], row[x0 + 1], row[x0 + 2], row[x0 + 3]
                s4, s5 = row[x0 + 4], row[x0 + 5]
                o = tmp[i]
                for c in range(c_n):
                    d0, d1, d2, d3, d4, d5 = s0[c], s1[c], s2[c], s3[c], s4[c], s5[c]
                    z0, z1, z2, z3, z4, z5 = _bt(d0, d1, d2, d3, d4, d5)
                    o[0, c], o[1, c], o[2, c], o[3, c], o[4, c], o[5, c] = z0, z1, z2, z3, z4, z5
                    nonfinite[c] += ((d0 - d0) + (d1 - d1)) + ((d2 - d2) + (d3 - d3)) \
                        + ((d4 - d4) + (d5 - d5))
            for j in range(6):                 # each column: B^T (d B)
                q0, q1, q2, q3, q4, q5 = tmp[0, j], tmp[1, j], tmp[2, j], tmp[3, j], \
                    tmp[4, j], tmp[5, j]
                o0, o1, o2 = v[j, t], v[6 + j, t], v[12 + j, t]
                o3, o4, o5 = v[18 + j, t], v[24 + j, t], v[30 + j, t]
                for c in range(c_n):
                    z0, z1, z2, z3, z4, z5 = _bt(q0[c], q1[c], q2[c], q3[c], q4[c], q5[c])
                    o0[c], o1[c], o2[c], o3[c], o4[c], o5[c] = z0, z1, z2, z3, z4, z5
    return bool(np.all(nonfinite == 0))


@njit(inline="always")
def _at(m, p0, p1, p2, p3, p4, p5):  # pragma: no cover - compiled
    """A^T p for one column of six products: four values (m = 4) or the first two (m = 2;
    its last row takes the infinity term where m = 4 takes it in the fourth)."""
    a, b = p1 + p2, p1 - p2
    c, d = p3 + p4, p3 - p4
    if m == 4:
        return (p0 + a + c, b + np.float32(2) * d, a + np.float32(4) * c,
                b + np.float32(8) * d + p5)
    return (p0 + a + c, b + np.float32(2) * d + p5, np.float32(0), np.float32(0))


@njit(types.boolean(_F3, types.int64, types.int64, types.int64, types.int64, _F3, _F3),
      **_OPTS)
def output_tiles(prod, m, ty0, ty1, tx_n, y, tmp):  # pragma: no cover - compiled
    """y[m ty + i, m tx + j, :] = (A^T p A)[i, j] for the tiles of tile rows ty0 .. ty1 - 1
    (``prod`` [36, tiles, C] as ``input_tiles`` numbers them), inside y [H, W, C]."""
    h, w, c_n = y.shape
    nonfinite = np.zeros(c_n, np.float32)
    for ty in range(ty0, ty1):
        for tx in range(tx_n):
            t = (ty - ty0) * tx_n + tx
            for j in range(6):                 # each column of products: A^T p
                q0, q1, q2 = prod[j, t], prod[6 + j, t], prod[12 + j, t]
                q3, q4, q5 = prod[18 + j, t], prod[24 + j, t], prod[30 + j, t]
                for c in range(c_n):
                    z0, z1, z2, z3 = _at(m, q0[c], q1[c], q2[c], q3[c], q4[c], q5[c])
                    tmp[0, j, c] = z0
                    tmp[1, j, c] = z1
                    if m == 4:
                        tmp[2, j, c] = z2
                        tmp[3, j, c] = z3
            for i in range(m):                 # each row: (A^T p) A, inside the image
                yy = ty * m + i
                if yy >= h:
                    break
                r0, r1, r2 = tmp[i, 0], tmp[i, 1], tmp[i, 2]
                r3, r4, r5 = tmp[i, 3], tmp[i, 4], tmp[i, 5]
                x0 = tx * m
                cols = min(m, w - x0)
                out = y[yy]
                for c in range(c_n):
                    z0, z1, z2, z3 = _at(m, r0[c], r1[c], r2[c], r3[c], r4[c], r5[c])
                    nonfinite[c] += (z0 - z0) + (z1 - z1) + (z2 - z2) + (z3 - z3)
                    out[x0, c] = z0
                    if cols > 1:
                        out[x0 + 1, c] = z1
                    if cols > 2:
                        out[x0 + 2, c] = z2
                    if cols > 3:
                        out[x0 + 3, c] = z3
    return bool(np.all(nonfinite == 0))


# F(2, 7) along one axis, for 1 x 7 and 7 x 1 filters: points 0, 1, -1, 2, -2, 1/2, -1/2 and
# infinity, n = 8:
#
#     B^T = [[-1,    0,  5.25,     0, -5.25,     0, 1, 0],     A^T = [[1, 1,  1, 1,  1,   1,
#            [ 0,    1,     1, -4.25, -4.25,     1, 1, 0],             1,    0],
#            [ 0,   -1,     1,  4.25, -4.25,    -1, 1, 0],            [0, 1, -1, 2, -2, 0.5,
#            [ 0,  0.5,  0.25,  -2.5, -1.25,     2, 1, 0],             -0.5, 1]]
#            [ 0, -0.5,  0.25,   2.5, -1.25,    -2, 1, 0],
#            [ 0,    2,     4,  -2.5,    -5,   0.5, 1, 0],
#            [ 0,   -2,     4,   2.5,    -5,  -0.5, 1, 0],
#            [ 0,   -1,     0,  5.25,     0, -5.25, 0, 1]]

@njit(types.boolean(_F3, types.boolean, types.int64, types.int64, types.int64, _F3), **_OPTS)
def line_input_tiles(xp, along_h, r0, r1, per_row, v):  # pragma: no cover - compiled
    """v[k, t, :] = (B^T d)[k] for the eight-pixel tiles d of ``xp`` [H, W, C] along W (a
    tile (r, p) reads xp[r, 2 p + j]) or along H (xp[2 r + j, p]), for r in r0 .. r1 - 1 and
    p < per_row; t counts from the block's first tile."""
    c_n = xp.shape[2]
    nonfinite = np.zeros(c_n, np.float32)
    f025, f05, f125, f2, f25 = np.float32(0.25), np.float32(0.5), np.float32(1.25), \
        np.float32(2), np.float32(2.5)
    f4, f425, f5, f525 = np.float32(4), np.float32(4.25), np.float32(5), np.float32(5.25)
    for r in range(r0, r1):
        for p in range(per_row):
            t = (r - r0) * per_row + p
            if along_h:
                s0, s1, s2, s3 = xp[2 * r, p], xp[2 * r + 1, p], xp[2 * r + 2, p], \
                    xp[2 * r + 3, p]
                s4, s5, s6, s7 = xp[2 * r + 4, p], xp[2 * r + 5, p], xp[2 * r + 6, p], \
                    xp[2 * r + 7, p]
            else:
                row = xp[r]
                s0, s1, s2, s3 = row[2 * p], row[2 * p + 1], row[2 * p + 2], row[2 * p + 3]
                s4, s5, s6, s7 = row[2 * p + 4], row[2 * p + 5], row[2 * p + 6], \
                    row[2 * p + 7]
            o0, o1, o2, o3 = v[0, t], v[1, t], v[2, t], v[3, t]
            o4, o5, o6, o7 = v[4, t], v[5, t], v[6, t], v[7, t]
            for c in range(c_n):
                d0, d1, d2, d3 = s0[c], s1[c], s2[c], s3[c]
                d4, d5, d6, d7 = s4[c], s5[c], s6[c], s7[c]
                o0[c] = d6 - d0 + f525 * (d2 - d4)
                o7[c] = d7 - d1 + f525 * (d3 - d5)
                a, b = d1 + d5 - f425 * d3, d2 + d6 - f425 * d4
                o1[c], o2[c] = b + a, b - a
                a, b = f05 * d1 - f25 * d3 + f2 * d5, f025 * d2 - f125 * d4 + d6
                o3[c], o4[c] = b + a, b - a
                a, b = f2 * d1 - f25 * d3 + f05 * d5, f4 * d2 - f5 * d4 + d6
                o5[c], o6[c] = b + a, b - a
                nonfinite[c] += (((d0 - d0) + (d1 - d1)) + ((d2 - d2) + (d3 - d3))) \
                    + (((d4 - d4) + (d5 - d5)) + ((d6 - d6) + (d7 - d7)))
    return bool(np.all(nonfinite == 0))


@njit(types.boolean(_F3, types.boolean, types.int64, types.int64, types.int64, _F3), **_OPTS)
def line_output_tiles(prod, along_h, r0, r1, per_row, y):  # pragma: no cover - compiled
    """The two outputs A^T p of each tile of ``line_input_tiles``, into y [H, W, C] (along W:
    y[r, 2 p + i], along H: y[2 r + i, p]), inside the image."""
    h, w, c_n = y.shape
    nonfinite = np.zeros(c_n, np.float32)
    f05, f2 = np.float32(0.5), np.float32(2)
    for r in range(r0, r1):
        for p in range(per_row):
            t = (r - r0) * per_row + p
            q0, q1, q2, q3 = prod[0, t], prod[1, t], prod[2, t], prod[3, t]
            q4, q5, q6, q7 = prod[4, t], prod[5, t], prod[6, t], prod[7, t]
            if along_h:
                out0 = y[2 * r, p]
                out1 = y[2 * r + 1, p] if 2 * r + 1 < h else out0
                second = 2 * r + 1 < h
            else:
                out0 = y[r, 2 * p]
                out1 = y[r, 2 * p + 1] if 2 * p + 1 < w else out0
                second = 2 * p + 1 < w
            for c in range(c_n):
                p0, p1, p2, p3 = q0[c], q1[c], q2[c], q3[c]
                p4, p5, p6, p7 = q4[c], q5[c], q6[c], q7[c]
                a, b, e = p1 + p2, p3 + p4, p5 + p6
                z0 = p0 + a + b + e
                z1 = (p1 - p2) + f2 * (p3 - p4) + f05 * (p5 - p6) + p7
                nonfinite[c] += (z0 - z0) + (z1 - z1)
                out0[c] = z0
                if second:
                    out1[c] = z1
    return bool(np.all(nonfinite == 0))


# F(2x2, 3x3) on the points 0, 1, -1 and infinity, n = 4: coefficients 0 and +-1 only, so its
# sums round no more than the direct form's (the precise form of ``float_winograd``):
#
#     B^T = [[-1,  0, 1, 0],     A^T = [[1, 1,  1, 0],
#            [ 0,  1, 1, 0],            [0, 1, -1, 1]]
#            [ 0, -1, 1, 0],
#            [ 0, -1, 0, 1]]

@njit(types.boolean(_F3, types.int64, types.int64, types.int64, types.int64, _F3, _F3),
      **_OPTS)
def input_tiles4(xp, m, ty0, ty1, tx_n, v, tmp):  # pragma: no cover - compiled
    """``input_tiles`` for n = 4 (m = 2): v[4 i + j, t, :] = (B^T d B)[i, j]."""
    c_n = xp.shape[2]
    nonfinite = np.zeros(c_n, np.float32)
    for ty in range(ty0, ty1):
        for tx in range(tx_n):
            t = (ty - ty0) * tx_n + tx
            y0, x0 = ty * m, tx * m
            for i in range(4):
                row = xp[y0 + i]
                s0, s1, s2, s3 = row[x0], row[x0 + 1], row[x0 + 2], row[x0 + 3]
                o = tmp[i]
                for c in range(c_n):
                    d0, d1, d2, d3 = s0[c], s1[c], s2[c], s3[c]
                    o[0, c], o[1, c], o[2, c], o[3, c] = d2 - d0, d1 + d2, d2 - d1, d3 - d1
                    nonfinite[c] += ((d0 - d0) + (d1 - d1)) + ((d2 - d2) + (d3 - d3))
            for j in range(4):
                q0, q1, q2, q3 = tmp[0, j], tmp[1, j], tmp[2, j], tmp[3, j]
                o0, o1, o2, o3 = v[j, t], v[4 + j, t], v[8 + j, t], v[12 + j, t]
                for c in range(c_n):
                    e0, e1, e2, e3 = q0[c], q1[c], q2[c], q3[c]
                    o0[c], o1[c], o2[c], o3[c] = e2 - e0, e1 + e2, e2 - e1, e3 - e1
    return bool(np.all(nonfinite == 0))


@njit(types.boolean(_F3, types.int64, types.int64, types.int64, types.int64, _F3, _F3),
      **_OPTS)
def output_tiles4(prod, m, ty0, ty1, tx_n, y, tmp):  # pragma: no cover - compiled
    """``output_tiles`` for n = 4 (m = 2)."""
    h, w, c_n = y.shape
    nonfinite = np.zeros(c_n, np.float32)
    for ty in range(ty0, ty1):
        for tx in range(tx_n):
            t = (ty - ty0) * tx_n + tx
            for j in range(4):
                q0, q1, q2, q3 = prod[j, t], prod[4 + j, t], prod[8 + j, t], prod[12 + j, t]
                for c in range(c_n):
                    p1, p2 = q1[c], q2[c]
                    tmp[0, j, c] = q0[c] + p1 + p2
                    tmp[1, j, c] = p1 - p2 + q3[c]
            x0 = tx * m
            for i in range(2):
                yy = ty * m + i
                if yy >= h:
                    break
                r0, r1, r2, r3 = tmp[i, 0], tmp[i, 1], tmp[i, 2], tmp[i, 3]
                out0 = y[yy, x0]
                second = x0 + 1 < w
                out1 = y[yy, x0 + 1] if second else out0
                for c in range(c_n):
                    p1, p2 = r1[c], r2[c]
                    z0, z1 = r0[c] + p1 + p2, p1 - p2 + r3[c]
                    nonfinite[c] += (z0 - z0) + (z1 - z1)
                    out0[c] = z0
                    if second:
                        out1[c] = z1
    return bool(np.all(nonfinite == 0))
