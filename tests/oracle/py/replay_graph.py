"""Replay a graph node by node through the C oracle, using Hexscope's dumped tensors.

    replay_graph.py GRAPH.c DUMP_DIR/run-0001 [--generous]

First run `hexscope run GRAPH.c --dump DUMP_DIR`. For every non-Const node, the inputs are
taken from the Const nodes of the imported graph or from the dump of the producer, the
node's op is run in liboracle.so (its `_ref` twin when the plain op has no C path), and the
outputs are compared bit for bit with what Hexscope dumped for that node. The output
capacities are the graph's declared ones (newnode.c's rule), so a declared size that is too
small fails in C as it would on the device (before prepare's fusions); --generous gives every
output 4x its declared capacity instead, to compare the data of such nodes.
"""
from __future__ import annotations

import os
import sys

import numpy as np
from common import Result, T
from oracle import Oracle

from hexscope.engine.dtypes import DType
from hexscope.engine.io.c_import import import_c
from hexscope.engine.ops import REGISTRY
from hexscope.engine.prepare import prepare

_NP2T = {np.dtype(np.uint8): "u8", np.dtype(np.int32): "i32", np.dtype(np.float32): "f32",
         np.dtype(np.int8): "i8"}
_DT = {DType.QUINT8: "u8", DType.UINT8: "u8", DType.INT32: "i32", DType.QINT32: "i32",
       DType.FLOAT32: "f32", DType.QINT8: "i8", DType.INT8: "i8", DType.VOID: "void"}
REF_TWIN = {"Quantize": "Quantize_ref", "AutoQuantize": "AutoQuantize_ref",
            "QuantizedMaxPool_8": "QuantizedMaxPool_8_ref", "QuantizedAvgPool_8": "QuantizedAvgPool_8_ref",
            "QuantizedConcat_8": "QuantizedConcat_8_ref"}


def cap_of(spec, od, k):
    b, h, w, d = od.shape
    if spec.d32_output and not ((b, h, w, d) == (1, 1, 1, 1) and od.elementsize == 4 and k > 0):
        h, w, d = h + 8, (w + 7) & ~3, (d + 31) & ~31
    return (b * h * w * d * od.elementsize + 127) & ~127


def main(path: str, run_dir: str, generous: bool = False) -> int:
    graph = import_c(path)
    prep = prepare(graph)
    oracle = Oracle()
    tensors: dict[tuple[int, int], T] = {}
    for node_id, node in prep.nodes.items():
        if node.is_const:
            t = node.const
            if t.has_data:
                tensors[(node_id, 0)] = T(t.shape, _DT[t.dtype], t.array.copy(), qint32=t.dtype is DType.QINT32)
            else:
                tensors[(node_id, 0)] = T.shape_only(t.shape)
    rows = []
    for node_id in prep.plan:
        node = prep.nodes[node_id]
        if node.is_const:
            continue
        for k in range(len(node.outputs)):
            f = os.path.join(run_dir, f"0x{node_id:x}_{k}.npy")
            if os.path.exists(f):
                a = np.load(f)
                tensors[(node_id, k)] = T(tuple((1,) * (4 - a.ndim) + a.shape), _NP2T.get(a.dtype, "u8"),
                                          a.reshape((1,) * (4 - a.ndim) + a.shape))
        if node.op in ("INPUT", "OUTPUT"):
            continue
        c_op = REF_TWIN.get(node.op, node.op)
        if not oracle.has_op(c_op):
            rows.append((node_id, node.op, "no C op in the oracle", ""))
            continue
        ins = [tensors.get(ref) for ref in node.inputs]
        if any(t is None for t in ins):
            rows.append((node_id, node.op, "input not available", ""))
            continue
        spec = REGISTRY.get(node.op)
        outs = [((tensors[(node_id, k)].dtype if (node_id, k) in tensors else "u8"),
                 cap_of(spec, od, k) * (4 if generous else 1)) for k, od in enumerate(node.outputs)]
        c = oracle.run(c_op, ins, outs, node.padding.name, def_max=[od.shape for od in node.outputs])
        h = Result(True)
        from common import Out
        for k in range(len(node.outputs)):
            t = tensors.get((node_id, k))
            if t is not None:
                h.outs.append(Out(t.shape, t.dtype, t.memory(), None))
        if not c.ok:
            rows.append((node_id, f"{node.op} (C: {c_op})", f"C {c.kind}: {c.error[-160:]}", ""))
            continue
        # compare logical data only (the dump is logical NHWC)
        for o in c.outs:
            o.d32 = None if o.d32 is None else o.d32
        diffs = []
        for k, (co, ho) in enumerate(zip(c.outs, h.outs)):
            co.dtype = ho.dtype     # the C op does not always set the type field (conv ref)
            cl = co.logical()
            hl = ho.logical()
            if cl.shape != hl.shape:
                diffs.append(f"out{k} shape C {cl.shape} H {hl.shape}")
            elif cl.tobytes() != hl.tobytes():
                n = int(np.count_nonzero(cl.reshape(-1).view(np.uint8) != hl.reshape(-1).view(np.uint8)))
                diffs.append(f"out{k}: {n} bytes differ")
        note = f"{c.hexconv[0]} Hexagon-saturated conversions" if c.hexconv[0] else ""
        rows.append((node_id, f"{node.op} (C: {c_op})", "bit-exact" if not diffs else "; ".join(diffs), note))
    for r in rows:
        print(f"0x{r[0]:x}  {r[1]:55s} {r[2]}  {r[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], "--generous" in sys.argv[3:]))
