"""QuantizedTransposeConv2d_8x8p32to8 against nnlib's C, node by node of the expansion.

    PYTHONPATH=. python campaigns_tconv.py run -n 300 [--seed 0]
    PYTHONPATH=. python campaigns_tconv.py export OUT.json -n 300 [--seed 0]

nnlib's op has no arithmetic: its prepare (expand_transpose_conv_nodes.c, which needs the
graph framework and HVX copies, so it is not in the oracle) turns it into ordinary ops. Each
case builds a graph with one transpose convolution (as TFLite's delegate does), prepares it
with Hexscope's prepare, and runs every node of the prepared plan through nnlib's C
(QuantizedPad_8, Supernode_8x8p32to8_ref for the fused chain, DepthToSpace_8), each fed
the C outputs of the nodes before (the d32 forms prepare makes run as their flat twin, the
d32 conversions as the identity on the logical values: the d32 forms reach HVX; the
DepthToSpace_8_d32's 5th crop value, the output depth, as C's QuantizedSlice_8 of the flat
op's output); the last node's bytes and
min/max bits are compared with Hexscope's run of the same graph. The filter rework, paddings
and crops are Hexscope's on both sides: they are checked against the exact integer transposed
convolution by tests/engine/test_prepare_transpose_conv.py.

``export`` writes the cases and C's results as the golden file
tests/data/oracle/quantized_transpose_conv2d_8x8p32to8.json, replayed by
tests/engine/ops/test_transpose_conv.py.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from campaigns import u8
from common import T
from oracle import Oracle

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))     # tests/, for support/

from hexscope.engine import Session  # noqa: E402
from hexscope.engine.dtypes import DType  # noqa: E402
from hexscope.engine.prepare import prepare  # noqa: E402
from support.transpose_conv_graph import TC, transpose_conv_graph  # noqa: E402

_DT = {DType.QUINT8: "u8", DType.UINT8: "u8", DType.INT32: "i32", DType.QINT32: "i32",
       DType.FLOAT32: "f32", DType.VOID: "void"}
# the d32 forms prepare makes of the Supernode are HVX only: their flat twin runs (they
# compute its values, docs/oracle-conv.md); the conversions only change the layout
C_NAME = {"Supernode_8x8p32to8": "Supernode_8x8p32to8_ref",
          "Supernode_8x8p32to8_d32": "Supernode_8x8p32to8_ref",
          "InputSupernode_8x8p32to8_outd32": "Supernode_8x8p32to8_ref",
          "QuantizedConv2d_8x8to32": "QuantizedConv2d_8x8to32_ref"}
LAYOUT_ONLY = ("Convert_to_d32", "Convert_from_d32")
STRIDES = [(1, 1), (2, 2), (1, 2), (2, 1), (3, 3), (3, 1), (1, 3), (2, 3), (3, 2), (4, 4)]


def _f32(v: float) -> float:
    return float(np.float32(v))


def draw(rng: np.random.Generator, i: int) -> dict:
    """One case: shapes, strides 1-4, paddings, ranges (crossing or missing zero, tiny,
    degenerate), biases (0 as the delegate gives, small, at the int32 limits) and output
    ranges (fixed, auto +-inf, Relu-like [0, inf))."""
    b = int(rng.integers(1, 3))
    h, w = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    # depths 33 now and then (N = 33 pads to 64 at stride widths 2-4), small otherwise: the
    # golden file stays a few hundred KB
    d = 33 if i % 15 == 7 else int(rng.choice([1, 2, 3, 5]))
    n = 33 if i % 15 == 0 else int(rng.choice([1, 2, 3, 5]))
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = STRIDES[i % len(STRIDES)]
    full_h, full_w = (h - 1) * sh + fh, (w - 1) * sw + fw
    lim_h, lim_w = (fh - 1, fw - 1) if (sh, sw) == (1, 1) else (sh, sw)
    top, left = int(rng.integers(0, lim_h + 1)), int(rng.integers(0, lim_w + 1))
    bottom, right = int(rng.integers(0, lim_h + 1)), int(rng.integers(0, lim_w + 1))
    if i % 7 == 0:                  # TFLite SAME: output = input x stride
        top = bottom = max((h - 1) * sh + fh - h * sh, 0) // 2
        left = right = max((w - 1) * sw + fw - w * sw, 0) // 2
    oh, ow = max(full_h - top - bottom, 1), max(full_w - left - right, 1)
    k = i % 6
    x_range = [(-1.0, 1.0), (0.0, 6.0), (-3.2, 0.0), (-0.01, 0.02), (2.0, 10.0),
               (-64.0, 191.0)][k]
    w_range = [(-1.0, 1.0), (-0.5, 0.25), (0.0, 2.0), (-128.0, 127.0), (-0.003, 0.004),
               (-1.0, -0.5)][(i // 6) % 6]
    kind = (i // 3) % 5
    if kind == 0:
        bias, b_range = np.zeros(n, np.int32), (0.0, 0.0)      # the delegate's zero bias
    else:
        step = (w_range[1] - w_range[0]) / 255 * (x_range[1] - x_range[0]) / 255
        b_range = (_f32(-2.0**31 * step), _f32(2.0**31 * step))
        bias = {1: rng.integers(-300, 300, n), 2: rng.integers(-2**20, 2**20, n),
                3: rng.choice([-2**31, 2**31 - 1], n),
                4: rng.integers(-2**31, 2**31, n, dtype=np.int64)}[kind].astype(np.int32)
    o = i % 4
    out_range = [(-8.0, 8.0), (-np.inf, np.inf), (0.0, np.inf), (-0.5, 0.25)][o]
    return {"x": u8(rng, (b, h, w, d)).tolist(), "w": u8(rng, (n, fh, fw, d)).tolist(),
            "stride": [sh, sw], "pads": [top, bottom, left, right], "out_hw": [oh, ow],
            "x_range": list(x_range), "w_range": list(w_range), "bias": bias.tolist(),
            "bias_range": list(b_range), "out_range": [float(v) for v in out_range]}


def graph_of(case: dict):
    x = np.array(case["x"], np.uint8)
    return transpose_conv_graph(
        x.shape, np.array(case["w"], np.uint8), tuple(case["stride"]), tuple(case["pads"]),
        tuple(case["out_hw"]), bias=np.array(case["bias"], np.int32),
        x_range=tuple(case["x_range"]), w_range=tuple(case["w_range"]),
        bias_range=tuple(case["bias_range"]), out_range=tuple(case["out_range"])), x


def run_c(oracle: Oracle, case: dict) -> dict:
    """The prepared plan run node by node in nnlib's C."""
    g, x = graph_of(case)
    p = prepare(g)
    tensors: dict[tuple[int, int], T] = {(0x10, 0): T.of(x, "u8")}
    for node_id, node in p.nodes.items():
        if node.is_const:
            t = node.const
            tensors[(node_id, 0)] = (T(t.shape, _DT[t.dtype], t.array.copy()) if t.has_data
                                     else T.shape_only(t.shape))
    for node_id in p.plan:
        node = p.nodes[node_id]
        if node.op in ("INPUT", "OUTPUT"):
            continue
        if node.op in LAYOUT_ONLY:
            tensors[(node_id, 0)] = tensors[node.inputs[0]]
            continue
        if node.op == "DepthToSpace_8_d32":
            r = _depth_to_space_flat(oracle, node, tensors)
            if not r.ok:
                return {"ok": False, "error": f"{node.op}: {r.error}"[:200], "kind": r.kind}
            for k, o in enumerate(r.outs):
                tensors[(node_id, k)] = T(o.shape, o.dtype, o.logical().copy())
            continue
        outs = [("u8" if od.elementsize == 1 and k == 0 else
                 "i32" if k == 0 else "f32", _cap(od)) for k, od in enumerate(node.outputs)]
        dmax = [tuple((1, 1, 1, 1)[:4 - len(od.max_sizes)]) + tuple(od.max_sizes)
                for od in node.outputs]
        r = oracle.run(C_NAME.get(node.op, node.op), [tensors[ref] for ref in node.inputs],
                       outs, node.padding.name, def_max=dmax)
        if not r.ok:
            return {"ok": False, "error": f"{node.op}: {r.error}"[:200], "kind": r.kind}
        for k, o in enumerate(r.outs):
            tensors[(node_id, k)] = T(o.shape, o.dtype, o.logical().copy())
    y = tensors[(TC, 0)]
    return {"ok": True, "shape": list(y.shape), "y": y.data.reshape(-1).tolist(),
            "min_bits": _bits(tensors[(TC, 1)].data), "max_bits": _bits(tensors[(TC, 2)].data)}


def _depth_to_space_flat(oracle: Oracle, node, tensors: dict):
    """DepthToSpace_8_d32 as its flat twin in C: DepthToSpace_8 with the 4 side crops, then
    the 5th crop value (the output depth) as QuantizedSlice_8 of the first channels."""
    ins = [tensors[ref] for ref in node.inputs]
    crop = np.asarray(ins[4].data).reshape(-1).astype(np.int32)
    block = np.asarray(ins[1].data).reshape(-1).astype(np.int32)
    od = node.outputs[0]
    b, h, w, d = (1, 1, 1, 1)[:4 - len(od.max_sizes)] + tuple(od.max_sizes)
    full = (b, h, w, ins[0].shape[3] // int(block[0] * block[-1]))     # before the depth crop
    cap = (int(np.prod(full)) + 127) & ~127
    r = oracle.run("DepthToSpace_8", [*ins[:4], T((1, 1, 1, 4), "i32", crop[:4].copy())],
                   [("u8", cap), ("f32", 128), ("f32", 128)], "NA",
                   def_max=[full, (1, 1, 1, 1), (1, 1, 1, 1)])
    if not r.ok or crop.size < 5:
        return r
    y, lo, hi = (T(o.shape, o.dtype, o.logical().copy()) for o in r.outs)
    start = T((1, 1, 1, 1), "i32", np.zeros(1, np.int32))
    size = T((1, 1, 1, 1), "i32", crop[4:5].copy())
    return oracle.run("QuantizedSlice_8", [y, start, size, lo, hi],
                      [("u8", _cap(od)), ("f32", 128), ("f32", 128)], "NA",
                      def_max=[(b, h, w, d), (1, 1, 1, 1), (1, 1, 1, 1)])


def _cap(od) -> int:
    return (int(np.prod(od.max_sizes)) * od.elementsize + 127) & ~127


def _bits(a: np.ndarray) -> int:
    return int(np.asarray(a, np.float32).reshape(-1).view(np.uint32)[0])


def run_hexscope(case: dict) -> dict:
    g, x = graph_of(case)
    try:
        s = Session(g)
        s.execute([x])
        y, lo, hi = (s.output(TC, k).array for k in range(3))
    except Exception as exc:        # a failure is compared with C's
        return {"ok": False, "error": str(exc)[:200]}
    return {"ok": True, "shape": list(y.shape), "y": y.reshape(-1).tolist(),
            "min_bits": _bits(lo), "max_bits": _bits(hi)}


def same(c: dict, h: dict) -> bool:
    if not c["ok"] or not h["ok"]:
        return c["ok"] == h["ok"]
    return all(c[k] == h[k] for k in ("shape", "y", "min_bits", "max_bits"))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["run", "export"])
    ap.add_argument("out", nargs="?")
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    oracle = Oracle()
    rng = np.random.default_rng(args.seed)
    cases, exact, both_fail, diffs = [], 0, 0, []
    for i in range(args.n):
        case = draw(rng, i)
        c, h = run_c(oracle, case), run_hexscope(case)
        if same(c, h):
            exact += 1
            both_fail += not c["ok"]
        else:
            diffs.append((i, c.get("error", ""), h.get("error", ""),
                          case["stride"], case["out_range"]))
        cases.append({**case, "c": c})
    print(f"QuantizedTransposeConv2d_8x8p32to8: {args.n} cases, {exact} exact "
          f"({both_fail} fail on both sides), {len(diffs)} differ")
    for d in diffs[:10]:
        print("  differs:", d)
    if args.cmd == "export":
        Path(args.out).write_text(json.dumps({"op": "QuantizedTransposeConv2d_8x8p32to8",
                                              "seed": args.seed, "cases": cases},
                                             separators=(",", ":")))
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
