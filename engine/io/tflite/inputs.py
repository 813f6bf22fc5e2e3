"""Inputs of a graph imported from TFLite: the model's input codes as they are, or float32
values quantized with the input's scale and zero point, as TFLite's QUANTIZE would
(``round(x / scale) + zero_point``, rounding half away from zero, clamped to the type)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import InputError
from hexscope.engine.graph import Graph
from hexscope.engine.tensor import Tensor


def quantize(values: np.ndarray, dtype: str, scale: float, zero_point: float) -> np.ndarray:
    info = np.iinfo(np.dtype(dtype))
    q = np.asarray(values, np.float32) / np.float32(scale)
    rounded = np.sign(q) * np.floor(np.abs(q) + np.float32(0.5))
    return np.clip(rounded + zero_point, info.min, info.max).astype(dtype)


def model_inputs(graph: Graph, tensors: Sequence[Tensor]) -> list[Tensor]:
    """``tensors`` for a graph imported from TFLite: float32 ones quantized, codes checked
    against the model's input type; other graphs' inputs pass unchanged."""
    meta = graph.meta.get("tflite")
    if not isinstance(meta, dict):
        return list(tensors)
    quant = meta.get("input_quant", [])
    names = meta.get("inputs", [])
    out = []
    for k, tensor in enumerate(tensors):
        if k >= len(quant):
            out.append(tensor)
            continue
        dtype, scale, zp = quant[k]
        arr = tensor.array
        if arr.dtype == np.float32 and dtype in ("int8", "uint8"):
            arr = quantize(arr, dtype, scale, zp)
        elif arr.dtype != np.dtype(dtype):
            raise InputError(f"input {k} '{names[k] if k < len(names) else k}': the model takes "
                             f"{dtype} codes (or float32 values to quantize), got {arr.dtype}")
        # TFLite's int8 tensors are quantized: qint8, as Quantized_CastInt8ToUInt8 reads them
        out.append(Tensor.from_array(arr, DType.QINT8 if arr.dtype == np.int8 else None))
    return out


__all__ = ["model_inputs", "quantize"]
