"""Reproduce one golden case of tests/data/oracle/<op>.hvx.json.gz under qemu-hexagon (with
nnlib's log) and against Hexscope, byte by byte (issue 25's last traces, docs/oracle-hvx.md).

    ORACLE_HVX=OUT/oracle-hvx PYTHONPATH=. python campaigns_trace25b.py OP CASE [--debug 2]
    ORACLE_HVX=OUT/oracle-hvx PYTHONPATH=. python campaigns_trace25b.py OP SEED --export OUT.json.gz I J ..
    ORACLE_HVX=OUT/oracle-hvx PYTHONPATH=. python campaigns_trace25b.py dwise_3x3_s2 0|1   (1: export)
    ORACLE_HVX=OUT/oracle-hvx PYTHONPATH=. python campaigns_trace25b.py dwise_mxn 0
"""
from __future__ import annotations

import argparse
import base64
import gzip
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from common import T
from oracle_hvx import HvxOracle

ROOT = Path(__file__).parents[3]
sys.path.insert(0, str(ROOT / "tests" / "engine" / "ops"))


@dataclass
class RawT(T):
    """A golden input: its memory exactly as stored (padding bytes included)."""
    raw: bytes = b""

    def memory(self) -> np.ndarray:
        return np.frombuffer(self.raw, np.uint8)


def golden(op: str) -> list[dict]:
    path = ROOT / "tests" / "data" / "oracle" / f"{op}.hvx.json.gz"
    return json.loads(gzip.decompress(path.read_bytes()))["cases"]


def inputs_of(case: dict) -> list[T]:
    ts = []
    for spec in case["inputs"]:
        dtype, shape, data = spec[:3]
        if dtype == "void":
            ts.append(T.shape_only(tuple(shape)))
            continue
        raw = base64.b64decode(data)
        d32 = tuple(spec[3]) if len(spec) > 3 else None
        ts.append(RawT(tuple(shape), dtype, np.zeros(0), d32, raw=raw))
    return ts


def run_c(op: str, case: dict, debug: int = 0, binary: str | None = None):
    outs = [(e[0], len(base64.b64decode(e[2]))) for e in case.get("outs", [])]
    if not outs:
        outs = [("u8", 1 << 20), ("f32", 4), ("f32", 4)]
    oracle = HvxOracle(binary)
    caps = [(o[0], max(o[1], 4)) for o in outs]
    res = oracle.run(op, inputs_of(case), caps, case["padding"], case["def_max"], debug)
    return res, oracle.log()


def run_hs(op: str, case: dict):
    import test_oracle_hvx as tv
    return tv._run(op, case)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("case", type=int)
    ap.add_argument("--debug", type=int, default=0)
    ap.add_argument("--export", nargs="+", metavar=("OUT", "CASE"),
                    help="write campaign cases CASE.. of seed ``case`` to OUT instead")
    a = ap.parse_args()
    if a.export:
        print(export_picked(a.op, a.case, [int(i) for i in a.export[1:]], a.export[0]))
        return
    if a.op == "dwise_mxn":
        print(run_cases("DepthwiseSupernode_8x8p32to8_d32", dwise_mxn_cases()))
        return
    if a.op == "dwise_3x3_s2":
        print(run_dwise_3x3_s2())
        if a.case:      # also keep 6: each left padding, VALID and SAME, both ranges
            every = dwise_3x3_s2_cases()
            print(export_cases("DepthwiseSupernode_8x8p32to8_d32",
                               [every[i] for i in (0, 7, 9, 14, 16, 23)],
                               "../../data/oracle/DepthwiseSupernode_8x8p32to8_d32"
                               ".s2_3x3.hvx.json.gz", 5))
        return
    case = golden(a.op)[a.case]
    print(case["desc"], "| known:", case.get("known"))
    c, log = run_c(a.op, case, a.debug)
    print("C:", c.ok, c.error[:200])
    if a.debug:
        print(log)
    h = run_hs(a.op, case)
    for k, (co, ho) in enumerate(zip(c.outs, h)):
        cb = np.asarray(co.raw)
        hb = np.asarray(ho.raw).view(np.uint8)[:cb.size]
        bad = np.flatnonzero(cb != hb)
        print(f"out{k} shape C {co.shape} H {ho.shape} pad C {co.d32} H {tuple(ho.padding) if ho.padding else None}: "
              f"{bad.size} bytes differ", bad[:20], cb[bad[:20]], hb[bad[:20]])
        if k:
            print("   C", cb.view(np.float32), "H", hb.view(np.float32))


def export_picked(op: str, seed: int, picks: list[int], path: str) -> dict:
    """Cases ``picks`` of the seed's campaign draw (campaigns_hvx.cases_of) with nnlib's
    results under QEMU, in the golden-file format of campaigns_hvx.export (no "known":
    each is one a trace made exact)."""
    import campaigns_hvx as ch
    cases = ch.cases_of(op, max(picks) + 1, seed)
    return export_cases(op, [cases[i] for i in picks], path, seed, picks)


def export_cases(op: str, picked: list, path: str, seed: int = 0,
                 picks: list[int] | None = None) -> dict:
    """``picked`` cases with nnlib's results under QEMU as a golden file (the format of
    campaigns_hvx.export, no "known")."""
    import campaigns_hvx as ch
    results = HvxOracle().run_many([(op, c.inputs, c.outs, c.padding, c.def_max)
                                    for c in picked])
    kept = []
    for i, case, c in zip(picks or range(len(picked)), picked, results):
        entry = {"desc": case.desc, "campaign_case": i, "padding": case.padding, "ok": c.ok,
                 "inputs": [ch._spec(t) for t in case.inputs],
                 "def_max": [list(d) for d in case.def_max][:len(case.outs)],
                 "elsizes": case.elsizes()}
        if c.ok:
            entry["outs"] = [ch._out_spec(o) for o in c.outs]
        else:
            entry["error"] = c.error.split(": ", 1)[-1][:200]
        kept.append(entry)
    doc = {"op": op, "source": "nnlib's HVX build under qemu-hexagon (tests/oracle/hvx), "
           "campaigns_trace25b.export_picked", "seed": seed, "cases": kept}
    with open(path, "wb") as f:
        f.write(gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), mtime=0))
    return {"op": op, "kept": len(kept)}


def dwise_3x3_s2_cases(seed: int = 5, pads: tuple[int, ...] = (1, 2, 3, 5, 6, 7)) -> list:
    """DepthwiseSupernode_8x8p32to8_d32 with golden case 20's filter, ranges and bias
    (3x3, stride 2) over random data of its shape, for each input left padding of ``pads``,
    VALID and SAME, an output range without 0 and one with it: the 3x3 stride-2 kernel's
    first group (dwise_s2_3x3.py), over padding (5..7) and over data columns (1..3)."""
    import campaigns

    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.conv2d import output_window
    base = golden("DepthwiseSupernode_8x8p32to8_d32")[20]
    rng = np.random.default_rng(seed)
    cases = []
    for wb in pads:
        for mode in ("VALID", "SAME"):
            for lo, hi in ((-8.0, -4.0), (-3.0, 5.0)):
                ins = inputs_of(base)
                b, h, w, d = ins[0].shape
                data = rng.integers(0, 256, (b, h, w, d), dtype=np.uint8)
                ins[0] = T((b, h, w, d), "u8", data, (4, 4, wb, (-(wb + w)) % 4 + 4, 0, (-d) % 32),
                           d32_fill=int(rng.integers(0, 256)))
                ins[10], ins[11] = T.f(lo), T.f(hi)
                oh = output_window(h, 3, 2, Padding.parse(mode)).out
                ow = output_window(w, 3, 2, Padding.parse(mode)).out
                dm = [(b, max(oh, 1), max(ow, 1), d), (1, 1, 1, 1), (1, 1, 1, 1)]
                outs = [("u8", campaigns.d32_capacity(dm[0])), ("f32", 128), ("f32", 128)]
                cases.append(campaigns.Case(ins, outs, mode, def_max=dm,
                                            desc=f"left pad {wb} {mode} out [{lo},{hi}]"))
    return cases


def run_dwise_3x3_s2() -> dict:
    """:func:`dwise_3x3_s2_cases` on nnlib's HVX build and Hexscope (:func:`run_cases`)."""
    return run_cases("DepthwiseSupernode_8x8p32to8_d32", dwise_3x3_s2_cases())


def dwise_mxn_cases(seed: int = 11) -> list:
    """DepthwiseSupernode_8x8p32to8_d32 on the MxN kernels (filters 2x3, 4x3, 5x3, 3x5, 2x7,
    4x5; strides 1 and 2; input widths 5..10, VALID for even, SAME for odd: every count of
    data columns in a last group, and two outputs of width 0), random data, filter, bias
    and fill, a left padding of 4."""
    import campaigns

    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.conv2d import output_window
    rng = np.random.default_rng(seed)
    cases = []
    for fh, fw in ((2, 3), (4, 3), (5, 3), (3, 5), (2, 7), (4, 5)):
        for sw in (1, 2):
            for w in range(5, 11):
                mode = ("VALID", "SAME")[w % 2]
                b, h, d = 1, fh + 2, 32
                x = rng.integers(0, 256, (b, h, w, d), dtype=np.uint8)
                f = rng.integers(0, 256, (fh, fw, d, 1), dtype=np.uint8)
                bias = rng.integers(-2000, 2000, d).astype(np.int32).reshape(1, 1, 1, d)
                pad = (4, 4, 4, (-(4 + w)) % 4 + 4, 0, 0)
                ins = [T((b, h, w, d), "u8", x, pad, d32_fill=int(rng.integers(0, 256))),
                       T.of(f, "u8"), T.f(0.0), T.f(1.0), T.f(-1.0), T.f(1.0),
                       T.shape_only((1, sw, sw, 1)), T.of(bias, "i32"), T.f(-1000.0),
                       T.f(1000.0), T.f(-2.0), T.f(2.0)]
                oh = output_window(h, fh, sw, Padding.parse(mode)).out
                ow = output_window(w, fw, sw, Padding.parse(mode)).out
                dm = [(b, max(oh, 1), max(ow, 1), d), (1, 1, 1, 1), (1, 1, 1, 1)]
                outs = [("u8", campaigns.d32_capacity(dm[0])), ("f32", 128), ("f32", 128)]
                cases.append(campaigns.Case(ins, outs, mode, def_max=dm,
                                            desc=f"f{fh}x{fw} s{sw} w{w} ow{ow} {mode}"))
    return cases


def run_cases(op: str, cases: list) -> dict:
    """``cases`` on nnlib's HVX build and Hexscope, every byte compared (d32 padding too)."""
    import campaigns_hvx as ch
    from common import compare
    results = HvxOracle().run_many([(op, c.inputs, c.outs, c.padding, c.def_max)
                                    for c in cases])
    bad = [c.desc for c, r in zip(cases, results)
           if [x for x in compare(r, ch.hexscope(op, c), compare_padding=True)
               if not x.startswith("[note]")]]
    return {"cases": len(cases), "exact": len(cases) - len(bad), "differ": bad}


if __name__ == "__main__":
    main()
