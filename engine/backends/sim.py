"""The simulated HVX: runs each op's numpy kernel from the registry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.errors import NotSimulatedError
from hexscope.engine.nodes import Node
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import OpSpec
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.prepare import Prepared


class SimBackend:
    name = "sim"

    def prepare(self, prepared: Prepared) -> None:
        pass

    def run_node(self, node: Node, spec: OpSpec, inputs: Sequence[Tensor],
                 ctx: KernelContext) -> Sequence[Tensor | np.ndarray]:
        if spec.kernel is None:
            raise NotSimulatedError(f"{spec.name} is not simulated yet")
        return spec.kernel(ctx, *inputs)

    def close(self) -> None:
        pass
