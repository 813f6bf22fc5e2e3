"""d32ops26 campaigns: QuantizedSoftmax_8_d32 and its ``_ref`` (op_softmax_d32.c).

nnlib's ``QuantizedSoftmax_8_d32_ref`` always runs the plain C ``softmax_operate_ref_function``;
``QuantizedSoftmax_8_d32`` runs it too when the input has depth-before padding (otherwise its
HVX function: "C path unavailable"). Every byte of the output buffer is compared, padding
included. Golden files: ``python campaigns_d32ops26.py OP N PATH`` (campaigns_ops26a.export).
"""
from __future__ import annotations

import numpy as np
from campaigns import CAMPAIGNS, Campaign, Case, F, d32_capacity, rand_d32_pad, u8
from campaigns_ops26a import _softmax_case
from common import T


def _softmax_d32_case(rng, i):
    case = _softmax_case(rng, i)
    x = case.inputs[0]
    shape = x.shape if i % 9 else (1, 1, 1, int(rng.integers(1, 300)))
    data = x.data if shape == x.shape else u8(rng, shape).reshape(-1)
    pad = rand_d32_pad(rng, shape)
    if i % 4 == 1:           # depth-before padding: QuantizedSoftmax_8_d32 runs its C path too
        hb, ha, wb, wa, _, _ = pad
        db = int(rng.integers(1, 32))
        pad = (hb, ha, wb, wa, db, -(db + shape[3]) % 32)
    case.inputs[0] = T(shape, "u8", np.asarray(data).reshape(shape),
                       d32=pad, d32_fill=int(rng.integers(0, 256)))
    b, h, w, d = shape
    declared = shape if i % 10 == 3 else (b, h, w + 8, d + 32)   # 1 in 10 tight: may not fit
    case.outs[0] = ("u8", d32_capacity(declared))
    case.def_max = [declared, (1, 1, 1, 1), (1, 1, 1, 1)]
    return case


for _n in ("QuantizedSoftmax_8_d32_ref", "QuantizedSoftmax_8_d32"):
    CAMPAIGNS[_n] = Campaign(_softmax_d32_case, compare_kw={"compare_padding": True})



def _spec(t: T) -> dict:
    spec = {"dtype": t.dtype, "shape": list(t.shape),
            "hex": None if t.data is None else T(t.shape, t.dtype, t.data).memory().tobytes().hex()}
    if t.d32 is not None:       # logical data, padding amounts and fill byte
        spec.update(d32=list(t.d32), fill=t.d32_fill)
    return spec


def export(op: str, n: int, seed: int, path: str) -> dict:
    """Every case the C ran (its outputs or its error) as a golden file; output 0 is kept
    as its whole d32 buffer, padding included, the ranges as their bytes."""
    import json

    import hs_exec
    from common import compare
    from oracle import Oracle
    oracle, camp = Oracle(), CAMPAIGNS[op]
    rng = np.random.default_rng(seed)
    cases, exact = [], 0
    for i in range(n):
        case = camp.gen(rng, i)
        c = oracle.run(op, case.inputs, case.outs, case.padding, def_max=case.def_max)
        layout_only = c.kind == "stub" and camp.compare_kw.get("layout_only_c_stub")
        if not c.ok and c.kind != "error" and not layout_only:
            continue            # the C path is not available (HVX), or crashed
        h = hs_exec.run(op, case.inputs, len(case.outs), case.padding, def_max=case.def_max,
                        elsizes=case.elsizes(), outs=case.outs)
        diffs = compare(c, h, **camp.compare_kw)
        exact += not (camp.filter(case, c, h, diffs) if camp.filter else diffs)
        entry = {"desc": case.desc, "inputs": [_spec(t) for t in case.inputs],
                 "outs": [list(o) for o in case.outs],
                 "def_max": [list(d) for d in case.def_max]}
        if layout_only:         # C decided the layout of the data outputs, then reached HVX
            entry["layout"] = [{"shape": list(o.shape), "d32": list(o.d32)}
                               for o in c.outs if o.d32 is not None]
        elif c.ok:
            y = c.outs[0]
            entry["memory"] = {"shape": list(y.shape), "d32": list(y.d32),
                               "hex": np.asarray(y.raw).tobytes().hex()}
            entry["ranges"] = [o.logical().tobytes().hex() for o in c.outs[1:]]
        else:
            entry["error"] = c.error.split(": ", 1)[-1][:200]
        cases.append(entry)
    doc = {"op": op, "source": "nnlib host oracle (tests/oracle), campaigns_d32ops26.py",
           "seed": seed, "cases": cases}
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    return {"op": op, "kept": len(cases), "exact": exact}



# ------------------------------------------- split, depth-to-space, resize: the C's layout
# Their copy and interpolation loops are HVX: the C side decides the output layout (shape,
# padding amounts) and raises its errors before it reaches them; those are compared
# (layout_only_c_stub). The resize's same-size path is a plain copy: compared byte for byte.
def _d32_in(rng, shape):
    x = u8(rng, shape)
    return T(shape, "u8", x, d32=rand_d32_pad(rng, shape), d32_fill=int(rng.integers(0, 256)))


def _i32(values) -> T:
    return T.of(np.asarray(values, np.int32).reshape(1, 1, 1, -1), "i32")


def _roomy(shape):
    b, h, w, d = shape
    return (b, h + 8, w + 8, d + 32)


def _split_d32_case(rng, i):
    n = int(rng.integers(2, 5))
    d0 = int(rng.integers(1, 70))
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 6)),
             n * d0 + (1 if i % 11 == 3 else 0))
    x = _d32_in(rng, shape)
    axis = [3, -1, 2, 5][i % 4] if i % 5 == 0 else 3
    part = (*shape[:3], max(1, shape[3] // n))
    dm = [_roomy(part) if i % 9 != 4 else part] * n + [(1, 1, 1, 1)] * 2
    outs = [("u8", d32_capacity(d)) for d in dm[:n]] + [("f32", 128)] * 2
    lo, hi = sorted(float(np.float32(v)) for v in rng.uniform(-5, 5, 2))
    return Case([_i32([axis]), x, F(lo), F(hi)], outs, def_max=dm,
                desc=f"x{shape} pad {x.d32} axis {axis} n {n}")


def _d2s_d32_case(rng, i):
    bh, bw = [(2, 2), (1, 2), (2, 1), (3, 3), (1, 4), (2, 8), (1, 5), (2, 2)][i % 8]
    od = [32, 64, 16, 32, 32][i % 5]
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 4)),
             od * bh * bw + (32 if i % 13 == 6 else 0))
    x = _d32_in(rng, shape)
    ins = [x, _i32([bh, bw] if bh != bw or i % 2 else [bh]), F(0.0), F(1.0)]
    if i % 3:
        crop = [int(rng.integers(0, bh + 1)), int(rng.integers(0, bh + 1)),
                int(rng.integers(0, bw + 1)), int(rng.integers(0, bw + 1))]
        if i % 4 == 1:
            crop.append(int(rng.integers(od - 33, od + 2)))      # the depth crop, some bad
        ins.append(_i32(crop))
    out = (shape[0], shape[1] * bh, shape[2] * bw, max(1, shape[3] // (bh * bw)))
    dm = [_roomy(out) if i % 9 != 4 else (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)]
    outs = [("u8", d32_capacity(dm[0])), ("f32", 128), ("f32", 128)]
    return Case(ins, outs, def_max=dm, desc=f"x{shape} block {bh}x{bw} ins {len(ins)}")


def _resize_d32_case(rng, i):
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 7)),
             int(rng.integers(1, 70)))
    h, w = shape[1:3]
    k = i % 5
    new = [(2 * h, 2 * w), (h, w), tuple(int(v) for v in rng.integers(1, 14, 2)),
           (3 * h, w + 1), (0, 3)][k]
    x = _d32_in(rng, shape)
    ins = [x, _i32(list(new)), F(-1.0), F(2.0)]
    if i % 2:
        ins.append(_i32([int(i % 4 == 1)]))
    out = (shape[0], max(1, new[0]), max(1, new[1]), shape[3])
    dm = [_roomy(out) if i % 9 != 4 else (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)]
    outs = [("u8", d32_capacity(dm[0])), ("f32", 128), ("f32", 128)]
    return Case(ins, outs, def_max=dm, desc=f"x{shape} pad {x.d32} -> {new} ins {len(ins)}")


def _ranges_after_hvx(case, c, h, diffs):
    """These ops copy min and max after their HVX workers: when the C stops in one, its
    range outputs are still unset (shape 0), which is no difference."""
    if c.kind != "stub":
        return diffs
    return [d for d in diffs if not d.startswith(("out1 ", "out2 "))]


_LAYOUT = {"layout_only_c_stub": True}
CAMPAIGNS["QuantizedSplit_8_d32"] = Campaign(_split_d32_case, compare_kw=_LAYOUT)
CAMPAIGNS["DepthToSpace_8_d32"] = Campaign(_d2s_d32_case, compare_kw={**_LAYOUT, "compare_padding": True},
                                           filter=_ranges_after_hvx)
CAMPAIGNS["QuantizedResizeBilinear_8_d32"] = Campaign(
    _resize_d32_case, compare_kw={"layout_only_c_stub": True, "compare_padding": True},
    filter=_ranges_after_hvx)


if __name__ == "__main__":
    import sys
    print(export(sys.argv[1], int(sys.argv[2]), int(sys.argv[4]) if len(sys.argv) > 4 else 1,
                 sys.argv[3]))
