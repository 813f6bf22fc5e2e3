"""Issue 26 campaigns (ops26a): unary, activation, normalisation and reduction ops.

Where nnlib's op is HVX only, the campaign runs its plain-C ``_ref`` twin (c_op) against
Hexscope's op (see each op's doc, Fidelity). ``golden.py`` stores the cases as
tests/data/oracle/<op>.json for the replay test.
"""
from __future__ import annotations

import numpy as np
from campaigns import (
    CAMPAIGNS,
    Campaign,
    Case,
    F,
    d32_capacity,
    qrange,
    rand_d32_pad,
    rand_shape,
    u8,
)
from common import T


def _cap(shape, elsize=1, extra=128):
    return elsize * int(np.prod(shape)) + extra


def _declared(elements: int, elsize: int) -> tuple[tuple[int, int, int, int], int]:
    """A declared output of ``elements`` elements and its capacity in bytes, rounded up to
    128 as nnlib's compute_max_size_with_pad (and Hexscope's OutputDef.capacity) do."""
    n = max(1, elements)
    return (1, 1, 1, n), -(-(n * elsize) // 128) * 128


def _unary_range(rng, i):
    """Ranges for the unary ops: the shared edge set, plus realistic activation ranges."""
    k = i % 5
    if k == 0:
        a = float(np.float32(rng.uniform(0.5, 12)))
        return -a, float(np.float32(rng.uniform(0.5, 12))), "activation (crosses 0)"
    if k == 1:
        return float(np.float32(rng.uniform(-8, 8))), float(np.float32(rng.uniform(8, 16))), "misses or crosses 0"
    return qrange(rng, i)


def _small_shape(rng, i):
    if i % 7 == 0:
        return (1, 1, 1, int(rng.integers(1, 300)))       # not a multiple of 4 / 32 / 128
    return rand_shape(rng, maxb=2, maxh=3, maxw=3, maxd=37)


def _unary_case(rng, i):
    shape = (1, 1, 1, 256) if i % 4 == 0 else _small_shape(rng, i)
    x = u8(rng, shape)
    if i % 4 == 0:       # every code once: the whole table of this range
        x = np.arange(256, dtype=np.uint8).reshape(shape)
    lo, hi, why = _unary_range(rng, i)
    return Case([T.of(x, "u8"), F(lo), F(hi)], [("u8", _cap(shape)), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} [{lo:.6g},{hi:.6g}] ({why})")


def _tanh_case(rng, i):
    """The flat op's input in d32 for nnlib's plain-C ``QuantizedTanh_8_d32_ref`` (the same
    per-code function as the flat op's HVX table); logical values compared."""
    case = _unary_case(rng, i)
    x = case.inputs[0]
    pad = rand_d32_pad(rng, x.shape)
    case.inputs[0] = T(x.shape, "u8", x.data, d32=pad, d32_fill=int(rng.integers(0, 256)))
    b, h, w, d = x.shape
    hb, ha, wb, wa, db, da = pad          # the d32 output keeps the input's padding
    case.outs[0] = ("u8", b * (h + hb + ha) * (w + wb + wa) * (d + db + da) + 128)
    return case


def _logical_only(case, c, h, diffs):
    """C's output is d32, Hexscope's flat: compare the logical values and the ranges."""
    if not (c.ok and h.ok):
        return diffs
    out = []
    for k, (co, ho) in enumerate(zip(c.outs, h.outs)):
        if co.shape != ho.shape or co.logical().tobytes() != ho.logical().tobytes():
            out.append(f"out{k} logical values differ")
    return out


CAMPAIGNS["QuantizedTanh_8"] = Campaign(_tanh_case, c_op="QuantizedTanh_8_d32_ref",
                                        filter=_logical_only)
CAMPAIGNS["QuantizedSigmoid_8"] = Campaign(_tanh_case, c_op="QuantizedSigmoid_8_d32_ref",
                                           filter=_logical_only)
# HVX only in nnlib: the C side stops at its first vector instruction after its checks
CAMPAIGNS["QuantizedSqrt_8"] = Campaign(_unary_case)
CAMPAIGNS["QuantizedNeg_8"] = Campaign(_unary_case)



# ---------------------------------------------------------------- softmax, L2 normalisation
def _softmax_case(rng, i):
    shape = (1, 1, 1, int(rng.integers(1, 1100))) if i % 9 == 0 else _small_shape(rng, i)
    x = u8(rng, shape)
    lo, hi, why = _unary_range(rng, i)
    if i % 6 == 2:       # realistic logits
        lo, hi, why = -float(np.float32(rng.uniform(5, 30))), float(np.float32(rng.uniform(5, 30))), "logits"
    ins = [T.of(x, "u8"), F(lo), F(hi)]
    beta = None
    if i % 3:
        beta = float(np.float32([1.0, 0.5, 2.0, -1.0, 0.0, 10.0, 1e-3, 0.05][int(rng.integers(0, 8))]))
        ins.append(F(beta))
    return Case(ins, [("u8", _cap(shape)), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} [{lo:.6g},{hi:.6g}] ({why}) beta {beta}")


def _l2_case(rng, i):
    shape = _small_shape(rng, i)
    if i % 10 == 5:
        shape = shape[:3] + (0,)                                     # an empty tensor
    x = u8(rng, shape)
    lo, hi, why = _unary_range(rng, i)
    ins = [T.of(x, "u8"), F(lo), F(hi)]
    axis = None
    if i % 4:
        axis = int(rng.integers(-4, 4))          # out-of-range axes: see the replay tests
        ins.append(T.i(axis))
    return Case(ins, [("u8", _cap(shape)), ("f32", 4), ("f32", 4)],
                desc=f"x{shape} [{lo:.6g},{hi:.6g}] ({why}) axis {axis}")


CAMPAIGNS["QuantizedSoftmax_8_ref"] = Campaign(_softmax_case, c_op="QuantizedSoftmax_8_ref")
CAMPAIGNS["L2Normalize_8"] = Campaign(_l2_case, c_op="L2Normalize_8_ref")


# ---------------------------------------------------------------- argmax, argmin, mean
def _argmax_case(rng, i):
    shape = _small_shape(rng, i)
    if i % 3 == 0:       # the innermost non-1 axis is the HVX path: make the axis an outer one
        shape = shape[:3] + (int(rng.integers(2, 9)),)
    x = u8(rng, shape, mode=int(rng.integers(0, 3)))      # ties often
    axis = int(rng.integers(0, 3)) if i % 3 == 0 else int(rng.integers(-5, 5))
    lo, hi, why = qrange(rng, i)
    out_shape = tuple(1 if k == axis % 4 else n for k, n in enumerate(shape))
    n = int(np.prod(out_shape))
    if i % 13 == 0:
        n = n - 33      # one 128-byte block too small (when it can be)
    dm, cap = _declared(n, 4)
    return Case([T.of(x, "u8"), T.i(axis), F(lo), F(hi)], [("i32", cap)], def_max=[dm],
                desc=f"x{shape} axis {axis} declared {dm[3]} ints")


CAMPAIGNS["ArgMax_8toInt32"] = Campaign(_argmax_case)
CAMPAIGNS["ArgMin_8"] = Campaign(_argmax_case)


# ---------------------------------------------------------------- minimum, maximum
def _broadcast_pair(rng):
    """Two shapes that broadcast generally (not equal, neither a scalar, not b = 1x1x1xD)."""
    while True:
        full = rand_shape(rng, maxb=2, maxh=4, maxw=5, maxd=9)
        a = tuple(n if rng.random() < 0.6 else 1 for n in full)
        b = tuple(n if (a[k] == 1 or rng.random() < 0.4) else 1 for k, n in enumerate(full))
        if a != b and a != (1, 1, 1, 1) and b != (1, 1, 1, 1) and b[:3] != (1, 1, 1):
            return a, b


def _minmax_case(rng, i):
    k = i % 4
    if k in (0, 1):          # the plain-C broadcast loop: both inputs already on the out range
        sa, sb = _broadcast_pair(rng)
        if i % 16 == 1 and sa[3] > 1:        # an incompatible pair: the C loop's own error
            sb = sb[:3] + (sa[3] + 1,)
        lo, hi, why = qrange(rng, i)
        ranges = [lo, hi, lo, hi]
        extra = []
        why = "C broadcast, " + why
    else:
        sa = _small_shape(rng, i)
        pick = int(rng.integers(0, 10))      # rarely an incompatible pair
        sb = [sa, (1, 1, 1, 1), (1, 1, 1, sa[3])][pick % 3] if pick else _small_shape(rng, i + 1)
        (al, ah, aw), (bl, bh, bw) = qrange(rng, i), qrange(rng, i // 2 + 7)
        ranges, extra, why = [al, ah, bl, bh], [], f"a {aw} b {bw}"
        if k == 3:
            extra = [F(float(np.float32(rng.uniform(-5, 0))))]
            if rng.random() < 0.5:
                extra.append(F(float(np.float32(rng.uniform(0, 5)))))
    a, b = u8(rng, sa), u8(rng, sb)
    out = tuple(max(x, y) for x, y in zip(sa, sb))
    n = int(np.prod(out)) - (40 if i % 17 == 5 else 0)
    dm, cap = _declared(n, 1)
    return Case([T.of(a, "u8"), T.of(b, "u8")] + [F(v) for v in ranges] + extra,
                [("u8", cap), ("f32", 128), ("f32", 128)],
                def_max=[dm, (1, 1, 1, 1), (1, 1, 1, 1)],
                desc=f"a{sa} b{sb} ranges {[round(v, 5) for v in ranges]} +{len(extra)} ({why})")


CAMPAIGNS["QuantizedMinimum_8"] = Campaign(_minmax_case)
CAMPAIGNS["QuantizedMaximum_8"] = Campaign(_minmax_case)


# ---------------------------------------------------------------- sub: nnlib's flat op refuses
CAMPAIGNS["QuantizedSub_8p8to8"] = Campaign(_minmax_case)


# ---------------------------------------------------------------- the d32 forms of tanh, sigmoid
def _tanh_d32_case(rng, i):
    """The output declared with the input's shape: capacity by compute_max_size_with_pad on
    both sides (a large input padding then does not fit, on both)."""
    case = _tanh_case(rng, i)
    shape = case.inputs[0].shape
    case.outs[0] = ("u8", d32_capacity(shape))
    case.def_max = [shape, (1, 1, 1, 1), (1, 1, 1, 1)]
    return case


for _n in ("QuantizedTanh_8_d32", "QuantizedSigmoid_8_d32"):
    # logical values, shapes and the output's d32 padding amounts (not its padding bytes)
    CAMPAIGNS[_n] = Campaign(_tanh_d32_case, c_op=_n + "_ref", hs_op=_n)

# the copy is HVX: the layout nnlib decides in C (shapes, padding amounts) and its errors
CAMPAIGNS["QuantizedNeg_8_d32"] = Campaign(_tanh_d32_case,
                                           compare_kw={"layout_only_c_stub": True})


def _argmax_d32_case(rng, i):
    case = _argmax_case(rng, i)
    x = case.inputs[0]
    case.inputs[0] = T(x.shape, "u8", x.data, d32=rand_d32_pad(rng, x.shape),
                       d32_fill=int(rng.integers(0, 256)))
    return case


for _n in ("ArgMax_8_d32", "ArgMin_8_d32"):
    CAMPAIGNS[_n] = Campaign(_argmax_d32_case, compare_kw={"layout_only_c_stub": True})

# ---------------------------------------------------------------- golden files
def _spec(t: T, keep_d32: bool) -> dict:
    """A tensor as Hexscope's op reads it: a d32 input of a flat op given to its C twin
    becomes its logical data; a d32 op's input keeps its memory and padding."""
    if t.d32 is not None and keep_d32:      # logical data, padding amounts and fill byte
        flat = T(t.shape, t.dtype, t.data)
        return {"dtype": t.dtype, "shape": list(t.shape), "d32": list(t.d32),
                "fill": t.d32_fill, "hex": flat.memory().tobytes().hex()}
    flat = T(t.shape, t.dtype, t.data) if t.d32 is not None else t
    return {"dtype": t.dtype, "shape": list(t.shape),
            "hex": None if t.data is None else flat.memory().tobytes().hex()}


def export(op: str, n: int, seed: int, path: str) -> dict:
    """Run ``op``'s campaign on both sides; keep every case the C side ran (outputs or its
    error) as a golden file, and count how many Hexscope matches bit for bit."""
    import json

    import hs_exec
    from common import compare
    from oracle import Oracle
    oracle, camp = Oracle(), CAMPAIGNS[op]
    rng = np.random.default_rng(seed)
    cases, exact = [], 0
    for i in range(n):
        case = camp.gen(rng, i)
        c = oracle.run(camp.c_op or op, case.inputs, case.outs, case.padding, def_max=case.def_max)
        layout_only = c.kind == "stub" and camp.compare_kw.get("layout_only_c_stub")
        if not c.ok and c.kind != "error" and not layout_only:
            continue            # the C path is not available (HVX), or crashed
        h = hs_exec.run(camp.hs_op or op, case.inputs, len(case.outs), case.padding,
                        def_max=case.def_max, elsizes=case.elsizes(), outs=case.outs)
        diffs = compare(c, h, **camp.compare_kw)
        diffs = camp.filter(case, c, h, diffs) if camp.filter else diffs
        exact += not diffs
        entry = {"desc": case.desc, "padding": case.padding,
                 "inputs": [_spec(t, (camp.hs_op or op).endswith("_d32")) for t in case.inputs],
                 "outs": [list(o) for o in case.outs]}
        if case.def_max:
            entry["def_max"] = [list(d) for d in case.def_max]
        if layout_only:         # C decided the layout, then reached HVX
            entry["layout"] = [{"shape": list(o.shape), "d32": list(o.d32) if o.d32 else None}
                               for o in c.outs]
        elif c.ok:
            entry["outputs"] = [{"dtype": o.dtype, "shape": list(o.shape),
                                 "hex": o.logical().tobytes().hex(),
                                 **({"d32": list(o.d32)} if o.d32 is not None else {})}
                                for o in c.outs]
        else:
            entry["error"] = c.error.split(": ", 1)[-1][:200]
        cases.append(entry)
    doc = {"op": op, "c_op": camp.c_op or op, "source": "nnlib host oracle (tests/oracle), "
           "campaigns_ops26a.py", "seed": seed, "cases": cases}
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    return {"op": op, "kept": len(cases), "exact": exact}


if __name__ == "__main__":
    import sys
    op_name, count, out_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    print(export(op_name, count, int(sys.argv[4]) if len(sys.argv) > 4 else 1, out_path))
