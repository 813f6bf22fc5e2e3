"""Convolution-family campaigns of issue 25 (and issue 32 item 4), and the golden-file export.

    PYTHONPATH=. python campaigns_conv25.py export CAMPAIGN -n 60 --seed 3 OUT.json

``export`` runs a campaign's cases through nnlib's C only and writes them, with C's outputs
(logical bytes) or its failure, in the format the project's replay tests read
(``tests/data/oracle/*.json``). run3.py imports this module, so its campaigns run there too.
"""
from __future__ import annotations

import argparse
import json
import sys

import campaigns_sn  # noqa: F401 (registers the Supernode campaigns this file extends)
import numpy as np
from campaigns import CAMPAIGNS
from common import T


def _spec(t: T) -> dict:
    return {"dtype": t.dtype, "shape": list(t.shape),
            "hex": None if t.data is None else t.memory().tobytes().hex()}


def export(name: str, n: int, seed: int, path: str, *, op: str | None = None,
           keep=None) -> dict:
    """Write ``n`` cases of campaign ``name`` with nnlib's results to ``path``.

    ``keep(case)`` may drop cases (e.g. to keep only the edge cases of a campaign). Cases
    whose C path is unavailable (an HVX stub) are left out."""
    from oracle import Oracle
    camp = CAMPAIGNS[name]
    oracle = Oracle()
    rng = np.random.default_rng(seed)
    cases, stubs = [], 0
    for i in range(n):
        case = camp.gen(rng, i)
        if case is None or (keep is not None and not keep(case)):
            continue
        c = oracle.run(camp.c_op or name, case.inputs, case.outs, case.padding,
                       def_max=case.def_max)
        entry = {"desc": case.desc, "padding": case.padding,
                 "inputs": [_spec(t) for t in case.inputs]}
        if case.def_max:
            entry["declared"] = [list(d) for d in case.def_max]
        if c.ok:
            entry["outputs"] = [{"dtype": o.dtype, "shape": list(o.shape),
                                 "hex": o.logical().tobytes().hex()} for o in c.outs]
        elif c.kind == "stub":
            stubs += 1
            continue
        else:
            entry["fails"] = f"{c.kind}: {c.error[:160]}"
        cases.append(entry)
    doc = {"op": camp.c_op or name, "campaign": name, "seed": seed,
           "source": "nnlib host oracle (tests/oracle), exported by campaigns_conv25.py",
           "cases": cases}
    with open(path, "w") as fh:
        json.dump(doc, fh, separators=(",", ":"))
    print(f"{path}: {len(cases)} cases ({sum('fails' in c for c in cases)} failing in C), "
          f"{stubs} left out (C path unavailable)")
    return doc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["export"])
    ap.add_argument("campaign")
    ap.add_argument("out")
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    export(args.campaign, args.n, args.seed, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
