"""The interface every backend implements: the simulated HVX now, the connected DSP later."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from hexscope.engine.nodes import Node
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import OpSpec
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.prepare import Prepared


class Backend(Protocol):
    """Runs one node at a time; the session owns order, state, breakpoints and the trace."""

    name: str

    def prepare(self, prepared: Prepared) -> None: ...

    def run_node(self, node: Node, spec: OpSpec, inputs: Sequence[Tensor],
                 ctx: KernelContext) -> Sequence[Tensor | np.ndarray]: ...

    def close(self) -> None: ...
