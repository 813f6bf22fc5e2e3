"""Which operators the Hexagon delegate takes, and its partitions.

The rules are those of ``tensorflow/lite/delegates/hexagon/utils.cc`` (``CheckOpVersion`` and
``IsNodeSupportedByHexagon``), restated from reading it; each refusal says why. Partitions follow
the delegate's defaults (``min_nodes_per_partition`` 2, ``max_delegated_partitions`` 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hexscope.engine.io.tflite.model import TfModel, TfOperator
from hexscope.engine.io.tflite.partitions import partition

Q8 = ("uint8", "int8")
ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 0, 1, 2, 3
ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH",
               5: "SIGN_BIT", 6: "SIGMOID"}
PAD_SAME, PAD_VALID = 0, 1
MIN_NODES_PER_PARTITION = 2

# CheckOpVersion: the highest version the delegate accepts (1 for every op not listed)
_V2 = ("ADD", "ARG_MAX", "ARG_MIN", "AVERAGE_POOL_2D", "CONCATENATION", "L2_NORMALIZATION",
       "LOGISTIC", "MAXIMUM", "MAX_POOL_2D", "MEAN", "MINIMUM", "MIRROR_PAD", "MUL", "PACK",
       "PAD", "QUANTIZE", "RELU6", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "SLICE",
       "SOFTMAX", "SPACE_TO_DEPTH", "SPLIT", "STRIDED_SLICE", "SUB", "TANH", "TRANSPOSE",
       "TRANSPOSE_CONV")
MAX_VERSION: dict[str, int] = {**dict.fromkeys(_V2, 2), "CONV_2D": 3, "DEPTHWISE_CONV_2D": 3,
                               "FULLY_CONNECTED": 4}


def _version_refusal(op: TfOperator) -> str | None:
    if op.code == "RELU":
        return None if op.version == 2 else f"version {op.version}: the delegate takes RELU v2"
    top = MAX_VERSION.get(op.code, 1)
    if op.version > top:
        return f"version {op.version}: the delegate takes {op.code} up to v{top}"
    return None


class _Rules:
    """One check per builtin, each returning the reason for a refusal or None."""

    def __init__(self, model: TfModel, op: TfOperator) -> None:
        self.m, self.op, self.o = model, op, op.options

    def types(self, *allowed: tuple[str, ...]) -> str | None:
        # InputsWithCorrectTypes: the input count must match, -1 (optional) is skipped
        if len(self.op.inputs) != len(allowed):
            return f"{len(self.op.inputs)} inputs, the delegate expects {len(allowed)}"
        for i, (t, kinds) in enumerate(zip(self.op.inputs, allowed, strict=True)):
            if t == -1:
                continue
            tensor = self.m.tensor(t)
            if tensor.dtype not in kinds:
                return (f"input {i} {tensor.describe()} is {tensor.dtype}; "
                        f"the delegate takes {' or '.join(kinds)}")
        return None

    def const(self, position: int) -> str | None:
        t = self.op.inputs[position] if position < len(self.op.inputs) else -1
        if t == -1 or not self.m.tensor(t).is_const:
            return f"input {position} must be a constant tensor"
        return None

    def act(self, key: str = "FusedActivationFunction") -> str | None:
        a = int(self.o.get(key, 0))  # type: ignore[call-overload]
        if a not in (ACT_NONE, ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1):
            return f"fused activation {ACTIVATIONS.get(a, a)}: only Relu, Relu6, ReluN1To1"
        return None

    def strides(self) -> str | None:
        if int(self.o.get("StrideH", 1)) > 3 or int(self.o.get("StrideW", 1)) > 3:  # type: ignore[call-overload]
            return f"stride {self.o.get('StrideH')}x{self.o.get('StrideW')}: at most 3"
        return None


def _first(*checks: Callable[[], str | None]) -> str | None:
    for check in checks:
        reason = check()
        if reason:
            return reason
    return None


def _pool(r: _Rules) -> str | None:
    if int(r.o.get("FusedActivationFunction", 0)) != ACT_NONE:  # type: ignore[call-overload]
        return "a fused activation on a pool"
    return r.types(Q8)


def _fully_connected(r: _Rules) -> str | None:
    reason = r.types(Q8, Q8, ("int32",))
    if reason:
        return reason
    bias = r.op.inputs[2]
    if bias != -1 and not r.m.tensor(bias).is_const:
        return "the bias is not constant"
    if r.o.get("KeepNumDims"):
        return "keep_num_dims is set"
    if int(r.o.get("WeightsFormat", 0)) != 0:  # type: ignore[call-overload]
        return "weights format is not the default"
    return r.act()


def _conv(r: _Rules) -> str | None:
    dil = int(r.o.get("DilationHFactor", 1)), int(r.o.get("DilationWFactor", 1))  # type: ignore[call-overload]
    if dil != (1, 1):
        return f"dilation {dil[0]}x{dil[1]}: CONV_2D only without dilation"
    return _first(lambda: r.types(Q8, Q8, ("int32",)), r.act, r.strides)


def _depthwise(r: _Rules) -> str | None:
    reason = r.types(Q8, Q8, ("int32",))
    if reason:
        return reason
    dilated = (int(r.o.get("DilationHFactor", 1)), int(r.o.get("DilationWFactor", 1))) != (1, 1)  # type: ignore[call-overload]
    stride = int(r.o.get("StrideH", 1)), int(r.o.get("StrideW", 1))  # type: ignore[call-overload]
    if dilated and stride != (1, 1):
        return "dilation with a stride other than 1"
    data = r.m.tensor(r.op.inputs[0])
    mult = int(r.o.get("DepthMultiplier", 1))  # type: ignore[call-overload]
    if mult != 1 and (dilated or len(data.shape) != 4 or data.shape[3] != 1):
        return f"depth multiplier {mult} needs an input depth of 1 and no dilation"
    return _first(r.act, r.strides)


def _resize_bilinear(r: _Rules) -> str | None:
    reason = _first(lambda: r.types(Q8, ("int32",)), lambda: r.const(1))
    if reason:
        return reason
    size = r.m.tensor(r.op.inputs[1]).data
    assert size is not None
    if size.size != 2 or size.ravel()[0] >= 66 or size.ravel()[1] >= 66:
        return f"output size {size.ravel().tolist()}: the delegate limits it to 65"
    return None


def _strided_slice(r: _Rules) -> str | None:
    reason = _first(lambda: r.types(Q8, ("int32",), ("int32",), ("int32",)),
                    lambda: r.const(1), lambda: r.const(2), lambda: r.const(3))
    if reason:
        return reason
    if r.o.get("EllipsisMask") or r.o.get("NewAxisMask"):
        return "ellipsis or new-axis mask"
    return None


def _all_8bit(r: _Rules) -> str | None:
    for t in r.op.inputs:
        if r.m.tensor(t).dtype not in Q8:
            return f"input {r.m.tensor(t).describe()} is not 8-bit"
    return None


_CHECKS: dict[str, Callable[[_Rules], str | None]] = {
    "ADD": lambda r: _first(lambda: r.types(Q8, Q8), r.act),
    "MUL": lambda r: _first(lambda: r.types(Q8, Q8), r.act),
    "SUB": lambda r: _first(lambda: r.types(Q8, Q8), r.act),
    "SUM": lambda r: "SUM recomputes its output range on Hexagon (disabled in utils.cc)",
    "MEAN": lambda r: _first(lambda: r.types(Q8, ("int32",)), lambda: r.const(1)),
    "MIRROR_PAD": lambda r: _first(lambda: r.types(Q8, ("int32",)), lambda: r.const(1)),
    "PAD": lambda r: _first(lambda: r.types(Q8, ("int32",)), lambda: r.const(1)),
    "FULLY_CONNECTED": _fully_connected,
    "CONCATENATION": _all_8bit,
    "PACK": _all_8bit,
    "MAX_POOL_2D": _pool,
    "AVERAGE_POOL_2D": _pool,
    "TRANSPOSE_CONV": lambda r: _first(lambda: r.types(("int32",), Q8, Q8), r.strides,
                                       lambda: None if int(r.o.get("Padding", 0)) in (0, 1)  # type: ignore[call-overload]
                                       else "padding neither SAME nor VALID"),
    "CONV_2D": _conv,
    "DEPTHWISE_CONV_2D": _depthwise,
    "RESHAPE": lambda r: (f"{len(r.op.inputs)} inputs (at most 2)" if len(r.op.inputs) > 2
                          else None if r.m.tensor(r.op.inputs[0]).dtype in Q8
                          else "input 0 is not 8-bit"),
    "SOFTMAX": lambda r: r.types(Q8),
    "HARD_SWISH": lambda r: r.types(Q8),
    "RELU": lambda r: r.types(Q8),
    "RELU6": lambda r: r.types(Q8),
    "TANH": lambda r: r.types(Q8),
    "LOGISTIC": lambda r: r.types(Q8),
    "RESIZE_NEAREST_NEIGHBOR": lambda r: _first(lambda: r.types(Q8, ("int32",)),
                                                lambda: r.const(1)),
    "L2_NORMALIZATION": lambda r: _first(lambda: r.types(Q8), lambda: None if int(
        r.o.get("FusedActivationFunction", 0)) == 0 else "a fused activation"),  # type: ignore[call-overload]
    "ARG_MAX": lambda r: r.types(Q8, ("int32",)),
    "ARG_MIN": lambda r: r.types(Q8, ("int32",)),
    "SPLIT": lambda r: _first(lambda: r.types(("int32",), Q8), lambda: r.const(0)),
    "RESIZE_BILINEAR": _resize_bilinear,
    "NEG": lambda r: r.types(Q8),
    "TRANSPOSE": lambda r: r.types(Q8, ("int32",)),
    "SPACE_TO_DEPTH": lambda r: r.types(Q8),
    "DEPTH_TO_SPACE": lambda r: r.types(Q8),
    "QUANTIZE": lambda r: r.types(Q8),
    "MINIMUM": lambda r: r.types(Q8, Q8),
    "MAXIMUM": lambda r: r.types(Q8, Q8),
    "SLICE": lambda r: _first(lambda: r.const(1), lambda: r.const(2),
                              lambda: r.types(Q8, ("int32", "int64"), ("int32", "int64"))),
    "STRIDED_SLICE": _strided_slice,
}


def refusal(model: TfModel, op: TfOperator) -> str | None:
    """Why the delegate refuses ``op`` (None: it takes it)."""
    for t in op.inputs + op.outputs:
        if t != -1 and len(model.tensor(t).shape) > 4:
            tensor = model.tensor(t)
            return f"{tensor.describe()} has {len(tensor.shape)} dimensions (at most 4)"
    check = _CHECKS.get(op.code)
    if check is None:       # said before its version, which would be refused too
        # (SQUARED_DIFFERENCE and RSQRT have builders, but utils.cc takes neither)
        return f"{op.code} is not among the operators the delegate takes"
    return _version_refusal(op) or check(_Rules(model, op))


@dataclass(frozen=True, slots=True)
class Partition:
    """Operators the delegate replaces by one hexagon_nn graph, and the tensors at its edges."""

    operators: tuple[int, ...]
    inputs: tuple[int, ...]       # non-constant tensors read from outside, sorted
    outputs: tuple[int, ...]      # tensors produced here and read outside (or model outputs)


@dataclass(frozen=True, slots=True)
class Delegation:
    refused: dict[int, str]                 # operator index -> reason
    partitions: tuple[Partition, ...]       # every candidate, largest first
    too_small: tuple[Partition, ...]        # below MIN_NODES_PER_PARTITION


def delegation(model: TfModel) -> Delegation:
    """Apply the support rules and partition the model as TFLite does for a delegate
    (``partitions.py``); the delegate keeps partitions of at least two operators and, by
    default, delegates only the largest."""
    refused = {op.index: r for op in model.operators if (r := refusal(model, op)) is not None}
    supported = {op.index for op in model.operators} - set(refused)
    parts = [Partition(tuple(s.operators),
                       tuple(sorted(t for t in s.inputs if not model.tensor(t).is_const)),
                       tuple(sorted(s.outputs)))
             for s in partition(model, supported) if s.delegated]
    parts.sort(key=lambda p: -len(p.operators))
    keep = tuple(p for p in parts if len(p.operators) >= MIN_NODES_PER_PARTITION)
    small = tuple(p for p in parts if len(p.operators) < MIN_NODES_PER_PARTITION)
    return Delegation(refused, keep, small)


__all__ = ["MAX_VERSION", "Delegation", "Partition", "delegation", "refusal"]
