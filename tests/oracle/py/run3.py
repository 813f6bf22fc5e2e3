"""Run random cases of one op (or all) on both sides and compare bit for bit.

    PYTHONPATH=tools/oracle/py .venv/bin/python tools/oracle/py/run.py OP [-n 200] [--seed 0]
        [--json OUT.json] [--show 5]

An op's campaign (campaigns.py) draws inputs; each case runs nnlib's plain-C op (liboracle.so)
and Hexscope's kernel, then compares data bytes, min/max float bits, shapes and d32 padding.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import campaigns
import campaigns_avgpool26  # noqa: F401 (QuantizedAvgPool_8_d32_ref)
import campaigns_conv25  # noqa: F401 (convolution family, issue 25)
import campaigns_d32ops26  # noqa: F401 (issue 26: QuantizedSoftmax_8_d32 and _ref)
import campaigns_fc  # noqa: F401 (issue 25: FULLY_CONNECTED chain, ...)
import campaigns_ops26a  # noqa: F401 (issue 26: unary, softmax, l2norm, reductions)
import campaigns_ops26b  # noqa: F401 (issue 26 shape and resize ops)
import campaigns_sn  # noqa: F401 (Supernode campaigns)
import hs
import hs_exec
import numpy as np

EXEC = os.environ.get('HS_EXEC_CAPACITY') == '1'
CRASH_AS_FAIL = os.environ.get('CRASH_AS_FAIL') == '1'   # a C crash (SIGFPE...) compared as a failure


def _hs_run(op, inputs, n_out, padding, def_max=None, elsizes=None, outs=None):
    return hs.run(op, inputs, n_out, padding, def_max=def_max, elsizes=elsizes)
from common import compare
from oracle import Oracle


def run_op(oracle: Oracle, name: str, n: int, seed: int, show: int) -> dict:
    camp = campaigns.CAMPAIGNS[name]
    rng = np.random.default_rng(seed)
    stats = {"op": name, "cases": 0, "exact": 0, "mismatch": 0, "both_fail": 0,
             "c_stub": 0, "skipped": 0, "examples": [], "kinds": {}}
    t0 = time.time()
    hs.glibc_libm(camp.glibc)
    for i in range(n):
        case = camp.gen(rng, i)
        if case is None:
            stats["skipped"] += 1
            continue
        c = oracle.run(camp.c_op or name, case.inputs, case.outs, case.padding,
                       def_max=case.def_max)
        if not c.ok and c.kind in ("stub", "ctor") + (() if CRASH_AS_FAIL else ("crash",)) and not (
                c.kind == "stub" and camp.compare_kw.get("layout_only_c_stub")):
            stats["c_stub"] += 1
            stats["kinds"].setdefault(c.kind + ": " + c.error[:120], 0)
            stats["kinds"][c.kind + ": " + c.error[:120]] += 1
            if c.kind == "stub" and camp.stub_after_checks:
                # C got past all its checks into HVX code: Hexscope must not fail either
                h = (hs_exec.run(camp.hs_op or name, case.inputs, len(case.outs), case.padding,
                           def_max=case.def_max, elsizes=[s for s in case.elsizes()], outs=case.outs) if EXEC else hs.run(camp.hs_op or name, case.inputs, len(case.outs), case.padding,
                           def_max=case.def_max, elsizes=[s for s in case.elsizes()]))
                if not h.ok:
                    stats["mismatch"] += 1
                    import re as _re
                    key = "C passes its checks (reaches HVX code) but Hexscope fails: " + \
                        _re.sub(r"[-0-9.e+]{3,}", "N", h.error)[:110]
                    stats["kinds"][key] = stats["kinds"].get(key, 0) + 1
                    if sum(1 for e in stats["examples"] if e["key"] == key) < show:
                        stats["examples"].append({"case": i, "key": key, "desc": case.desc,
                                                  "diffs": [h.error[:300]], "ub": c.ub,
                                                  "hexconv": c.hexconv, "c_error": c.error[:300],
                                                  "h_error": h.error[:300]})
            continue
        try:
            h = (hs_exec.run if EXEC else _hs_run)(camp.hs_op or name, case.inputs, len(case.outs), case.padding,
                       def_max=case.def_max, elsizes=[s for s in case.elsizes()], outs=case.outs)
        except Exception as exc:  # a crash in Hexscope is a finding too
            from common import Result
            h = Result(False, error="EXCEPTION " + "".join(
                traceback.format_exception_only(type(exc), exc)).strip(), kind="exception")
        stats["cases"] += 1
        diffs = compare(c, h, **camp.compare_kw)
        diffs = camp.filter(case, c, h, diffs) if camp.filter else diffs
        if not c.ok and not h.ok:
            stats["both_fail"] += 1
            import re as _re
            msg = _re.sub(r"^.*?:\d+: ", "", c.error)
            msg = _re.sub(r"[-0-9.e+x]{2,}|\d", "N", msg)[:70]
            stats.setdefault("fail_msgs", {})
            stats["fail_msgs"][msg] = stats["fail_msgs"].get(msg, 0) + 1
        if c.guard[0] or c.guard[1]:
            stats["c_out_of_bounds"] = stats.get("c_out_of_bounds", 0) + 1
            diffs = diffs + [f"C wrote outside its buffers: {c.guard[0]} bytes before, {c.guard[1]} after"]
        if diffs:
            stats["mismatch"] += 1
            if c.guard[0] or c.guard[1]:
                key = "C (nnlib) writes outside the tensor buffer" + (" [" + camp.classify(case, c, h, diffs) + "]" if camp.classify else "")
            elif c.ub[0]:
                key = f"C did {c.ub[0]} undefined float->int conversion(s) (first at {c.ub[1]}); host result not the DSP's"
                stats["ub"] = stats.get("ub", 0) + 1
            else:
                key = camp.classify(case, c, h, diffs) if camp.classify else diffs[0].split(":")[0]
                if key.startswith("status"):
                    import re as _re
                    key = _re.sub(r"\(shape.*", "", _re.sub(r"[-0-9.e+]{2,}", "N", diffs[0]))[:150]
            stats["kinds"][key] = stats["kinds"].get(key, 0) + 1
            if sum(1 for e in stats["examples"] if e["key"] == key) < show:
                stats["examples"].append({"case": i, "key": key, "desc": case.desc, "diffs": diffs, "ub": c.ub, "hexconv": c.hexconv,
                                          "c_error": c.error[:300], "h_error": h.error[:300]})
        else:
            stats["exact"] += 1
    hs.glibc_libm(False)
    stats["seconds"] = round(time.time() - t0, 1)
    return stats


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ops", nargs="*")
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json")
    ap.add_argument("--show", type=int, default=3)
    args = ap.parse_args()
    oracle = Oracle()
    names = args.ops or list(campaigns.CAMPAIGNS)
    out = []
    for name in names:
        s = run_op(oracle, name, args.n, args.seed, args.show)
        out.append(s)
        print(f"{name}: cases {s['cases']} exact {s['exact']} mismatch {s['mismatch']} "
              f"(both failed {s['both_fail']}, C path unavailable {s['c_stub']}, "
              f"skipped {s['skipped']}) {s['seconds']}s")
        for k, v in sorted(s["kinds"].items(), key=lambda kv: -kv[1]):
            print(f"    {v:4d} x {k}")
        for k, v in sorted(s.get("fail_msgs", {}).items(), key=lambda kv: -kv[1])[:4]:
            print(f"    (both fail {v:3d} x: C says '{k}')")
        for ex in s["examples"]:
            print(f"    e.g. case {ex['case']}: {ex['desc']}" + (f"  [C UB casts: {ex['ub'][0]} at {ex['ub'][1]}]" if ex['ub'][0] else "") + (f"  [C: {ex['hexconv'][0]} Hexagon-saturated conversions]" if ex['hexconv'][0] else ""))
            for d in ex["diffs"][:3]:
                print(f"         {d[:300]}")
        sys.stdout.flush()
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
