"""Campaigns of issue 26's shape and resize ops (helper ops26b).

QuantizedPad_8, MirrorPad_8, Reshape, Transpose_8, QuantizedSplit_8, QuantizedSlice_8,
QuantizedStridedSlice_8, QuantizedPack_8, SpaceToDepth_8, DepthToSpace_8,
ResizeNearestNeighbor_8: every one against nnlib's own op (plain C, or the memcpy helpers the
stubs run as C). Each case may declare an output too small for its result (capacity errors).
"""
from __future__ import annotations

import numpy as np
from campaigns import CAMPAIGNS, Campaign, Case, F, rand_range, u8
from common import T

I32 = np.int32


def _i32(values, shape=None) -> T:
    a = np.asarray(values, I32)
    if shape is not None:
        a = a.reshape(shape)
    return T.of(a, "i32")


def _shape(rng, maxb=3, maxh=7, maxw=7, maxd=40, zero=False) -> tuple[int, ...]:
    s = [int(rng.integers(1, maxb + 1)), int(rng.integers(1, maxh + 1)),
         int(rng.integers(1, maxw + 1)), int(rng.integers(1, maxd + 1))]
    if zero:
        s[int(rng.integers(0, 4))] = 0
    return tuple(s)


def _cap(n_elems: int, elsize: int = 1) -> int:
    """nnlib's max_size for a declared (1,1,1,n) output: n elements rounded up to 128 bytes
    (newnode.c compute_max_size_with_pad, as Hexscope's OutputDef.capacity)."""
    return (max(1, n_elems) * elsize + 127) & ~127


def _outs(rng, i, n_bytes, extra=()) -> tuple[list, list]:
    """A data output declared with room for ``n_bytes`` (one case in 9 declared 129 bytes
    short, so that its rounded capacity is too small), then the range outputs."""
    decl = max(1, n_bytes - 129) if i % 9 == 4 else n_bytes + int(rng.integers(0, 64))
    outs = [("u8", _cap(decl)), *extra, ("f32", 128), ("f32", 128)]
    dm = [(1, 1, 1, decl)] + [(1, 1, 1, c) for _, c in extra] + [(1, 1, 1, 1), (1, 1, 1, 1)]
    return outs, dm


def _range(rng, i):
    lo, hi, why = rand_range(rng, i)
    return lo, hi, why


# ---------------------------------------------------------------- QuantizedPad_8
def _pad_case(rng, i):
    s = _shape(rng, zero=(i % 23 == 5))
    x = T.of(u8(rng, s), "u8")
    rows = [1, 2, 3, 4, 4, 4, 5][int(rng.integers(0, 7))]
    pads = rng.integers(0, 5, size=(rows, 2))
    k = i % 13
    if k == 1:
        pads[int(rng.integers(0, rows)), int(rng.integers(0, 2))] = -1
    if k == 2:
        pads[:] = 0
    if k == 3 and rows >= 4:
        pads[0] = [0, 0]       # batch padding only in some cases
    pshape = (rows, 2) if i % 17 != 3 else (rows, 3)
    p = np.zeros(pshape, I32)
    p[:, :2] = pads
    lo, hi, why = _range(rng, i)
    ins = [x, F(lo), F(hi), _i32(p)]
    vk = i % 7
    val = 0.0
    if vk >= 2:
        choice = int(rng.integers(0, 8))
        val = [lo, hi, (lo + hi) / 2, float("inf"), -float("inf"), hi + (hi - lo) * 0.004,
               lo - abs(hi - lo), float(rng.uniform(-10, 10))][choice]
        ins.append(F(val))
        if vk >= 5:
            ins.append(T.i(int(rng.integers(0, 2))))
    n = int(np.prod([s[j] + (p[j - (4 - rows), 0] + p[j - (4 - rows), 1] if j >= 4 - rows else 0)
                     for j in range(4)])) if rows <= 4 else int(np.prod(s)) * 8
    outs, dm = _outs(rng, i, max(1, n))
    return Case(ins, outs, def_max=dm, desc=f"x{s} pads{p.tolist()} range[{lo:.6g},{hi:.6g}]"
                f"({why}) value {val!r} n_in {len(ins)}")


CAMPAIGNS["QuantizedPad_8"] = Campaign(_pad_case)


# ---------------------------------------------------------------- MirrorPad_8
def _mirror_case(rng, i):
    s = _shape(rng, maxb=4, maxh=8, maxw=8, maxd=12)
    x = T.of(u8(rng, s), "u8")
    pads = np.array([[int(rng.integers(0, n + (1 if i % 5 == 0 else 0)))
                      for _ in range(2)] for n in s], I32)
    if i % 11 == 3:
        pads = pads[1:]
    if i % 13 == 6:
        pads[int(rng.integers(0, len(pads))), 0] = -1
    pad = ["MIRROR_REFLECT", "MIRROR_SYMMETRIC"][i % 2] if i % 29 != 7 else "SAME"
    n = int(np.prod([s[j] + int(pads[j].sum()) for j in range(4)])) if len(pads) == 4 else 8
    outs, dm = _outs(rng, i, max(1, n))
    lo, hi, _ = _range(rng, i)
    return Case([x, _i32(pads), F(lo), F(hi)], outs, pad, def_max=dm,
                desc=f"x{s} pads{pads.tolist()} {pad}")


CAMPAIGNS["MirrorPad_8"] = Campaign(_mirror_case)


# ---------------------------------------------------------------- Reshape
def _reshape_case(rng, i):
    s = _shape(rng, zero=(i % 19 == 2))
    n = int(np.prod(s))
    dt = ["u8", "i32", "f32"][i % 3]
    data = (rng.integers(-1000, 1000, size=s) if dt != "u8" else u8(rng, s))
    x = T.of(np.asarray(data).astype({"u8": np.uint8, "i32": np.int32, "f32": np.float32}[dt]), dt)
    rank = int(rng.integers(1, 5))
    dims = [1] * rank
    rest = n
    for j in range(rank - 1):        # factor n into rank dims
        divs = [d for d in range(1, rest + 1) if rest % d == 0] if rest else [0, 1]
        dims[j] = int(rng.choice(divs))
        rest = rest // dims[j] if dims[j] else 0
    dims[rank - 1] = rest
    k = i % 10
    if k == 1:
        dims[int(rng.integers(0, rank))] = -1
    elif k == 2:
        dims[int(rng.integers(0, rank))] = -int(rng.integers(1, 5))
        dims[int(rng.integers(0, rank))] = -1
    elif k == 3:
        dims[int(rng.integers(0, rank))] += 1
    elif k == 4:
        dims[int(rng.integers(0, rank))] = 0
    shp = (1, 1, 1, rank) if i % 31 != 5 else (1, 1, 1, 5)
    sh = np.ones(shp, I32)
    sh.reshape(-1)[:rank] = dims
    el = 1 if dt == "u8" else 4
    decl = max(1, n - (129 if i % 9 == 4 else -int(rng.integers(0, 32))))
    return Case([x, T.of(sh, "i32")], [(dt, _cap(decl, el))], def_max=[(1, 1, 1, decl)],
                desc=f"x{s} {dt} shape {sh.reshape(-1).tolist()}")


CAMPAIGNS["Reshape"] = Campaign(_reshape_case)


# ---------------------------------------------------------------- Transpose_8
def _transpose_case(rng, i):
    s = _shape(rng, maxb=3, maxh=6, maxw=6, maxd=9)
    x = T.of(u8(rng, s), "u8")
    n = int(rng.integers(0, 5))
    perm = [int(v) for v in rng.permutation(n)]
    k = i % 12
    if k == 1 and n:
        perm[int(rng.integers(0, n))] = n          # out of range
    elif k == 2 and n > 1:
        perm[0] = perm[1]                          # repeated
    elif k == 3:
        perm = [int(v) for v in rng.permutation(5)]
    elif k == 4 and n:
        perm[0] = -1
    pt = _i32(perm) if perm else T((1, 1, 1, 0), "i32", np.zeros((1, 1, 1, 0), I32))
    if i % 37 == 9:
        pt = _i32(perm + perm, (2, len(perm))) if perm else pt
    outs, dm = _outs(rng, i, int(np.prod(s)))
    lo, hi, _ = _range(rng, i)
    return Case([x, pt, F(lo), F(hi)], outs, def_max=dm, desc=f"x{s} perm {perm}")


CAMPAIGNS["Transpose_8"] = Campaign(_transpose_case)


# ---------------------------------------------------------------- QuantizedSplit_8
def _split_case(rng, i):
    n = int(rng.integers(1, 5))
    s = list(_shape(rng, maxd=24))
    axis = int(rng.integers(-5, 5)) if i % 7 == 0 else int(rng.integers(-4, 4))
    a = axis % 4
    if i % 5 != 2 and -4 <= axis < 4:
        s[a] = n * int(rng.integers(1, 4))      # even split, else usually uneven
    s = tuple(s)
    x = T.of(u8(rng, s), "u8")
    part = int(np.prod(s)) // n
    decl = part + int(rng.integers(0, 8)) if i % 9 != 4 else max(1, part - 129)
    outs = [("u8", _cap(decl))] * n + [("f32", 128), ("f32", 128)]
    dm = [(1, 1, 1, decl)] * n + [(1, 1, 1, 1), (1, 1, 1, 1)]
    lo, hi, _ = _range(rng, i)
    return Case([T.i(axis), x, F(lo), F(hi)], outs, def_max=dm, desc=f"x{s} axis {axis} n {n}")


CAMPAIGNS["QuantizedSplit_8"] = Campaign(_split_case)


# ---------------------------------------------------------------- QuantizedSlice_8
def _slice_case(rng, i):
    s = _shape(rng)
    x = T.of(u8(rng, s), "u8")
    n = int(rng.integers(1, 5))
    dims = s[4 - n:]
    start = [int(rng.integers(0, d)) for d in dims]
    size = [int(rng.integers(1, d - b + 1)) for b, d in zip(start, dims)]
    k = i % 11
    j = int(rng.integers(0, n))
    if k == 1:
        size[j] = -1
    elif k == 2:
        size[j] = 0
    elif k == 3:
        size[j] = dims[j] - start[j] + 1
    elif k == 4:
        start[j] = -int(rng.integers(1, 3))
    elif k == 5:
        size[j] = -2
    elif k == 6:
        start[j] = dims[j]; size[j] = -1
    st, sz = _i32(start), _i32(size)
    if i % 29 == 8:
        sz = _i32(size + [1])
    need = int(np.prod([s[q] for q in range(4 - n)] + [max(1, v if v > 0 else 1) for v in size]))
    outs, dm = _outs(rng, i, need)
    lo, hi, _ = _range(rng, i)
    return Case([x, st, sz, F(lo), F(hi)], outs, def_max=dm,
                desc=f"x{s} start {start} size {size}")


def _slice_filter(case, c, h, diffs):
    """A negative start: nnlib reads before the input (garbage), Hexscope fails."""
    return diffs


def _slice_cls(case, c, h, diffs):
    if c.ok and not h.ok and "negative" in h.error:
        return "negative start: C reads before the input buffer, Hexscope fails the node"
    return diffs[0].split(":")[0]


CAMPAIGNS["QuantizedSlice_8"] = Campaign(_slice_case, classify=_slice_cls)


# ---------------------------------------------------------------- QuantizedStridedSlice_8
def _sslice_case(rng, i):
    s = _shape(rng, maxb=3, maxh=8, maxw=8, maxd=12)
    x = T.of(u8(rng, s), "u8")
    order = int(rng.integers(1, 5)) if i % 17 else int(rng.integers(0, 6))
    starts, stops, steps = [], [], []
    for j in range(order):
        d = s[4 - order + j] if 4 - order + j >= 0 else 3
        step = int(rng.choice([1, 1, 2, 3, -1, -2])) if i % 19 else 0
        a = int(rng.integers(-d - 1, d + 1))
        b = int(rng.integers(-d - 1, d + 2))
        if rng.random() < 0.7 and step:     # a non-empty range in the step's direction
            a = int(rng.integers(0, d))
            b = int(rng.integers(a + 1, d + 1)) if step > 0 else int(rng.integers(-1, a))
            if rng.random() < 0.3:          # the same, written with negative indices
                a -= d
                b = b - d if b >= 0 else b
        starts.append(a); stops.append(b); steps.append(step)
    masks = [int(rng.integers(0, 16)) if rng.random() < 0.4 else 0 for _ in range(3)]
    lo, hi, _ = _range(rng, i)
    outs, dm = _outs(rng, i, int(np.prod(s)))
    z = np.zeros((1, 1, 1, 0), I32)
    mk = (lambda v: _i32(v)) if order else (lambda v: T((1, 1, 1, 0), "i32", z))
    return Case([x, mk(starts), mk(stops), mk(steps), T.i(masks[0]), T.i(masks[1]), T.i(masks[2]),
                 F(lo), F(hi)], outs, def_max=dm,
                desc=f"x{s} start {starts} stop {stops} step {steps} masks {masks}")


CAMPAIGNS["QuantizedStridedSlice_8"] = Campaign(_sslice_case)


# ---------------------------------------------------------------- QuantizedPack_8
def _pack_case(rng, i):
    n = int(rng.integers(1, 5))
    s = _shape(rng, maxb=2, maxh=5, maxw=5, maxd=12)
    shapes = [s] * n
    if i % 10 == 3 and n > 1:
        t = list(s); t[int(rng.integers(0, 4))] += 1; shapes[-1] = tuple(t)
    xs = [T.of(u8(rng, sh), "u8") for sh in shapes]
    dim = int(rng.integers(-5, 5))
    if i % 3 == 0:      # the copy path: ranges that map onto the output's unchanged
        lo = -float(rng.uniform(0, 10)); hi = float(rng.uniform(0.1, 10))
        mins, maxes = [lo] * n, [hi] * n
    else:
        mins = [rand_range(rng, i + k)[0] for k in range(n)]
        maxes = [rand_range(rng, i + 2 * k + 1)[1] for k in range(n)]
    ins = [T.i(dim), *xs, *[F(v) for v in mins], *[F(v) for v in maxes]]
    outs, dm = _outs(rng, i, sum(int(np.prod(sh)) for sh in shapes))
    return Case(ins, outs, def_max=dm, desc=f"{n} x {shapes} dim {dim} mins {mins} maxes {maxes}")


CAMPAIGNS["QuantizedPack_8"] = Campaign(_pack_case)


# ---------------------------------------------------------------- SpaceToDepth_8 / DepthToSpace_8
def _block(rng, i):
    k = i % 9
    if k == 1:
        return _i32([0]), "bad 0"
    if k == 2:
        return _i32([2, 3, 1]), "3 values"
    if k in (3, 4):
        bh, bw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        return _i32([bh, bw]), f"{bh}x{bw}"
    b = int(rng.integers(1, 4))
    return _i32([b]), f"{b}"


def _s2d_case(rng, i):
    bt, why = _block(rng, i)
    words = bt.data.reshape(-1).tolist()
    bh, bw = max(1, words[0]), max(1, words[-1])
    s = [int(rng.integers(1, 3)), bh * int(rng.integers(1, 5)), bw * int(rng.integers(1, 5)),
         int(rng.integers(1, 20))]
    if i % 7 == 3:
        s[1 + int(rng.integers(0, 2))] += 1
    s = tuple(s)
    lo, hi, _ = _range(rng, i)
    outs, dm = _outs(rng, i, int(np.prod(s)))
    return Case([T.of(u8(rng, s), "u8"), bt, F(lo), F(hi)], outs, def_max=dm,
                desc=f"x{s} block {why}")


def _d2s_case(rng, i):
    bt, why = _block(rng, i)
    words = bt.data.reshape(-1).tolist()
    bh, bw = max(1, words[0]), max(1, words[-1])
    s = [int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 5)),
         bh * bw * int(rng.integers(1, 6))]
    if i % 7 == 3:
        s[3] += 1
    s = tuple(s)
    lo, hi, _ = _range(rng, i)
    ins = [T.of(u8(rng, s), "u8"), bt, F(lo), F(hi)]
    crop = None
    if i % 3:
        crop = [int(rng.integers(0, 2 * bh + 1)), int(rng.integers(0, 2 * bh + 1)),
                int(rng.integers(0, 2 * bw + 1)), int(rng.integers(0, 2 * bw + 1))]
        if i % 13 == 5:
            crop[int(rng.integers(0, 4))] = -1
        ins.append(_i32(crop if i % 31 != 7 else crop[:3]))
    outs, dm = _outs(rng, i, int(np.prod(s)))
    return Case(ins, outs, def_max=dm, desc=f"x{s} block {why} crop {crop}")


CAMPAIGNS["SpaceToDepth_8"] = Campaign(_s2d_case)
CAMPAIGNS["DepthToSpace_8"] = Campaign(_d2s_case)


# ---------------------------------------------------------------- ResizeNearestNeighbor_8
def _near_case(rng, i):
    s = _shape(rng, maxb=2, maxh=12, maxw=12, maxd=9)
    k = i % 6
    if k == 0:
        nh, nw = 2 * s[1], 2 * s[2]
    elif k == 1:
        nh, nw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    else:
        nh, nw = int(rng.integers(1, 30)), int(rng.integers(1, 30))
    if i % 23 == 4:
        nh = 0
    lo, hi, _ = _range(rng, i)
    ins = [T.of(u8(rng, s), "u8"), _i32([nh, nw]), F(lo), F(hi)]
    align = None
    if i % 4:
        align = int(rng.choice([0, 1, 1, 7]))
        ins.append(T.i(align))
    outs, dm = _outs(rng, i, max(1, s[0] * nh * nw * s[3]))
    return Case(ins, outs, def_max=dm, desc=f"x{s} -> {nh}x{nw} align {align}")


CAMPAIGNS["ResizeNearestNeighbor_8"] = Campaign(_near_case)

OPS = ["QuantizedPad_8", "MirrorPad_8", "Reshape", "Transpose_8", "QuantizedSplit_8",
       "QuantizedSlice_8", "QuantizedStridedSlice_8", "QuantizedPack_8", "SpaceToDepth_8",
       "DepthToSpace_8", "ResizeNearestNeighbor_8"]


# ---------------------------------------------------------------- QuantizedResizeBilinear_8
def _bilin_case(rng, i):
    s = _shape(rng, maxb=2, maxh=9, maxw=9, maxd=7)
    k = i % 8
    if k == 0:
        nh, nw = 2 * s[1] + int(rng.integers(0, 2)), 2 * s[2]
    elif k == 1:
        nh, nw = s[1], s[2]
    elif k == 2:
        nh, nw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    elif k == 3:
        nh, nw = 3 * s[1], 3 * s[2]
    else:
        nh, nw = int(rng.integers(1, 20)), int(rng.integers(1, 20))
    lo, hi, _ = _range(rng, i)
    ins = [T.of(u8(rng, s), "u8"), _i32([nh, nw]), F(lo), F(hi)]
    align = None
    if i % 3:
        align = int(rng.choice([0, 1, 1, 5]))
        ins.append(T.i(align))
    outs, dm = _outs(rng, i, max(1, s[0] * nh * nw * s[3]))
    return Case(ins, outs, def_max=dm, desc=f"x{s} -> {nh}x{nw} align {align}")


def _bilin_cls(case, c, h, diffs):
    if c.ok and not h.ok and "divide by zero" in h.error:
        return "align_corners to a size of 1: C divides by zero and reads before its input; Hexscope fails"
    return diffs[0].split(":")[0]


CAMPAIGNS["QuantizedResizeBilinear_8"] = Campaign(_bilin_case, classify=_bilin_cls)
OPS.append("QuantizedResizeBilinear_8")


# ---------------------------------------------------------------- QuantizedPad_8_d32
def _pad_d32_case(rng, i):
    from campaigns import d32_capacity, rand_d32_pad
    s = _shape(rng, maxb=2, maxh=6, maxw=7, maxd=70)
    x = T(s, "u8", u8(rng, s), d32=rand_d32_pad(rng, s, True), d32_fill=int(rng.integers(0, 256)))
    rows = [1, 2, 3, 4, 4, 4][int(rng.integers(0, 6))]
    pads = rng.integers(0, 6, size=(rows, 2))
    pads[-1] = 0 if i % 11 != 3 else pads[-1]            # depth padding is an error
    if i % 13 == 1:
        pads[int(rng.integers(0, rows)), 0] = -1
    p = np.asarray(pads, I32)
    if i % 29 == 5:
        p = np.zeros((5, 2), I32)
    lo, hi, why = _range(rng, i)
    ins = [x, F(lo), F(hi), _i32(p)]
    val = 0.0
    if i % 4:
        val = [lo, hi, (lo + hi) / 2, float("inf"), -float("inf"), hi + abs(hi - lo),
               float(rng.uniform(-10, 10))][int(rng.integers(0, 7))]
        ins.append(F(val))
        if i % 4 == 3:
            ins.append(T.i(int(rng.integers(0, 2))))
    full = [0] * (8 - 2 * min(rows, 4)) + [int(v) for v in p.reshape(-1)[:8]]
    out = tuple(s[j] + max(0, full[2 * j]) + max(0, full[2 * j + 1]) for j in range(4))
    dm = out if i % 9 != 4 else (out[0], max(1, out[1] - 9), out[2], out[3])
    return Case(ins, [("u8", d32_capacity(dm)), ("f32", 128), ("f32", 128)],
                def_max=[dm, (1, 1, 1, 1), (1, 1, 1, 1)],
                desc=f"x{s} d32{x.d32} pads{p.tolist()} range[{lo:.6g},{hi:.6g}]({why}) value {val!r}")


CAMPAIGNS["QuantizedPad_8_d32"] = Campaign(_pad_d32_case, compare_kw={"compare_padding": True,
                                                                      "tail": True})
OPS.append("QuantizedPad_8_d32")


# ---------------------------------------------------------------- MirrorPad_8_d32
def _mirror_d32_case(rng, i):
    from campaigns import d32_capacity, rand_d32_pad
    s = _shape(rng, maxb=2, maxh=7, maxw=8, maxd=70)
    x = T(s, "u8", u8(rng, s), d32=rand_d32_pad(rng, s, True), d32_fill=int(rng.integers(0, 256)))
    pads = np.array([[0, 0]] + [[int(rng.integers(0, n + (1 if i % 7 == 0 else 0)))
                                 for _ in range(2)] for n in s[1:3]] + [[0, 0]], I32)
    if i % 13 == 2:
        pads[0, int(rng.integers(0, 2))] = 1
    if i % 13 == 5:
        pads[3, int(rng.integers(0, 2))] = 1
    if i % 17 == 6:
        pads[1, 0] = -1
    if i % 19 == 8:
        pads = pads[:3]
    pad = ["MIRROR_REFLECT", "MIRROR_SYMMETRIC"][i % 2] if i % 23 != 4 else "VALID"
    hb, ha, wb, _, _, _ = x.d32
    h = s[1] + int(pads[1:2].sum()) if len(pads) > 1 else s[1]
    w = s[2] + int(pads[2:3].sum()) if len(pads) > 2 else s[2]
    mem = (s[0], hb + h + ha, wb + w + (-(w + wb) % 4), -(-s[3] // 32) * 32)
    dm = mem if i % 9 != 4 else (s[0], h, w, s[3])
    lo, hi, _ = _range(rng, i)
    return Case([x, _i32(pads), F(lo), F(hi)],
                [("u8", d32_capacity(dm, d32_output=False)), ("f32", 128), ("f32", 128)], pad,
                def_max=[dm, (1, 1, 1, 1), (1, 1, 1, 1)],
                desc=f"x{s} d32{x.d32} pads{pads.tolist()} {pad} declared {dm}")


CAMPAIGNS["MirrorPad_8_d32"] = Campaign(_mirror_d32_case, compare_kw={"compare_padding": True,
                                                                     "tail": True})
OPS.append("MirrorPad_8_d32")
