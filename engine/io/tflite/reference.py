"""TFLite's CPU kernels as the reference: the model run by TFLite's interpreter
(``ai-edge-litert``, every intermediate tensor kept), and each TFLite tensor that a Hexscope
node computes compared in LSB of that tensor's scale, first divergence first.

The graph is fed TFLite's own values at the partition's inputs, so a partition deep in the
model is compared alone: what the delegate's graph adds, not what the CPU part before it did.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from os import PathLike

import numpy as np

from hexscope.engine.analysis.diff import OutputDiff
from hexscope.engine.analysis.metrics import error_metrics
from hexscope.engine.errors import BackendError, EngineError, GraphFileError, InputError, NodeError
from hexscope.engine.graph import Graph
from hexscope.engine.io.tflite.float_check import (
    FLOAT_MODES,
    Sides,
    TfliteComparison,
    add_float_reference,
)
from hexscope.engine.io.tflite.inputs import model_inputs, quantize
from hexscope.engine.io.tflite.isolated import execute_isolated
from hexscope.engine.io.tflite.model import (
    EXTRA_MESSAGE,
    TfModel,
    TfTensor,
    read_model,
    short_name,
)
from hexscope.engine.nodes import Node
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


def model_input_arrays(model: TfModel, given: Sequence[np.ndarray] | None,
                       seed: int = 0) -> list[np.ndarray]:
    """The model's inputs: given codes, float32 quantized, or seeded random codes."""
    arrays = []
    for k, t in enumerate(model.inputs):
        tensor = model.tensor(t)
        if given is not None and k < len(given):
            arr = np.asarray(given[k])
            if arr.dtype == np.float32 and tensor.dtype in ("int8", "uint8") and tensor.quant:
                arr = quantize(arr, tensor.dtype, tensor.quant.scale[0],
                               tensor.quant.zero_point[0])
            if arr.dtype != np.dtype(tensor.dtype):
                raise InputError(f"input {k} '{tensor.name}': the model takes {tensor.dtype} "
                                 f"codes (or float32 values), got {arr.dtype}")
            arrays.append(arr.reshape(tensor.shape))
        else:
            info = np.iinfo(np.dtype(tensor.dtype))
            rng = np.random.default_rng(seed + k)
            arrays.append(rng.integers(info.min, info.max, tensor.shape, endpoint=True)
                          .astype(tensor.dtype))
    return arrays


def model_inputs_of_run(graph: Graph, path: str | PathLike[str],
                        fed: Sequence[Tensor | np.ndarray]) -> list[np.ndarray] | None:
    """The model inputs that give the graph's INPUT what ``fed`` gave it: the fed arrays
    themselves when the partition's inputs are the model's inputs (in order); None when it
    starts deeper in the model (TFLite's own values feed it then) or nothing was fed."""
    meta = graph.meta.get("tflite")
    if not isinstance(meta, dict) or not fed:
        return None
    model = read_model(path)
    if meta.get("inputs") != [model.tensor(t).name for t in model.inputs] \
            or len(fed) != len(model.inputs):
        return None
    return [np.asarray(x.array if isinstance(x, Tensor) else x) for x in fed]


def run_tflite(path: str | PathLike[str], inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """Every tensor of one TFLite CPU run (one thread), by tensor index."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise GraphFileError(EXTRA_MESSAGE.replace("the 'tflite' package",
                                                   "ai-edge-litert")) from None
    # TFLite's own builtin kernels: the XNNPACK delegate would take the graph over (its
    # numerics are its own) and hide the intermediate tensors
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # "preserve_all_tensors is for debugging"
            interp = Interpreter(
                model_path=os.fspath(path), num_threads=1,
                experimental_preserve_all_tensors=True,
                experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        interp.allocate_tensors()
        for detail, arr in zip(interp.get_input_details(), inputs, strict=False):
            interp.set_tensor(detail["index"], arr)
        interp.invoke()
    except (RuntimeError, ValueError) as exc:
        # a custom operator TFLite has no kernel for, an op version it lacks: the
        # interpreter's own first line, which names the operator
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise GraphFileError(f"{os.fspath(path)}: TFLite cannot run the model: {first}") \
            from None
    out = {}
    for detail in interp.get_tensor_details():
        if np.dtype(detail["dtype"]).kind not in "iuf":
            continue            # resource and variant tensors: reading one crashes TFLite
        try:
            out[detail["index"]] = np.array(interp.get_tensor(detail["index"]))
        except ValueError:      # tensors without data (optional inputs)
            continue
    return out


def _row(session: Session, model: TfModel, meta: dict, node: Node, k: int, t: int,  # type: ignore[type-arg]
         expected: np.ndarray, tolerance_lsb: float) -> OutputDiff:
    """One node output (A) against the TFLite tensor it computes (B)."""
    tensor = model.tensor(t)
    codes = session.output(node.node_id, k).array
    if tensor.quant is None:        # ARG_MAX's int32 indices: compared as they are
        def values() -> tuple[np.ndarray, np.ndarray]:
            b = expected.astype(np.float64)
            return codes.astype(np.float64).reshape(b.shape), b
        lsb = 1.0
    else:
        read = _hexscope_reader(session, node.node_id, k, tensor)

        def values() -> tuple[np.ndarray, np.ndarray]:
            b = _real(expected, tensor)
            return read(codes).reshape(b.shape), b
        lsb = float(tensor.quant.scale[0])
    a, b = values()
    # A is Hexscope's, as the comparison names it: the divergence line read "TFLite's value
    # vs Hexscope's" under "A: sim   B: TFLite"
    m = error_metrics(a, b, lsb, tolerance_lsb)
    op_index = meta.get("op_index", {}).get(f"0x{node.node_id:x}", "-")
    # the views make A, B and A - B again when the row is shown (codes kept, not floats)
    return OutputDiff(node.node_id, node.op, node.title, k, tuple(b.shape), m, m.beyond > 0,
                      note=f"TFLite tensor {t} '{short_name(tensor.name)}', operator {op_index}",
                      source=values)


def _real(codes: np.ndarray, tensor: TfTensor) -> np.ndarray:
    assert tensor.quant is not None
    zp = np.float64(tensor.quant.zero_point[0])
    return (codes.astype(np.float64) - zp) * np.float64(tensor.quant.scale[0])


def _hexscope_reader(session: Session, node_id: int, k: int,
                     tensor: TfTensor) -> Callable[[np.ndarray], np.ndarray]:
    """How to read a node's output ``k`` as real values (:func:`hexscope_reading`)."""
    scale, offset = hexscope_reading(session, node_id, k, tensor)
    if offset is None:      # on the tensor's grid: its exact scale about its zero code
        zero = np.float64(zero_code(session, node_id, k, tensor))
        return lambda codes: (codes.astype(np.float64) - zero) * np.float64(scale)
    return lambda codes: offset + codes.astype(np.float64) * scale


def hexscope_reading(session: Session, node_id: int, k: int,
                     tensor: TfTensor) -> tuple[float, float | None]:
    """(scale, offset) that read a node's output ``k`` as real values, ``offset`` None when
    it is read on the TFLite tensor's grid: by the node's own min/max outputs (its last two:
    QuantizedSplit_8 has several data outputs first) where it has them, the device's
    meaning, else by the TFLite tensor's quantization (uint8 codes of an int8 tensor are
    its codes + 128)."""
    assert tensor.quant is not None
    node = session.graph.node(node_id)
    dtype = session.output(node_id, k).array.dtype
    n = len(node.outputs)
    scale = float(tensor.quant.scale[0])
    if dtype == np.int8 or n < 3:
        return scale, None
    lo = np.float64(session.output(node_id, n - 2).array.ravel()[0])
    hi = np.float64(session.output(node_id, n - 1).array.ravel()[0])
    if _on_tensor_grid(lo, hi, tensor) is not None:
        return scale, None
    return float((hi - lo) / 255.0), float(lo)


def _sides(session: Session, node_id: int, k: int, tensor: TfTensor,
           expected: np.ndarray) -> Sides:
    """Both sides' codes and how each reads as reals, for the float reference."""
    codes = np.asarray(session.output(node_id, k).array).reshape(expected.shape)
    if tensor.quant is None:            # ARG_MAX's indices
        return Sides(codes, 1.0, 0.0, expected, 1.0, 0.0)
    scale, offset = hexscope_reading(session, node_id, k, tensor)
    if offset is None:
        offset = -zero_code(session, node_id, k, tensor) * scale
    t_scale = float(tensor.quant.scale[0])
    return Sides(codes, scale, offset, expected, t_scale,
                 -float(tensor.quant.zero_point[0]) * t_scale)


def zero_code(session: Session, node_id: int, k: int, tensor: TfTensor) -> float:
    """The code that reads as 0 for an output read on the tensor's grid."""
    assert tensor.quant is not None
    node = session.graph.node(node_id)
    dtype = session.output(node_id, k).array.dtype
    n = len(node.outputs)
    if dtype == np.int8 or n < 3:
        shift = 128 if dtype == np.uint8 and tensor.dtype == "int8" else 0
        return float(tensor.quant.zero_point[0]) + shift
    lo = np.float64(session.output(node_id, n - 2).array.ravel()[0])
    hi = np.float64(session.output(node_id, n - 1).array.ravel()[0])
    zero = _on_tensor_grid(lo, hi, tensor)
    assert zero is not None
    return zero


def _on_tensor_grid(lo: np.float64, hi: np.float64, tensor: TfTensor) -> float | None:
    """The node's zero code when its range is the TFLite tensor's own grid (the delegate's
    float32 min/max of that scale and zero point), else None. On it, the node's codes are read
    with the tensor's exact scale: the float32 rounding of min and max made a one-code
    difference 1.0000001 LSB, beyond a 1 LSB tolerance."""
    if tensor.quant is None or not hi > lo:
        return None
    step, scale = (hi - lo) / 255.0, float(tensor.quant.scale[0])
    zero = -lo / step
    if abs(step - scale) > 1e-5 * scale or abs(zero - round(zero)) > 1e-3:
        return None
    return float(round(zero))


def unrunnable_ops(graph: Graph) -> list[str]:
    """The graph's ops Hexscope cannot simulate: not declared, or declared device-only."""
    ops = {n.op for n in graph}
    return sorted(op for op in ops
                  if op not in REGISTRY or REGISTRY.get(op).kernel is None)


def compare_with_tflite(graph: Graph, path: str | PathLike[str],
                        inputs: Sequence[np.ndarray] | None = None, tolerance_lsb: float = 1.0,
                        backend: str = "sim", seed: int = 0,
                        float_mode: str = "", isolated: bool = False) -> TfliteComparison:
    """Hexscope's run of ``graph`` (imported from the model at ``path``) against TFLite's;
    with ``float_mode`` (accumulated, isolated), each side against the float reference too;
    ``isolated``: each TFLite operator on TFLite's own inputs (:mod:`isolated`)."""
    return compare_backends_with_tflite(graph, path, [backend], inputs, tolerance_lsb,
                                        seed, float_mode, isolated)[0]


def compare_backends_with_tflite(graph: Graph, path: str | PathLike[str],
                                 backends: Sequence[str],
                                 inputs: Sequence[np.ndarray] | None = None,
                                 tolerance_lsb: float = 1.0, seed: int = 0,
                                 float_mode: str = "", isolated: bool = False
                                 ) -> list[TfliteComparison]:
    """The graph run on each of ``backends`` (the simulator, a device: ``dsp://HOST:PORT``),
    each against one TFLite run on the same input: one :class:`Comparison` per backend, in
    order. Where the simulator follows TFLite and the device does not, the device's first
    divergence is the device's own; where both part at the same tensor, the delegate's graph
    does. With ``float_mode``, each run's rows also carry both sides' errors against the
    float reference of that run (``float_check``). ``isolated`` (the simulator only, without
    ``float_mode``): every node after a TFLite tensor's node reads TFLite's value of it, so
    each row is one operator on TFLite's own inputs (:mod:`isolated`).

    Raises
    ------
    GraphFileError
        the graph is not from this model, or has ops Hexscope cannot run, or a node failed on
        the simulator.
    BackendError, NodeError
        a backend other than the simulator could not run the graph (the backend named).
    """
    meta = graph.meta.get("tflite")
    if not isinstance(meta, dict):
        raise GraphFileError(f"{path}: the graph was not imported from a TFLite model")
    model = read_model(path)
    missing = unrunnable_ops(graph)
    if missing:
        raise GraphFileError(f"{os.fspath(path)}: Hexscope cannot run the delegate's graph yet: "
                             f"it needs the hexagon_nn ops {', '.join(missing)} (not simulated)")
    reference = run_tflite(path, model_input_arrays(model, inputs, seed))
    by_name = {t.name: t.index for t in model.tensors}
    feeds = model_inputs(graph, [Tensor.from_array(reference[by_name[name]])
                                 for name in meta.get("inputs", [])])
    if float_mode and float_mode not in FLOAT_MODES:
        raise ValueError(f"unknown float analysis {float_mode!r}")
    if isolated and (float_mode or any(b != "sim" for b in backends)):
        raise GraphFileError("each operator on TFLite's inputs (isolated) is the simulator's "
                             "alone, without the float reference")
    return [_compare_one(graph, path, model, meta, reference, feeds, backend, tolerance_lsb,
                         seed, float_mode, isolated) for backend in backends]


def _compare_one(graph: Graph, path: str | PathLike[str], model: TfModel, meta: dict,  # type: ignore[type-arg]
                 reference: dict[int, np.ndarray], feeds: Sequence[Tensor], backend: str,
                 tolerance_lsb: float, seed: int, float_mode: str,
                 isolated: bool = False) -> TfliteComparison:
    try:
        session = Session(graph, backend, seed=seed)
    except (BackendError, NodeError) as exc:
        raise BackendError(f"{os.fspath(path)} on {backend}: {exc}") from None
    try:
        if isolated:
            failure = execute_isolated(session, list(feeds), model,
                                       meta.get("tensor_of_output", {}), reference)
        else:
            failure = _execute(session, feeds, path, backend)
        result = TfliteComparison("tflite", backend, "TFLite CPU (ai-edge-litert)" + (
            ", each operator on TFLite's inputs" if isolated else ""), tolerance_lsb)
        outputs = meta.get("tensor_of_output", {})
        expected = {}
        left = 0                # TFLite tensors whose node did not run
        for node in graph:
            for k in range(len(node.outputs)):
                t = outputs.get(f"0x{node.node_id:x}:{k}")
                if t is None or int(t) not in reference:
                    continue
                if failure is not None and not _has_run(session, node):
                    left += 1
                    continue
                result.outputs.append(_row(session, model, meta, node, k, int(t),
                                           reference[int(t)], tolerance_lsb))
                expected[(node.node_id, k)] = _sides(session, node.node_id, k,
                                                     model.tensor(int(t)), reference[int(t)])
        if failure is not None:
            result.stopped = _stopped_text(failure, model, meta, len(result.outputs), left)
            result.skipped[failure.node_id] = str(failure)
        if float_mode:
            add_float_reference(result, session, float_mode, expected)
        return result
    finally:
        session.close()


def _has_run(session: Session, node: Node) -> bool:
    return node.is_const or session.result(node.node_id) is not None


def _stopped_text(failure: NodeError, model: TfModel, meta: dict,  # type: ignore[type-arg]
                  compared: int, left: int) -> str:
    """Where the run stopped and why, and what was compared: the verdict of a comparison
    that could not reach the model's output."""
    op_index = meta.get("op_index", {}).get(f"0x{failure.node_id:x}")
    where = ""
    if op_index is not None and 0 <= int(op_index) < len(model.operators):
        op = model.operators[int(op_index)]
        where = f", TFLite {op.describe()}"
        if op.outputs:
            where += f" -> tensor {op.outputs[0]} '{short_name(model.tensor(op.outputs[0]).name)}'"
    return (f"the run stopped at node 0x{failure.node_id:x} ({failure.op}{where}): "
            f"{failure.reason}. Compared the {compared} TFLite tensor(s) before it; "
            f"{left} after it not compared.")


def _execute(session: Session, feeds: Sequence[Tensor], path: str | PathLike[str],
             backend: str) -> NodeError | None:
    """Run; the node that failed on the simulator (its kernel refused: the rows before it are
    still compared), or None. A failure on another backend stays a backend error naming it
    (exit 3 on the command line)."""
    try:
        session.execute(feeds)
    except NodeError as exc:
        if backend == "sim":
            return exc
        raise BackendError(f"{os.fspath(path)} on {backend}: the run failed: {exc}") from None
    except BackendError as exc:
        if backend == "sim":
            raise GraphFileError(f"{os.fspath(path)}: the run failed: {exc}") from None
        raise BackendError(f"{os.fspath(path)} on {backend}: the run failed: {exc}") from None
    except EngineError as exc:
        raise GraphFileError(f"{os.fspath(path)}: the run failed: {exc}") from None
    return None


__all__ = ["compare_backends_with_tflite", "compare_with_tflite", "hexscope_reading",
           "model_input_arrays", "model_inputs_of_run", "run_tflite", "unrunnable_ops",
           "zero_code"]
