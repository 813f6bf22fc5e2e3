"""Campaigns against nnlib's HVX code under qemu-hexagon (oracle_hvx.py): each case runs on
the Hexagon build, on Hexscope (as the executor runs it) and, where it has a plain-C path, on
the x86 oracle, and every byte is compared (d32 padding included).

    PYTHONPATH=. python campaigns_hvx.py run OP [-n 300] [--seed 1] [--x86] [--show 3]
    PYTHONPATH=. python campaigns_hvx.py export OP N OUT.json [--seed 1]

The case generators are the x86 campaigns' (campaigns_*.py), plus the ones below where the
x86 harness only compared a layout. ``HVX_CAMPAIGNS`` names the generator and the comparison
for each op (the nnlib op run is the same name).
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import campaigns
import campaigns_conv25  # noqa: F401 (Supernode_8x8p32to8 generator)
import campaigns_d32ops26  # noqa: F401 (d32 generators)
import campaigns_fc  # noqa: F401 (Requantize_32to8)
import hs_exec
import numpy as np
from common import T, compare
from oracle_hvx import HvxOracle


@dataclass
class HvxCampaign:
    gen: str                      # the name of the generator in campaigns.CAMPAIGNS
    compare_kw: dict
    hs_op: str | None = None


_D32 = {"compare_padding": True}


def _d32_in(rng, case, i, hs_pad=False):
    """The case's flat input 0 as a d32 tensor: nnlib's usual padding (4 rows above and below,
    4 units before) or, one case in three, a random one."""
    from campaigns import rand_d32_pad
    x = case.inputs[0]
    b, h, w, d = x.shape
    pad = rand_d32_pad(rng, x.shape) if i % 3 == 2 else (4, 4, 4, (-w) % 4 + 4, 0, (-d) % 32)
    case.inputs[0] = T(x.shape, "u8", x.data, d32=pad, d32_fill=int(rng.integers(0, 256)))
    return case


def _d32_out(case):
    from campaigns import d32_capacity
    dm = case.def_max[0]
    case.outs[0] = ("u8", d32_capacity(dm))
    return case


def _sn32_d32(rng, i):
    from campaigns_conv25 import _sn32_case
    return _d32_out(_d32_in(rng, _sn32_case(rng, i, small=True), i))


def _sn32_outd32(rng, i):
    from campaigns_conv25 import _sn32_case
    return _d32_out(_sn32_case(rng, i, small=True))


campaigns.CAMPAIGNS["hvx:Supernode_8x8p32to8_d32"] = campaigns.Campaign(_sn32_d32)
campaigns.CAMPAIGNS["hvx:InputSupernode_8x8p32to8_outd32"] = campaigns.Campaign(_sn32_outd32)
HVX_CAMPAIGNS: dict[str, HvxCampaign] = {
    "Requantize_32to8": HvxCampaign("Requantize_32to8", {}),
    "QuantizedSplit_8_d32": HvxCampaign("QuantizedSplit_8_d32", _D32),
    "DepthToSpace_8_d32": HvxCampaign("DepthToSpace_8_d32", _D32),
    "QuantizedResizeBilinear_8_d32": HvxCampaign("QuantizedResizeBilinear_8_d32", _D32),
    "QuantizedSoftmax_8_d32": HvxCampaign("QuantizedSoftmax_8_d32", _D32),
    "Supernode_8x8p32to8_d32": HvxCampaign("hvx:Supernode_8x8p32to8_d32", _D32),
    "InputSupernode_8x8p32to8_outd32": HvxCampaign("hvx:InputSupernode_8x8p32to8_outd32", _D32),
}


def cases_of(op: str, n: int, seed: int) -> list:
    gen = campaigns.CAMPAIGNS[HVX_CAMPAIGNS[op].gen].gen
    rng = np.random.default_rng(seed)
    return [c for c in (gen(rng, i) for i in range(n)) if c is not None]


def hexscope(op: str, case):
    camp = HVX_CAMPAIGNS[op]
    return hs_exec.run(camp.hs_op or op, case.inputs, len(case.outs), case.padding,
                       def_max=case.def_max, elsizes=case.elsizes(), outs=case.outs)


def run(op: str, n: int, seed: int, x86: bool, show: int) -> dict:
    camp = HVX_CAMPAIGNS[op]
    cases = cases_of(op, n, seed)
    t0 = time.time()
    results = HvxOracle().run_many([(op, c.inputs, c.outs, c.padding, c.def_max) for c in cases])
    t_hvx = time.time() - t0
    xo = None
    if x86:
        from oracle import Oracle
        xo = Oracle()
    st = {"op": op, "cases": len(cases), "hvx_ok": 0, "hvx_error": 0, "hvx_other": {},
          "exact": 0, "diff": 0, "x86_ran": 0, "x86_same": 0, "seconds_qemu": round(t_hvx, 1),
          "examples": []}
    for i, (case, c) in enumerate(zip(cases, results)):
        if c.ok:
            st["hvx_ok"] += 1
        elif c.kind == "error":
            st["hvx_error"] += 1
        else:
            key = f"{c.kind}: {c.error[:100]}"
            st["hvx_other"][key] = st["hvx_other"].get(key, 0) + 1
            continue
        h = hexscope(op, case)
        diffs = compare(c, h, **camp.compare_kw)
        diffs = [d for d in diffs if not d.startswith("[note]")]
        if diffs:
            st["diff"] += 1
            if len(st["examples"]) < show:
                st["examples"].append({"case": i, "desc": case.desc, "diffs": diffs[:3],
                                       "hvx_error": c.error[:200], "hs_error": h.error[:200]})
        else:
            st["exact"] += 1
        if xo is not None:
            cx = xo.run(op, case.inputs, case.outs, case.padding, def_max=case.def_max)
            if cx.ok or cx.kind == "error":
                st["x86_ran"] += 1
                st["x86_same"] += not [d for d in compare(cx, c, **camp.compare_kw)
                                       if not d.startswith("[note]")]
    return st


def _spec(t: T) -> list:
    import base64
    spec = [t.dtype, list(t.shape), base64.b64encode(t.memory().tobytes()).decode()]
    return spec + [list(t.d32)] if t.d32 is not None else spec


def _out_spec(o) -> list:
    import base64
    spec = [o.dtype, list(o.shape), base64.b64encode(np.asarray(o.raw).tobytes()).decode()]
    return spec + [list(o.d32)] if o.d32 is not None else spec


def export(op: str, n: int, seed: int, path: str) -> dict:
    """Every case the HVX build ran (its outputs, every byte of a d32 memory, or its error) as
    a gzipped golden file in the format of tests/engine/ops/test_shape_oracle.py, replayed by
    tests/engine/ops/test_oracle_hvx.py without QEMU."""
    import gzip
    cases = cases_of(op, n, seed)
    results = HvxOracle().run_many([(op, c.inputs, c.outs, c.padding, c.def_max) for c in cases])
    kept, exact = [], 0
    for case, c in zip(cases, results):
        if not c.ok and c.kind != "error":
            continue
        h = hexscope(op, case)
        diffs = [d for d in compare(c, h, **HVX_CAMPAIGNS[op].compare_kw)
                 if not d.startswith("[note]")]
        exact += not diffs
        dm = case.def_max or [(1, 1, 1, max(1, cap // s)) for (_, cap), s in
                              zip(case.outs, case.elsizes())]
        entry = {"desc": case.desc, "padding": case.padding, "ok": c.ok,
                 "inputs": [_spec(t) for t in case.inputs],
                 "def_max": [list(d) for d in dm][:len(case.outs)], "elsizes": case.elsizes()}
        if diffs:               # a difference docs/oracle-hvx.md explains
            entry["known"] = diffs[0][:200]
        if c.ok:
            entry["outs"] = [_out_spec(o) for o in c.outs]
        else:
            entry["error"] = c.error.split(": ", 1)[-1][:200]
        kept.append(entry)
    doc = {"op": op, "source": "nnlib's HVX build under qemu-hexagon (tests/oracle/hvx), "
           "campaigns_hvx.py export", "seed": seed, "cases": kept}
    with open(path, "wb") as f:
        f.write(gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), mtime=0))
    return {"op": op, "kept": len(kept), "exact": exact}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["run", "export"])
    ap.add_argument("op")
    ap.add_argument("rest", nargs="*")
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--x86", action="store_true")
    ap.add_argument("--show", type=int, default=3)
    a = ap.parse_args()
    if a.cmd == "run":
        print(json.dumps(run(a.op, a.n, a.seed, a.x86, a.show), indent=1, default=str))
    else:
        print(export(a.op, int(a.rest[0]), a.seed, a.rest[1]))


if __name__ == "__main__":
    main()
