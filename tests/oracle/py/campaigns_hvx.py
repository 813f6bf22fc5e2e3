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


def _sn8_d32(rng, i):
    from campaigns_sn import _sn_case
    return _d32_out(_d32_in(rng, _sn_case(rng, i), i))


def _dwsn_d32(rng, i):
    """DepthwiseSupernode_8x8p32to8_d32 as the delegate builds it: filter widths 3, 5, 7
    (the others crash nnlib: repro_dwise_width1.py), heights 2..5, strides 1 and 2, SAME and
    VALID, depth multiplier 1, the output ranges of the Supernode campaigns."""
    from campaigns import F, u8
    from campaigns_sn import _out_range, _realistic

    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.conv2d import output_window
    b = int(rng.integers(1, 3))
    c = int(rng.choice([1, 8, 32, 33, 64]))
    fh, fw = int(rng.integers(2, 6)), int(rng.choice([3, 5, 7]))
    s = int(rng.choice([1, 2]))
    pad = ["SAME", "VALID"][i % 2]
    h, w = int(rng.integers(fh, fh + 5)), int(rng.integers(fw, fw + 6))
    x, f = u8(rng, (b, h, w, c)), u8(rng, (fh, fw, c, 1))
    (xl, xh), (fl, fhh), _ = _realistic(rng)
    step = np.float32(np.float32(xh - xl) / 255) * np.float32(np.float32(fhh - fl) / 255)
    bl, bh = float(np.float32(-2.0**31 * step)), float(np.float32(2.0**31 * step))
    bias = rng.integers(-20000, 20000, c).astype(np.int32)
    ol, oh, owhy = _out_range(rng, i // 2 if i % 5 else i)
    ohh = output_window(h, fh, s, Padding.parse(pad)).out
    oww = output_window(w, fw, s, Padding.parse(pad)).out
    dm = (b, max(ohh, 1), max(oww, 1), c)
    ins = [T.of(x, "u8"), T.of(f, "u8"), F(xl), F(xh), F(fl), F(fhh),
           T.shape_only((1, s, s, 1)), T.of(bias.reshape(1, 1, 1, c), "i32"), F(bl), F(bh),
           F(ol), F(oh)]
    case = campaigns.Case(ins, [("u8", 0), ("f32", 128), ("f32", 128)], pad,
                          def_max=[dm, (1, 1, 1, 1), (1, 1, 1, 1)],
                          desc=f"x{(b, h, w, c)} f{(fh, fw)} s{s} {pad} out [{ol},{oh}] ({owhy})")
    return _d32_out(_d32_in(rng, case, i))


campaigns.CAMPAIGNS["hvx:Supernode_8x8p32to8_d32"] = campaigns.Campaign(_sn32_d32)
campaigns.CAMPAIGNS["hvx:Supernode_8x8p8to8_d32"] = campaigns.Campaign(_sn8_d32)
campaigns.CAMPAIGNS["hvx:DepthwiseSupernode_8x8p32to8_d32"] = campaigns.Campaign(_dwsn_d32)
campaigns.CAMPAIGNS["hvx:InputSupernode_8x8p32to8_outd32"] = campaigns.Campaign(_sn32_outd32)
HVX_CAMPAIGNS: dict[str, HvxCampaign] = {
    "Requantize_32to8": HvxCampaign("Requantize_32to8", {}),
    "QuantizedSplit_8_d32": HvxCampaign("QuantizedSplit_8_d32", _D32),
    "DepthToSpace_8_d32": HvxCampaign("DepthToSpace_8_d32", _D32),
    "QuantizedResizeBilinear_8_d32": HvxCampaign("QuantizedResizeBilinear_8_d32", _D32),
    "QuantizedSoftmax_8_d32": HvxCampaign("QuantizedSoftmax_8_d32", _D32),
    "Supernode_8x8p32to8_d32": HvxCampaign("hvx:Supernode_8x8p32to8_d32", _D32),
    "InputSupernode_8x8p32to8_outd32": HvxCampaign("hvx:InputSupernode_8x8p32to8_outd32", _D32),
    "Supernode_8x8p8to8_d32": HvxCampaign("hvx:Supernode_8x8p8to8_d32", _D32),
    "DepthwiseSupernode_8x8p32to8_d32": HvxCampaign("hvx:DepthwiseSupernode_8x8p32to8_d32",
                                                    _D32),
}


def cases_of(op: str, n: int, seed: int) -> list:
    gen = campaigns.CAMPAIGNS[HVX_CAMPAIGNS[op].gen].gen
    rng = np.random.default_rng(seed)
    return [c for c in (gen(rng, i) for i in range(n)) if c is not None]


def hexscope(op: str, case):
    """Hexscope's side; an exception in its kernel is a finding, reported as a failure."""
    from common import Result
    camp = HVX_CAMPAIGNS[op]
    try:
        return hs_exec.run(camp.hs_op or op, case.inputs, len(case.outs), case.padding,
                           def_max=case.def_max, elsizes=case.elsizes(), outs=case.outs)
    except Exception as exc:  # noqa: BLE001 (the finding is the exception itself)
        return Result(False, error=f"EXCEPTION {type(exc).__name__}: {exc}", kind="exception")


def run(op: str, n: int, seed: int, x86: bool, show: int, padding: bool = True) -> dict:
    """Counts of a campaign; ``padding`` False compares the logical values, ranges and
    statuses only (not the d32 padding bytes)."""
    camp = HVX_CAMPAIGNS[op]
    kw = dict(camp.compare_kw, compare_padding=padding and camp.compare_kw.get("compare_padding",
                                                                               False))
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
        diffs = [d for d in compare(c, h, **kw) if not d.startswith("[note]")]
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


def export(op: str, n: int, seed: int, path: str, max_bytes: int = 0) -> dict:
    """Every case the HVX build ran (its outputs, every byte of a d32 memory, or its error) as
    a gzipped golden file in the format of tests/engine/ops/test_shape_oracle.py, replayed by
    tests/engine/ops/test_oracle_hvx.py without QEMU."""
    import gzip
    cases = cases_of(op, 4 * n if max_bytes else n, seed)
    if max_bytes:               # keep the file small: the first n cases under max_bytes
        cases = [c for c in cases
                 if sum(t.memory().nbytes for t in c.inputs) + sum(cap for _, cap in c.outs)
                 <= max_bytes][:n]
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
    ap.add_argument("--no-padding", action="store_true", help="ignore the d32 padding bytes")
    ap.add_argument("--max-bytes", type=int, default=0,
                    help="export: keep cases whose inputs and outputs fit in this many bytes")
    a = ap.parse_args()
    if a.cmd == "run":
        print(json.dumps(run(a.op, a.n, a.seed, a.x86, a.show, not a.no_padding), indent=1,
                         default=str))
    else:
        print(export(a.op, int(a.rest[0]), a.seed, a.rest[1], a.max_bytes))


if __name__ == "__main__":
    main()
