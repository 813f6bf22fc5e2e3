"""Export the issue-25 campaigns' cases as golden files (tests/data/oracle/<op>.json).

    ORACLE_LIB=... PYTHONPATH=. python export_fc.py OUT_DIR [-n 400] [--seed 25]

A case is kept when C and Hexscope agree byte for byte before any campaign filter (outputs
stored as C wrote them), or when both refuse it (stored as "fails" with C's message). Cases
the C cannot run (an HVX stub) or that differ are left out and counted. Tensors are stored
as base64 of their bytes in memory order, so the files stay small.
"""
from __future__ import annotations

import argparse
import base64
import json
import sys

import campaigns
import campaigns_fc
import hs
import numpy as np
from common import compare
from oracle import Oracle

GOLDEN = {  # golden file -> campaign (the C op is the campaign's)
    "requantize_32to8": "Requantize_32to8",
    "requantize_8to8": "Requantize_8to8",
    "biasadd_32p32to32": "QuantizedBiasAdd_32p32to32",
    "superfc_8x8p32to8_ref": "SuperFC_small",
    "mul_8x8to32_ref": "QuantizedMul_8x8to32_ref",
    "space_to_batch_nd_8": "SpaceToBatchND_8",
    "batch_to_space_nd_8": "BatchToSpaceND_8",
}


def _t(t) -> dict:
    return {"dtype": t.dtype, "shape": list(t.shape), "qint32": t.qint32,
            "b64": None if t.data is None else base64.b64encode(t.memory().tobytes()).decode()}


def export(oracle: Oracle, camp_name: str, n: int, seed: int) -> tuple[dict, dict]:
    camp = campaigns.CAMPAIGNS[camp_name]
    op = camp.hs_op or camp_name.replace("_small", "_8x8p32to8_ref")
    c_op = camp.c_op or op
    rng = np.random.default_rng(seed)
    cases, counts = [], {"kept": 0, "both_fail": 0, "c_unavailable": 0, "differ": 0}
    for i in range(n):
        case = camp.gen(rng, i)
        c = oracle.run(c_op, case.inputs, case.outs, case.padding, def_max=case.def_max)
        if not c.ok and c.kind != "error":
            counts["c_unavailable"] += 1
            continue
        h = hs.run(op, case.inputs, len(case.outs), case.padding, def_max=case.def_max,
                   elsizes=case.elsizes())
        if compare(c, h):
            counts["differ"] += 1
            continue
        entry = {"desc": case.desc, "padding": case.padding,
                 "inputs": [_t(t) for t in case.inputs]}
        if c.ok:
            entry["outputs"] = [{"dtype": o.dtype, "shape": list(o.shape),
                                 "b64": base64.b64encode(o.logical().tobytes()).decode()}
                                for o in c.outs]
            counts["kept"] += 1
        else:
            entry["fails"] = c.error.split(": ", 1)[-1][:200]
            counts["both_fail"] += 1
        cases.append(entry)
    return {"op": op, "c_op": c_op, "seed": seed,
            "source": f"nnlib host oracle (tests/oracle), C {c_op}, campaign {camp_name} "
                      "(campaigns_fc.py), exported by export_fc.py", "cases": cases}, counts


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("-n", type=int, default=360)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("only", nargs="*")
    args = ap.parse_args()
    oracle = Oracle()
    campaigns_fc.SMALL = True
    for stem, camp in GOLDEN.items():
        if args.only and stem not in args.only:
            continue
        data, counts = export(oracle, camp, args.n, args.seed)
        path = f"{args.out}/{stem}.json"
        with open(path, "w") as f:
            json.dump(data, f, separators=(",", ":"))
            f.write("\n")
        print(stem, counts, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
