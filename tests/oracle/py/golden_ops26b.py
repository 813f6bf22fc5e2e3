"""Write the golden files of issue 26's shape ops: cases drawn by campaigns_ops26b, run on
nnlib's C (liboracle.so) and checked against Hexscope, kept when C ran (succeeded or failed
in its checks) and both sides agree; the C result is stored.

    ORACLE_LIB=... PYTHONPATH=. python golden_ops26b.py OUT_DIR [OP ...] [-n 320]

Small cases only (inputs and outputs within --max-bytes), so the files stay small.
"""
from __future__ import annotations

import argparse
import base64
import gzip
import json
import os
import sys

import campaigns_ops26b as c26
import hs_exec
import numpy as np
from common import compare
from oracle import Oracle


def _t(t) -> list:
    """[dtype, shape, bytes in memory order] (+ the d32 padding, h/w/d before/after)."""
    data = None if t.data is None else base64.b64encode(t.memory().tobytes()).decode()
    return [t.dtype, list(t.shape), data] + ([list(t.d32)] if t.d32 is not None else [])


def _o(o) -> list:
    """A flat output's logical bytes; a d32 output's whole memory and its padding."""
    if o.d32 is not None:
        return [o.dtype, list(o.shape), base64.b64encode(o.raw.tobytes()).decode(), list(o.d32)]
    return [o.dtype, list(o.shape), base64.b64encode(o.logical().tobytes()).decode()]


def golden(oracle: Oracle, op: str, n: int, seed: int, max_bytes: int) -> dict:
    camp = c26.CAMPAIGNS[op]
    rng = np.random.default_rng(seed)
    cases, drawn, skipped = [], 0, {"c_unavailable": 0, "differs": 0, "large": 0}
    while len(cases) < n and drawn < 40 * n:
        case = camp.gen(rng, drawn)
        drawn += 1
        size = sum(t.memory().size for t in case.inputs) + sum(c for _, c in case.outs[:1])
        if size > max_bytes:
            skipped["large"] += 1
            continue
        c = oracle.run(op, case.inputs, case.outs, case.padding, def_max=case.def_max)
        if not c.ok and c.kind != "error":
            skipped["c_unavailable"] += 1
            continue
        h = hs_exec.run(op, case.inputs, len(case.outs), case.padding, def_max=case.def_max,
                        elsizes=case.elsizes(), outs=case.outs)
        if compare(c, h):
            skipped["differs"] += 1
            continue
        cases.append({"desc": case.desc, "padding": case.padding,
                      "inputs": [_t(t) for t in case.inputs],
                      "def_max": [list(d) for d in case.def_max],
                      "elsizes": case.elsizes(),
                      "ok": c.ok, "error": c.error.split(": ", 1)[-1][:120] if not c.ok else "",
                      "outs": [_o(o) for o in c.outs] if c.ok else []})
    return {"op": op, "source": "nnlib host oracle (tests/oracle), nnlib's own op run as C; "
            "drawn by campaigns_ops26b.py", "seed": seed, "drawn": drawn, "skipped": skipped,
            "cases": cases}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("ops", nargs="*")
    ap.add_argument("-n", type=int, default=320)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--max-bytes", type=int, default=700)
    args = ap.parse_args()
    oracle = Oracle()
    for op in args.ops or c26.OPS:
        g = golden(oracle, op, args.n, args.seed, args.max_bytes)
        # d32 memories are mostly padding: those files are kept gzipped
        path = os.path.join(args.out, f"{op}.json" + (".gz" if op.endswith("_d32") else ""))
        with (gzip.open(path, "wt") if path.endswith(".gz") else open(path, "w")) as f:
            head = {k: g[k] for k in ("op", "source", "seed", "drawn", "skipped")}
            f.write(json.dumps(head)[:-1] + ',\n"cases": [\n')
            f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in g["cases"]))
            f.write("\n]}\n")
        ok = sum(c["ok"] for c in g["cases"])
        print(f"{op}: {len(g['cases'])} cases ({ok} succeed, {len(g['cases']) - ok} fail in C and "
              f"Hexscope) of {g['drawn']} drawn; skipped {g['skipped']}; "
              f"{os.path.getsize(path) // 1024} KB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
