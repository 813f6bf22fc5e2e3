"""Node, OutputDef and Padding: the value objects a graph is made of (graph spec §2.3-§2.4)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from hexscope.engine.dtypes import DType, narrow_64bit
from hexscope.engine.tensor import Shape, Tensor

RESERVED_ID_START = 0xF0000000
MAX_NODE_ID = 0xFFFFFFFF


class Padding(Enum):
    """hexagon_nn's padding modes (``NN_PAD_*``); some ops use the field as a mode switch."""

    NA = 0
    SAME = 1
    VALID = 2
    MIRROR_REFLECT = 3
    MIRROR_SYMMETRIC = 4
    SAME_CAFFE = 5

    @classmethod
    def parse(cls, value: str | int | Padding) -> Padding:
        """Accept a member, its value, or a name with or without ``NN_PAD_`` (``ANY`` = NA)."""
        if isinstance(value, Padding):
            return value
        if isinstance(value, int):
            return cls(value)
        name = value.strip().upper().removeprefix("NN_PAD_")
        if name == "ANY":
            return cls.NA
        try:
            return cls[name]
        except KeyError:
            choices = ", ".join(m.name for m in cls)
            raise ValueError(f"unknown padding {value!r}; choose one of {choices}") from None


@dataclass(frozen=True, slots=True)
class OutputDef:
    """An output definition: rank, max sizes and element size (``hexagon_nn_output``)."""

    max_sizes: tuple[int, ...] = (1, 1, 1, 1)
    elementsize: int = 1
    zero_offset: int = 0
    stepsize: float = 0.0

    @property
    def rank(self) -> int:
        return len(self.max_sizes)

    @property
    def shape(self) -> Shape:
        """The 4-D shape from the last four of the first ``rank`` sizes (§1.4 step 2)."""
        dims = tuple(self.max_sizes[-4:])
        return (1,) * (4 - len(dims)) + dims  # type: ignore[return-value]

    def capacity(self, d32_output: bool = False, index: int = 0) -> int:
        """``max_size`` in bytes, including the d32 widening of §1.4 step 3."""
        b, h, w, d = self.shape
        if d32_output and not ((b, h, w, d) == (1, 1, 1, 1) and self.elementsize == 4
                               and index > 0):
            h, w, d = h + 8, (w + 7) // 4 * 4, -(-d // 32) * 32
        size = b * h * w * d * self.elementsize
        return -(-size // 128) * 128

    @classmethod
    def for_tensor(cls, shape: Shape, elementsize: int) -> OutputDef:
        return cls(tuple(shape), elementsize)


@dataclass(frozen=True, slots=True)
class Node:
    """One node: op name, padding, inputs as (source id, output index) and output defs.

    Const nodes carry their tensor in ``const``; it may be shape-only (no data).
    """

    node_id: int
    op: str
    inputs: tuple[tuple[int, int], ...] = ()
    outputs: tuple[OutputDef, ...] = ()
    padding: Padding = Padding.NA
    const: Tensor | None = None
    label: str = ""
    position: tuple[float, float] | None = None
    params: dict[str, object] = field(default_factory=dict, compare=False)

    @property
    def is_const(self) -> bool:
        return self.op == "Const"

    def with_(self, **changes: object) -> Node:
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def title(self) -> str:
        """How messages and views name the node: id in hex, plus its label if any."""
        return f"0x{self.node_id:x}" + (f" '{self.label}'" if self.label else "")


def const_tensor(data: np.ndarray | None, shape: tuple[int, ...] | None = None) -> Tensor:
    """The tensor of a const node: ``data`` padded to 4-D, or a shape-only tensor."""
    if data is None:
        if shape is None:
            raise ValueError("a shape-only const needs a shape")
        return Tensor.shape_only(shape)
    # Scripts write np.array([3.0]) and get float64; hexagon_nn has no 64-bit types.
    arr = narrow_64bit(np.asarray(data))
    if arr.ndim > 4:
        raise ValueError(f"a const has at most 4 dimensions, got shape {arr.shape}")
    tensor = Tensor.from_array(arr, DType.from_numpy(arr.dtype))
    return tensor.readonly()
