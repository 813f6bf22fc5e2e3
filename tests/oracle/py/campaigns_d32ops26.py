"""d32ops26 campaigns: QuantizedSoftmax_8_d32 and its ``_ref`` (op_softmax_d32.c).

nnlib's ``QuantizedSoftmax_8_d32_ref`` always runs the plain C ``softmax_operate_ref_function``;
``QuantizedSoftmax_8_d32`` runs it too when the input has depth-before padding (otherwise its
HVX function: "C path unavailable"). Every byte of the output buffer is compared, padding
included. Golden files: ``python campaigns_d32ops26.py OP N PATH`` (campaigns_ops26a.export).
"""
from __future__ import annotations

import numpy as np
from campaigns import CAMPAIGNS, Campaign, d32_capacity, rand_d32_pad, u8
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
        if not c.ok and c.kind != "error":
            continue            # the C path is not available (HVX), or crashed
        h = hs_exec.run(op, case.inputs, len(case.outs), case.padding, def_max=case.def_max,
                        elsizes=case.elsizes(), outs=case.outs)
        exact += not compare(c, h, **camp.compare_kw)
        entry = {"desc": case.desc, "inputs": [_spec(t) for t in case.inputs],
                 "outs": [list(o) for o in case.outs],
                 "def_max": [list(d) for d in case.def_max]}
        if c.ok:
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


if __name__ == "__main__":
    import sys
    print(export(sys.argv[1], int(sys.argv[2]), int(sys.argv[4]) if len(sys.argv) > 4 else 1,
                 sys.argv[3]))
