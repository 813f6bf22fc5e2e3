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
from campaigns import CAMPAIGNS, Campaign, Case, F
from common import T


# ---------------------------------------------------------------- Supernode_8x8p32to8
def _bias32(rng, cout, i):
    """int32 bias values: small, realistic, near the int32 limits (saturating), constant."""
    k = i % 5
    if k == 0:
        return rng.integers(-300, 300, cout).astype(np.int32), "small"
    if k == 1:
        return rng.integers(-2**20, 2**20, cout).astype(np.int32), "medium"
    if k == 2:
        return rng.choice(np.array([-2**31, 2**31 - 1, -2**31 + 1, 2**31 - 64], np.int64),
                          cout).astype(np.int32), "near int32 limits"
    if k == 3:
        return np.full(cout, int(rng.integers(-2**31, 2**31)), np.int32), "constant"
    return rng.integers(-2**31, 2**31, cout, dtype=np.int64).astype(np.int32), "any int32"


def _sn32_case(rng, i, small=False):
    """Supernode_8x8p32to8 as the delegate builds it (bias range = +-2**31 x data step x
    filter step, so a bias of 1 is one step of the sums) and with edge ranges; a ChannelScale
    13th input now and then (the flat C ignores it)."""
    from campaigns import qrange, u8
    from campaigns_sn import _out_range, _realistic

    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.conv2d import output_window
    b = int(rng.integers(1, 3))
    big = 1 if small else 2     # the golden file's cases are smaller (a few KB each)
    h, w = int(rng.integers(1, 5 * big + 1)), int(rng.integers(1, 5 * big + 1))
    cin = int(rng.choice([1, 3, 5, 33] if small else [1, 3, 8, 13, 31, 33, 40]))
    cout = int(rng.integers(1, 5 * big + 1))
    fh, fw = int(rng.integers(1, 2 * big + 2)), int(rng.integers(1, 2 * big + 2))
    sh, sw = [(1, 1), (2, 2), (1, 2), (2, 1), (3, 3), (3, 1), (1, 3), (2, 3)][int(rng.integers(0, 8))]
    pad = ["SAME", "VALID", "SAME", "VALID", "SAME_CAFFE", "NA"][i % 6]
    x = u8(rng, (b, h, w, cin)); f = u8(rng, (fh, fw, cin, cout))
    bias, bwhy = _bias32(rng, cout, i // 2)
    if i % 3 == 0:
        (xl, xh), (fl, fhh), _ = _realistic(rng)
        step = np.float32(np.float32(xh - xl) / 255) * np.float32(np.float32(fhh - fl) / 255)
        bl, bh = float(np.float32(-2.0**31 * step)), float(np.float32(2.0**31 * step))
        why = "delegate-like"
    else:
        xl, xh, xw = qrange(rng, i); fl, fhh, fwhy = qrange(rng, i // 3 + 5)
        bl, bh, bw = qrange(rng, i // 7 + 3)
        why = f"x {xw} f {fwhy} b {bw}"
    ol, oh, owhy = _out_range(rng, i // 2 if i % 5 else i)
    ohh = output_window(h, fh, sh, Padding.parse(pad)).out
    oww = output_window(w, fw, sw, Padding.parse(pad)).out
    dm = (b, max(ohh, 1), max(oww, 1), cout)
    ins = [T.of(x, "u8"), T.of(f, "u8"), F(xl), F(xh), F(fl), F(fhh), T.shape_only((1, sh, sw, 1)),
           T.of(bias.reshape(1, 1, 1, cout), "i32"), F(bl), F(bh), F(ol), F(oh)]
    if i % 4 == 1:
        ins.append(T.of(rng.uniform(0.1, 1.0, cout).astype(np.float32).reshape(1, 1, 1, cout), "f32"))
    return Case(ins, [("u8", (int(np.prod(dm)) + 127) & ~127), ("f32", 128), ("f32", 128)], pad,
                def_max=[dm, (1, 1, 1, 1), (1, 1, 1, 1)],
                desc=f"x{(b, h, w, cin)} f{(fh, fw, cin, cout)} s{(sh, sw)} {pad} "
                     f"x[{xl:.6g},{xh:.6g}] f[{fl:.6g},{fhh:.6g}] b[{bl:.6g},{bh:.6g}] ({why}) "
                     f"bias {bwhy} out [{ol},{oh}] ({owhy}){' +scale' if len(ins) == 13 else ''}")


def _sn32_cls(case, c, h, diffs):
    return diffs[0].split(":")[0][:120]


CAMPAIGNS["Supernode_8x8p32to8"] = Campaign(_sn32_case, c_op="Supernode_8x8p32to8_ref",
                                            hs_op="Supernode_8x8p32to8", classify=_sn32_cls)
CAMPAIGNS["Supernode_8x8p32to8_small"] = Campaign(
    lambda rng, i: _sn32_case(rng, i, small=True), c_op="Supernode_8x8p32to8_ref",
    hs_op="Supernode_8x8p32to8", classify=_sn32_cls)
# nnlib's own op: supernode_execute_hvx's checks, then HVX (unavailable here) or the ref
# fallback when out_height <= 3
CAMPAIGNS["Supernode_8x8p32to8_plain"] = Campaign(_sn32_case, c_op="Supernode_8x8p32to8",
                                                  hs_op="Supernode_8x8p32to8", classify=_sn32_cls)


# ---------------------------------------------------------------- QuantizedDepthwiseConv2d
def _dw_case(rng, i, small=False):
    """Depthwise convolutions: depth multipliers 1-3, depths not multiples of 32, filters up
    to 7x7, strides 1-3, every padding mode, ranges with edge cases (zero codes outside
    0..255 among them); the declared output is the C's size, or smaller now and then."""
    from campaigns import qrange, u8

    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.conv.conv2d import output_window
    b = int(rng.integers(1, 3))
    big = 1 if small else 2
    h, w = int(rng.integers(1, 5 * big + 1)), int(rng.integers(1, 5 * big + 1))
    c = int(rng.choice([1, 2, 3, 5, 8] if small else [1, 3, 7, 16, 31, 33, 40]))
    m = int(rng.choice([1, 1, 1, 2, 3]))
    fh, fw = int(rng.integers(1, 3 * big + 2)), int(rng.integers(1, 3 * big + 2))
    sh, sw = [(1, 1), (2, 2), (1, 2), (2, 1), (3, 3), (3, 1), (1, 3)][int(rng.integers(0, 7))]
    pad = ["SAME", "VALID", "SAME", "VALID", "SAME_CAFFE", "NA"][i % 6]
    x = u8(rng, (b, h, w, c)); f = u8(rng, (fh, fw, c, m))
    xl, xh, xw = qrange(rng, i); fl, fhh, fwhy = qrange(rng, i // 3 + 5)
    if rng.random() < 0.3:
        xl, xh, xw = 0.0, 6.0, "relu6"
    oh = output_window(h, fh, sh, Padding.parse(pad)).out
    ow = output_window(w, fw, sw, Padding.parse(pad)).out
    dm = (b, max(oh, 1), max(ow, 1), c * m)
    if i % 11 == 5:
        dm = (1, 1, 1, max(1, (b * oh * ow * c * m) // 2))       # too small: both fail
    cap = (4 * int(np.prod(dm)) + 127) & ~127       # compute_max_size_with_pad rounds up
    return Case([T.of(x, "u8"), T.of(f, "u8"), F(xl), F(xh), F(fl), F(fhh),
                 T.shape_only((1, sh, sw, 1))], [("i32", cap), ("f32", 4), ("f32", 4)], pad,
                def_max=[dm, (1, 1, 1, 1), (1, 1, 1, 1)],
                desc=f"x{(b, h, w, c)} f{(fh, fw, c, m)} s{(sh, sw)} {pad} "
                     f"x[{xl:.6g},{xh:.6g}]({xw}) f[{fl:.6g},{fhh:.6g}]({fwhy})")


CAMPAIGNS["QuantizedDepthwiseConv2d_8x8to32"] = Campaign(
    _dw_case, c_op="QuantizedDepthwiseConv2d_8x8to32_ref", hs_op="QuantizedDepthwiseConv2d_8x8to32")
CAMPAIGNS["QuantizedDepthwiseConv2d_8x8to32_small"] = Campaign(
    lambda rng, i: _dw_case(rng, i, small=True), c_op="QuantizedDepthwiseConv2d_8x8to32_ref",
    hs_op="QuantizedDepthwiseConv2d_8x8to32")


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
