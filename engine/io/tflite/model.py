"""A TFLite model as plain values: tensors, operators and their options.

Parsed with the ``tflite`` package (the flatbuffers schema's generated readers), an optional
extra: ``pip install hexscope[tflite]``. Everything past this module sees only the neutral
structure below, never flatbuffers objects.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from os import PathLike

import numpy as np

from hexscope.engine.errors import GraphFileError

EXTRA_MESSAGE = ("reading .tflite files needs the 'tflite' package: "
                 "pip install 'hexscope[tflite]'")

# TFLite's TensorType codes (schema.fbs) -> numpy; the others are named but hold no data here
_DTYPES: dict[int, str] = {0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64",
                           5: "string", 6: "bool", 7: "int16", 9: "int8", 10: "float64",
                           12: "uint64", 15: "uint32", 16: "uint16"}


@dataclass(frozen=True, slots=True)
class Quantization:
    """Affine quantization: one scale and zero point, or one per channel along ``axis``."""

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1



def short_name(name: str) -> str:
    """A tensor name as labels show it: the converter names a fused tensor after every op it
    folded in, joined by ';' ('.../Conv1_relu_1/Relu6;.../bn_Conv1_1/batchnorm/add_1;...',
    hundreds of characters); the first is the op that produced it. ``head…`` when cut; a
    label's trailing ' (Op)' is kept."""
    if ";" not in name:
        return name
    head, tail = name.split(";", 1)[0], ""
    last = name.rsplit(";", 1)[1]
    if name.endswith(")") and " (" in last:
        tail = last[last.rindex(" ("):]
    return f"{head}…{tail}"

@dataclass(frozen=True, slots=True)
class TfTensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    quant: Quantization | None = None
    data: np.ndarray | None = field(default=None, compare=False)

    @property
    def is_const(self) -> bool:
        """A tensor with a buffer (TFLite's kTfLiteMmapRo)."""
        return self.data is not None

    def describe(self) -> str:
        return f"tensor {self.index} '{self.name}' {self.dtype}{list(self.shape)}"


@dataclass(frozen=True, slots=True)
class TfOperator:
    index: int
    code: str                       # BuiltinOperator name: CONV_2D, ADD, ...
    version: int
    inputs: tuple[int, ...]         # -1: an optional input left out
    outputs: tuple[int, ...]
    options: dict[str, object] = field(default_factory=dict, compare=False)

    def describe(self) -> str:
        return f"operator {self.index} {self.code} (v{self.version})"


@dataclass(frozen=True, slots=True)
class TfModel:
    path: str
    tensors: tuple[TfTensor, ...]
    operators: tuple[TfOperator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]

    def tensor(self, index: int) -> TfTensor:
        return self.tensors[index]


def _library():  # type: ignore[no-untyped-def]
    try:
        import tflite
    except ImportError:
        raise GraphFileError(EXTRA_MESSAGE) from None
    return tflite


def read_model(path: str | PathLike[str]) -> TfModel:
    """Read a .tflite file's first subgraph. Bad files raise GraphFileError naming the file."""
    name = os.fspath(path)
    tfl = _library()
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise GraphFileError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise GraphFileError(f"{name}: not a TFLite model (no 'TFL3' file identifier)")
    try:
        return _parse(tfl, name, data)
    except GraphFileError:
        raise
    except Exception as exc:  # flatbuffers reading past the end: struct.error, IndexError...
        raise GraphFileError(f"{name}: damaged or truncated TFLite file "
                             f"({type(exc).__name__}: {exc})") from None


def _parse(tfl, name: str, data: bytes) -> TfModel:  # type: ignore[no-untyped-def]
    model = tfl.Model.GetRootAsModel(data, 0)
    if model.SubgraphsLength() < 1:
        raise GraphFileError(f"{name}: the model has no subgraph")
    graph = model.Subgraphs(0)
    codes = [_op_name(tfl, model.OperatorCodes(i)) for i in range(model.OperatorCodesLength())]
    versions = [model.OperatorCodes(i).Version() for i in range(model.OperatorCodesLength())]
    tensors = tuple(_tensor(model, graph.Tensors(i), i, name)
                    for i in range(graph.TensorsLength()))
    operators = []
    for i in range(graph.OperatorsLength()):
        op = graph.Operators(i)
        k = op.OpcodeIndex()
        if not 0 <= k < len(codes):
            raise GraphFileError(f"{name}: operator {i} names opcode {k}, "
                                 f"the model has {len(codes)}")
        ins = tuple(int(t) for t in op.InputsAsNumpy()) if op.InputsLength() else ()
        outs = tuple(int(t) for t in op.OutputsAsNumpy()) if op.OutputsLength() else ()
        for t in ins + outs:
            if t >= len(tensors) or t < -1:
                raise GraphFileError(f"{name}: operator {i} {codes[k]} refers to tensor {t}, "
                                     f"the model has {len(tensors)}")
        operators.append(TfOperator(i, codes[k], versions[k], ins, outs, _options(tfl, op)))
    inputs = tuple(int(t) for t in graph.InputsAsNumpy()) if graph.InputsLength() else ()
    outputs = tuple(int(t) for t in graph.OutputsAsNumpy()) if graph.OutputsLength() else ()
    return TfModel(name, tensors, tuple(operators), inputs, outputs)


def _op_name(tfl, code) -> str:  # type: ignore[no-untyped-def]
    # TFLite's rule (schema_utils.cc, GetBuiltinCode): the larger of builtin_code and the
    # deprecated byte field (which saturates at 127). The tflite package's BuiltinCode()
    # returns the deprecated field whenever builtin_code is below 127, so a writer that fills
    # builtin_code only (ai-edge-quantizer: QUANTIZE as (114, 0)) read as ADD (0): the raw
    # field is read from the generated table instead.
    value = max(_raw_builtin_code(code), code.DeprecatedBuiltinCode())
    name = tfl.BUILTIN_OPCODE2NAME.get(value)
    if name == "CUSTOM":
        custom = code.CustomCode()
        return f"CUSTOM:{custom.decode() if custom else '?'}"
    return name or f"UNKNOWN_{value}"


def _raw_builtin_code(code) -> int:  # type: ignore[no-untyped-def]
    """OperatorCode.builtin_code as stored (field 4 of the schema, vtable offset 10), 0 when
    absent, as the flatbuffers default."""
    import flatbuffers

    tab = code._tab     # the generated reader's table (every flatbuffers Python class has it)
    o = tab.Offset(10)
    return int(tab.Get(flatbuffers.number_types.Int32Flags, o + tab.Pos)) if o else 0


def _tensor(model, t, index: int, name: str) -> TfTensor:  # type: ignore[no-untyped-def]
    tname = (t.Name() or b"").decode("utf-8", "replace")
    shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
    dtype = _DTYPES.get(t.Type(), f"type{t.Type()}")
    quant = None
    q = t.Quantization()
    if q is not None and q.ScaleLength() > 0:
        zps = tuple(int(z) for z in q.ZeroPointAsNumpy()) if q.ZeroPointLength() else (0,)
        quant = Quantization(tuple(float(s) for s in q.ScaleAsNumpy()), zps,
                             int(q.QuantizedDimension()))
    array = None
    b = t.Buffer()
    if 0 < b < model.BuffersLength():
        buf = model.Buffers(b)
        if buf.DataLength() > 0:
            if dtype not in ("float32", "int32", "uint8", "int8", "int16", "int64", "float16",
                             "bool"):
                raise GraphFileError(f"{name}: tensor {index} '{tname}' has data of type "
                                     f"{dtype}, which hexagon_nn cannot hold")
            raw = buf.DataAsNumpy().tobytes()
            count = int(np.prod(shape)) if shape else 1
            item = np.dtype(dtype).itemsize
            if len(raw) != count * item and t.Sparsity() is not None:
                # TFLite's sparse weights (a DENSIFY operator expands them on the CPU)
                raise GraphFileError(f"{name}: tensor {index} '{tname}' is stored sparse "
                                     f"({len(raw)} bytes for {count} values of {dtype}): "
                                     "Hexscope reads dense tensors only")
            if len(raw) != count * item:
                raise GraphFileError(f"{name}: tensor {index} '{tname}' holds {len(raw)} bytes "
                                     f"for shape {list(shape)} of {dtype} "
                                     f"({count * item} expected)")
            array = np.frombuffer(raw, dtype=dtype).reshape(shape)
            array.flags.writeable = False
    return TfTensor(index, tname, shape, dtype, quant, array)


def _options(tfl, op) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The builtin options table as a dict of its scalar fields (``Padding``, ``StrideW``...)."""
    kind = op.BuiltinOptionsType()
    table = op.BuiltinOptions()
    if not kind or table is None:
        return {}
    names = {v: k for k, v in vars(tfl.BuiltinOptions).items() if isinstance(v, int)}
    cls = getattr(tfl, names.get(kind, ""), None)
    if cls is None:
        return {}
    options = cls()
    options.Init(table.Bytes, table.Pos)
    out: dict[str, object] = {}
    for attr in dir(cls):
        if attr.startswith("_") or attr in ("Init", "GetRootAs") or attr.startswith("GetRootAs"):
            continue
        if attr.endswith(("AsNumpy", "Length", "IsNone", "BufferHasIdentifier")):
            continue
        member = getattr(options, attr)
        if not callable(member):
            continue
        try:
            value = member()
        except TypeError:       # vector accessors take an index: read them as numpy
            as_numpy = getattr(options, attr + "AsNumpy", None)
            array = as_numpy() if as_numpy is not None else 0
            # the generated reader returns 0 for an absent vector
            value = () if isinstance(array, int) else tuple(int(v) for v in array)
        if isinstance(value, bool | int | float):
            out[attr] = value
        elif isinstance(value, tuple):
            out[attr] = value
    return out


__all__ = ["EXTRA_MESSAGE", "Quantization", "TfModel", "TfOperator", "TfTensor", "read_model",
           "short_name"]
