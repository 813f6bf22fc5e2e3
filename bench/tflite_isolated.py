"""Each TFLite operator of a delegated graph on TFLite's own inputs: how far each op kind is
from TFLite when nothing before it differs, and whether it leans one way (docs/tflite.md,
*Is every difference nnlib's arithmetic?*).

The graph is stepped node by node; after every node that computes a TFLite tensor, its
output is compared with TFLite's tensor (in codes of that tensor's scale) and then replaced
by TFLite's codes (on the node's own grid, keeping the node's d32 padding), so the next
operator reads exactly what TFLite's kernel read. Per tensor: the max |A - B|, the mean
signed A - B (a consistent lean shows as a mean near the fraction of codes that differ), and
the fraction of codes that differ; then the same per op kind.

Usage: ``.venv/bin/python bench/tflite_isolated.py MODEL.tflite [--input X.npy]
[--per-tensor]``. Needs ai-edge-litert (the ``tflite`` extra), not TensorFlow.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from hexscope.engine.dtypes import Layout
from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.inputs import model_inputs
from hexscope.engine.io.tflite.model import read_model, short_name
from hexscope.engine.io.tflite.reference import (
    hexscope_reading,
    model_input_arrays,
    run_tflite,
)
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


@dataclass(frozen=True)
class Row:
    node_id: int
    op: str
    tflite_op: str
    tensor: str
    max_abs: float
    mean_signed: float
    differing: float


def _zero_code(session: Session, node_id: int, k: int, zero_point: int, is_int8: bool) -> float:
    """The code of 0.0 for an output read on the TFLite tensor's grid."""
    node = session.prepared.nodes[node_id]
    n = len(node.outputs)
    if is_int8 or n < 3:
        return float(zero_point) + (128 if not is_int8 else 0)
    lo = float(session.output(node_id, n - 2).array.ravel()[0])
    hi = float(session.output(node_id, n - 1).array.ravel()[0])
    return round(-lo / ((hi - lo) / 255.0))


def _with_codes(out: Tensor, codes: np.ndarray) -> Tensor:
    """``out`` with its data replaced by ``codes`` (its d32 padding kept)."""
    new = out.copy()
    if new.layout is Layout.D32:
        p, g = new.padding, new.geometry
        b, h, w, d = new.shape
        padded = new.padded_array()
        padded[:, p.h_before:p.h_before + h, p.w_before:p.w_before + w,
               p.d_before:p.d_before + d] = codes.reshape(new.shape)
        new.memory[...] = padded.reshape(b, g.h_total, g.w_total, g.n_slices, 32) \
            .transpose(0, 1, 3, 2, 4)
    else:
        new.memory[...] = codes.reshape(new.memory.shape)
    return new


def isolated(path: str, inputs: list[np.ndarray] | None = None) -> list[Row]:
    """One row per TFLite tensor a node computes, in run order, each node fed TFLite's
    values (the model's own operators before it forced to TFLite's codes)."""
    graph = import_tflite(path)
    model = read_model(path)
    meta = graph.meta["tflite"]
    ref = run_tflite(path, model_input_arrays(model, inputs))
    by_name = {t.name: t.index for t in model.tensors}
    session = Session(graph)
    session.set_inputs(model_inputs(graph, [Tensor.from_array(ref[by_name[n]])
                                            for n in meta["inputs"]]))
    of = {key: int(t) for key, t in meta["tensor_of_output"].items()}
    rows = []
    while (node_id := session.next_node) is not None:
        session.step()
        node = session.prepared.nodes[node_id]
        for k in range(len(node.outputs)):
            t = of.get(f"0x{node_id:x}:{k}")
            tensor = model.tensor(t) if t is not None else None
            if tensor is None or t not in ref or tensor.quant is None:
                continue
            out = session.output(node_id, k)
            scale, offset = hexscope_reading(session, node_id, k, tensor)
            lsb, zp = float(tensor.quant.scale[0]), tensor.quant.zero_point[0]
            want = (ref[t].astype(np.float64) - zp) * lsb
            if offset is None:
                zero = _zero_code(session, node_id, k, zp, out.array.dtype == np.int8)
                got = (out.array.astype(np.float64).reshape(want.shape) - zero) * scale
                codes = np.round(want / scale + zero)
            else:
                got = offset + out.array.astype(np.float64).reshape(want.shape) * scale
                codes = np.round((want - offset) / scale)
            d = (got - want) / lsb
            op_index = meta["op_index"].get(f"0x{node_id:x}")
            tflite_op = model.operators[int(op_index)].code if op_index is not None else "-"
            rows.append(Row(node_id, node.op, tflite_op, short_name(tensor.name),
                            float(np.abs(d).max()), float(d.mean()),
                            float((np.abs(d) > 0.5).mean())))
            info = np.iinfo(out.array.dtype)
            forced = np.clip(codes, info.min, info.max).astype(out.array.dtype)
            session.executor.store[(node_id, k)] = _with_codes(out, forced)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--input", help="the model's input codes (.npy); default seeded random")
    p.add_argument("--per-tensor", action="store_true", help="one line per TFLite tensor")
    args = p.parse_args(argv)
    rows = isolated(args.model, [np.load(args.input)] if args.input else None)
    if args.per_tensor:
        print(f"{'node':>7} {'op':34} {'tensor':26} {'max':>5} {'mean A-B':>9} {'differ':>7}")
        for r in rows:
            print(f"0x{r.node_id:<5x} {r.op[:34]:34} {r.tensor[:26]:26} {r.max_abs:5.2f} "
                  f"{r.mean_signed:+9.4f} {r.differing:7.2%}")
    kinds: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        kinds[(r.tflite_op, r.op)].append(r)
    print(f"{'TFLite op':18} {'node op':34} {'n':>3} {'max':>5} {'mean A-B':>17} "
          f"{'differ':>15}")
    for (tflite_op, op), rs in kinds.items():
        means = [r.mean_signed for r in rs]
        diff = [r.differing for r in rs]
        print(f"{tflite_op:18} {op[:34]:34} {len(rs):3d} {max(r.max_abs for r in rs):5.2f} "
              f"{min(means):+8.4f}..{max(means):+.4f} {min(diff):6.2%}..{max(diff):.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
