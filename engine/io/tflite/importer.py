"""A .tflite model as the hexagon_nn graph the Hexagon delegate builds for it.

The delegate's steps (``hexagon_delegate_kernel.cc`` ``BuildGraph``): an INPUT node with the
partition's non-constant inputs (int8 ones cast to uint8), every constant input of each
operator as a Const (int8 ones cast), the operator's builder, then the outputs (int8 ones cast
back) into an OUTPUT node. ``graph.meta["tflite"]`` records the model, the operator each node
comes from, the TFLite tensor each node computes, and the refused operators.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from os import PathLike

import numpy as np

from hexscope.engine.errors import GraphFileError
from hexscope.engine.graph import Graph
from hexscope.engine.inputs import InputSource, set_input_sources
from hexscope.engine.io.tflite.conv_builders import (
    build_conv,
    build_fully_connected,
    build_transpose_conv,
)
from hexscope.engine.io.tflite.device_limits import device_refusals
from hexscope.engine.io.tflite.graph_builder import BuiltNode, GraphBuilder, dims4
from hexscope.engine.io.tflite.layout_builders import (
    build_arg_min_max,
    build_mirror_pad,
    build_pack,
    build_slice,
    build_space_to_depth,
    build_split,
    build_transpose,
)
from hexscope.engine.io.tflite.model import TfModel, TfOperator, read_model
from hexscope.engine.io.tflite.shape_builders import (
    build_mean,
    build_pad,
    build_reshape,
    build_resize_bilinear,
    build_resize_nearest,
    build_softmax,
    build_strided_slice,
)
from hexscope.engine.io.tflite.simple_builders import (
    build_activation,
    build_arithmetic,
    build_concat,
    build_hard_swish,
    build_min_max,
    build_pool,
    build_quantize,
)
from hexscope.engine.io.tflite.support import Delegation, Partition, delegation

Builder = Callable[[GraphBuilder, TfOperator, BuiltNode], None]

# op_builder.cc CreateOpBuilderFromTfLiteOp: TFLite builtin -> (hexagon_nn op, builder)
OP_MAP: dict[str, tuple[str, Builder]] = {
    "ADD": ("QuantizedAdd_8p8to8", build_arithmetic),
    "SUB": ("QuantizedSub_8p8to8", build_arithmetic),
    "MUL": ("QuantizedMul_8x8to32", build_arithmetic),
    "AVERAGE_POOL_2D": ("QuantizedAvgPool_8", build_pool),
    "MAX_POOL_2D": ("QuantizedMaxPool_8", build_pool),
    "CONCATENATION": ("QuantizedConcat_8", build_concat),
    "CONV_2D": ("Supernode_8x8p32to8", build_conv),
    "DEPTHWISE_CONV_2D": ("DepthwiseSupernode_8x8p32to8", build_conv),
    "FULLY_CONNECTED": ("QuantizedMatMul_8x8to32", build_fully_connected),
    "RELU": ("QuantizedRelu_8", build_activation),
    "RELU6": ("QuantizedReluX_8", build_activation),
    "TANH": ("QuantizedTanh_8", build_activation),
    "LOGISTIC": ("QuantizedSigmoid_8", build_activation),
    "QUANTIZE": ("Requantize_8to8", build_quantize),
    "RESHAPE": ("Reshape", build_reshape),
    "SOFTMAX": ("QuantizedSoftmax_8", build_softmax),
    "PAD": ("QuantizedPad_8", build_pad),
    "MEAN": ("QuantizedMean_8", build_mean),
    "RESIZE_BILINEAR": ("QuantizedResizeBilinear_8", build_resize_bilinear),
    "RESIZE_NEAREST_NEIGHBOR": ("ResizeNearestNeighbor_8", build_resize_nearest),
    "HARD_SWISH": ("QuantizedHardSwish_8", build_hard_swish),
    "MINIMUM": ("QuantizedMinimum_8", build_min_max),
    "MAXIMUM": ("QuantizedMaximum_8", build_min_max),
    "STRIDED_SLICE": ("QuantizedStridedSlice_8", build_strided_slice),
    "NEG": ("QuantizedNeg_8", build_activation),
    "SPLIT": ("QuantizedSplit_8", build_split),
    "TRANSPOSE": ("Transpose_8", build_transpose),
    "SPACE_TO_DEPTH": ("SpaceToDepth_8", build_space_to_depth),
    "DEPTH_TO_SPACE": ("DepthToSpace_8", build_space_to_depth),
    "L2_NORMALIZATION": ("L2Normalize_8", build_activation),
    "SLICE": ("QuantizedSlice_8", build_slice),
    "PACK": ("QuantizedPack_8", build_pack),
    "MIRROR_PAD": ("MirrorPad_8", build_mirror_pad),
    "ARG_MAX": ("ArgMax_8toInt32", build_arg_min_max),
    "ARG_MIN": ("ArgMin_8", build_arg_min_max),
    "TRANSPOSE_CONV": ("QuantizedTransposeConv2d_8x8p32to8", build_transpose_conv),
}
# mapped by the delegate, not yet built here: named in the error (issue 27)
NOT_BUILT: dict[str, str] = {}
ELEMENT_SIZE = {"uint8": 1, "int8": 1, "int32": 4, "float32": 4, "bool": 1, "int16": 2}


def choose_partition(model: TfModel, d: Delegation, index: int | None = None) -> Partition:
    """The delegated partition (the largest, as the delegate with its default of one), or the
    ``index``-th candidate, largest first, counting those too small for the delegate."""
    candidates = list(d.partitions) + list(d.too_small)
    if not candidates:
        floats = [t for t in model.inputs if model.tensor(t).dtype == "float32"]
        why = (f"it is a float model (input {model.tensor(floats[0]).describe()}): the Hexagon "
               "delegate takes quantized (uint8/int8) models" if floats else
               "the delegate refuses every operator")
        lines = [f"{model.operators[i].describe()}: {r}" for i, r in sorted(d.refused.items())]
        raise GraphFileError(f"{model.path}: nothing to delegate: {why}; "
                             + "; ".join(lines[:5]) + ("; ..." if len(lines) > 5 else ""))
    if index is None:
        return candidates[0]
    if not 0 <= index < len(candidates):
        raise GraphFileError(f"{model.path}: partition {index} does not exist "
                             f"({len(candidates)} candidate(s), 0 is the largest)")
    return candidates[index]


def build_graph(model: TfModel, part: Partition) -> GraphBuilder:
    """The delegate's BuildGraph for one partition."""
    b = GraphBuilder(model)
    inp = b.add_node("INPUT", label="INPUT")
    for k, t in enumerate(part.inputs):
        tensor = model.tensor(t)
        inp.add_output(dims4(tensor.shape), ELEMENT_SIZE.get(tensor.dtype, 1))
        b.tensors[t] = (inp.node_id, k)
        if tensor.dtype == "int8":
            b.cast(tensor, "Quantized_CastInt8ToUInt8")
    for i in part.operators:
        op = model.operators[i]
        for t in op.inputs:
            if t != -1 and model.tensor(t).is_const:
                b.tensor_const(model.tensor(t), model.tensor(t).dtype == "int8")
        if op.code not in OP_MAP:
            hexagon = NOT_BUILT.get(op.code, "?")
            raise GraphFileError(f"{model.path}: {op.describe()}: Hexscope does not build the "
                                 f"delegate's {hexagon} for it yet")
        name, builder = OP_MAP[op.code]
        node = b.add_node(name, op.index)
        try:
            builder(b, op, node)
        except (ValueError, KeyError) as exc:
            raise GraphFileError(f"{model.path}: {op.describe()}: {exc}") from None
    outs = []
    for t in part.outputs:
        if model.tensor(t).dtype == "int8":
            cast = b.cast(model.tensor(t), "Quantized_CastUInt8ToInt8")
            b.tensor_of_output[(cast.node_id, 0)] = t
        outs.append(b.hex_id(t))
    out = b.add_node("OUTPUT", label="OUTPUT")
    out.inputs += outs
    return b


def import_tflite(path: str | PathLike[str], warnings: list[str] | None = None,
                  partition: int | None = None) -> Graph:
    """Read a .tflite model and build the delegated partition's hexagon_nn graph.

    ``warnings`` receives the refused operators and partitions left on the CPU.
    """
    model = read_model(path)
    d = delegation(model)
    part = choose_partition(model, d, partition)
    b = build_graph(model, part)
    graph = b.to_graph()
    graph.meta["tflite"] = {
        "model": os.path.basename(os.fspath(path)),
        "partition": list(part.operators),
        "inputs": [model.tensor(t).name for t in part.inputs],
        "input_quant": [[model.tensor(t).dtype, *_quant(model, t)] for t in part.inputs],
        "op_index": {f"0x{n.node_id:x}": n.tflite_op for n in b.nodes if n.tflite_op >= 0},
        "tensor_of_output": {f"0x{n:x}:{k}": t for (n, k), t in b.tensor_of_output.items()},
        "refused": [[i, model.operators[i].code, r] for i, r in sorted(d.refused.items())],
        # delegated, but nnlib has no kernel for the node built (device_limits.py)
        "device_refused": [[i, model.operators[i].code, r]
                           for i, r in sorted(b.device_refused.items())],
        "operators": [op.code for op in model.operators],
        "tensor_names": {str(t): model.tensor(t).name for t in b.tensor_of_output.values()},
    }
    set_input_sources(graph, [_default_source(model.tensor(t).dtype) for t in part.inputs])
    if warnings is not None:
        warnings.extend(delegation_notes(model, d, part) + b.notes)
    return graph


def _default_source(dtype: str) -> InputSource:
    """Random codes over the whole range of the model's input type."""
    if dtype in ("int8", "uint8"):
        info = np.iinfo(np.dtype(dtype))
        return InputSource("random", dtype=dtype, low=float(info.min), high=float(info.max))
    return InputSource("random", dtype="float32")


def delegation_report(path: str | PathLike[str]) -> list[str]:
    """Each operator of the model: the partition that takes it, or why the delegate refuses
    it, and whether Hexscope builds it (for ``hexscope info``)."""
    model = read_model(path)
    d = delegation(model)
    where: dict[int, str] = {}
    for k, p in enumerate(list(d.partitions) + list(d.too_small)):
        for i in p.operators:
            where[i] = f"partition {k}" + (" (too small for the delegate)"
                                           if p in d.too_small else "")
    device = device_refusals(model, sorted(where))
    lines = [f"tflite {os.path.basename(model.path)}: {len(model.operators)} operators, "
             f"{len(model.operators) - len(d.refused)} supported by the Hexagon delegate, "
             f"{len(d.partitions) + len(d.too_small)} partition(s)"
             + (f", {len(device)} the DSP cannot run" if device else "")]
    for op in model.operators:
        if op.index in d.refused:
            lines.append(f"  {op.describe()}: refused: {d.refused[op.index]}")
            continue
        built = "" if op.code in OP_MAP else (
            f"; Hexscope does not build {NOT_BUILT.get(op.code, op.code)} yet")
        lines.append(f"  {op.describe()}: {where[op.index]}{built}")
        if op.index in device:
            lines.append(f"    the DSP cannot run it: {device[op.index]}")
    return lines


def _quant(model: TfModel, t: int) -> list[float]:
    q = model.tensor(t).quant
    return [q.scale[0], float(q.zero_point[0])] if q else [1.0, 0.0]


def delegation_notes(model: TfModel, d: Delegation, part: Partition) -> list[str]:
    """One line per refused operator and per partition the graph does not hold."""
    notes = [f"{model.operators[i].describe()} stays on the CPU: {r}"
             for i, r in sorted(d.refused.items())]
    for p in list(d.partitions) + list(d.too_small):
        ops = f"operators {p.operators[0]}..{p.operators[-1]}"
        if p is part:
            if p in d.too_small:
                notes.append(f"{ops}: imported, though the delegate leaves a partition of "
                             "fewer than 2 operators on the CPU")
            continue
        notes.append(f"partition {ops} ({len(p.operators)} operators) is not in this graph "
                     "(the delegate takes one partition; choose another with --partition)")
    return notes


__all__ = ["OP_MAP", "build_graph", "choose_partition", "delegation_notes", "delegation_report",
           "import_tflite"]
