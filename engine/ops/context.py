"""What a kernel sees besides its input tensors: the node, its state, the log and the store."""

from __future__ import annotations

import struct
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.tensor import Tensor

#: The byte the simulator writes into output padding that hexagon_nn leaves undefined, so
#: the padding views show which bytes an op never wrote. A session can choose another.
DEFAULT_PADDING_FILL = 0xA5


@dataclass
class KernelContext:
    """Per-call context of a kernel.

    ``state`` is private to the node and lives from prepare to prepare (the adaptive output
    range of the d32 add/sub/mul, §1.9). ``store`` is shared by the graph: Variables keep their
    tensors there under (node id, output index).
    """

    node_id: int
    op: str
    padding: Padding = Padding.NA
    output_defs: tuple[OutputDef, ...] = ()
    input_refs: tuple[tuple[int, int], ...] = ()
    # The op of each input's producer ("Const", "INPUT", "Variable", ...): Assign checks it
    # wires Variables, and Variable zero-initialises from non-Const producers (§4.28-4.29).
    input_ops: tuple[str, ...] = ()
    state: dict[str, object] = field(default_factory=dict)
    store: MutableMapping[tuple[int, int], Tensor] = field(default_factory=dict)
    graph_inputs: tuple[Tensor, ...] = ()
    padding_fill: int = DEFAULT_PADDING_FILL
    seed: int = 0
    debug_level: int = 0
    log_sink: Callable[[int, str], None] | None = None
    # where warn() writes; without it, the log sink at level 0
    warning_sink: Callable[[str], None] | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def n_outputs(self) -> int:
        return len(self.output_defs)

    def log(self, level: int, message: str) -> None:
        """``logmsg``: emitted only when ``level`` <= the debug level (graph spec §5.1)."""
        if level <= self.debug_level and self.log_sink is not None:
            self.log_sink(level, message)

    def warn(self, message: str) -> None:
        """A level-0 message that the node also shows as a warning."""
        self.warnings.append(message)
        if self.warning_sink is not None:
            self.warning_sink(message)
        elif self.log_sink is not None:
            self.log_sink(0, message)

    def rng(self) -> np.random.Generator:
        """A generator seeded from the session seed and the node id (reproducible runs)."""
        return np.random.default_rng([self.seed, self.node_id])


class Shared:
    """A node-state entry that run snapshots share instead of deep-copying.

    The session deep-copies node state at the start of each run, so that a restart can roll
    it back. Derived data that is never mutated (weights converted for the GEMM) would cost
    more to copy than to rebuild; wrapping it in ``Shared`` keeps it out of the copy.
    """

    __slots__ = ("key", "value")

    def __init__(self, key: object, value: object) -> None:
        self.key, self.value = key, value

    def __deepcopy__(self, memo: dict) -> Shared:
        return self


class Kernel(Protocol):
    def __call__(self, ctx: KernelContext, *inputs: Tensor) -> Sequence[Tensor | np.ndarray]: ...


def scalar_f(t: Tensor) -> float:
    """A float parameter: the first 4 bytes read as float (the declared type is ignored)."""
    raw = t.raw
    if raw.size >= 4:       # Tensor.scalar_value's read, inline (~500 calls a MobileNetV2 run)
        return _F32_WORD.unpack_from(raw)[0]  # type: ignore[no-any-return]
    return float(t.scalar_value(float))


_F32_WORD = struct.Struct("<f")


def scalar_i(t: Tensor) -> int:
    """An int parameter: the first 4 bytes read as int32."""
    return int(t.scalar_value(int))


def optional_i(inputs: Sequence[Tensor], index: int, default: int) -> int:
    return scalar_i(inputs[index]) if len(inputs) > index else default


def data_of(t: Tensor, what: str) -> np.ndarray:
    """The logical array of an input that must carry data (not a shape-only const)."""
    if not t.has_data:
        raise KernelError(f"{what} is a shape-only tensor but its data is read")
    return t.array


def flat(array: np.ndarray, dtype: DType | None = None) -> Tensor:
    return Tensor.from_array(array, dtype)


def f32_scalar(value: float) -> Tensor:
    return Tensor.scalar(np.float32(value), DType.FLOAT32)


def require_d32(t: Tensor, what: str = "input 0") -> Tensor:
    if t.layout is not Layout.D32:
        raise KernelError(f"{what} must be a d32 tensor, got {t.describe()}")
    return t


def output_fits(ctx: KernelContext, index: int, needed: int, what: str,
                d32_output: bool = False, reason: str = "out too small") -> None:
    """The device's one policy for output capacity: a result of ``needed`` bytes that does
    not fit output ``index``'s declared ``max_size`` fails the node, naming both sizes.

    hexagon_nn checks it in ``tensor_out_prepare_normal`` / ``tensor_out_prepare_padded_d32``
    (nn_graph_types.h) before it writes; ops report "out too small" or, the d32 ones,
    "failure preparing output". ``d32_output``: the op has the D32_OUTPUT flag, so the
    capacity gets the d32 widening of graph spec §1.4 step 3. No declared size, no check.
    """
    defs = ctx.output_defs
    if index >= len(defs) or not defs[index].max_sizes:
        return
    capacity = defs[index].capacity(d32_output, index)
    if needed > capacity:
        raise capacity_error(index, needed, what, capacity, reason)


def capacity_error(index: int, needed: int, what: str, capacity: int,
                   reason: str = "out too small") -> KernelError:
    """The message of :func:`output_fits` (the executor's final check uses it too)."""
    return KernelError(f"{reason}: output {index} needs {needed} bytes ({what}), but its "
                       f"declared size holds {capacity} bytes")
