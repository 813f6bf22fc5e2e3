"""The simulated HVX: runs each op's numpy kernel from the registry."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.errors import NotSimulatedError
from hexscope.engine.nodes import Node
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY, OpSpec
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.prepare import Prepared


def _uses_gemm(spec: OpSpec | None) -> bool:
    module = sys.modules.get(getattr(spec.kernel, "__module__", "")) if spec else None
    # the convolution's module holds gemm; the Supernode's (and a plugin's) its conv_sums
    return module is not None and (hasattr(module, "gemm") or hasattr(module, "conv_sums"))


def _uses_compiled(spec: OpSpec | None) -> bool:
    module = sys.modules.get(getattr(spec.kernel, "__module__", "")) if spec else None
    return module is not None and hasattr(module, "compiled")


class SimBackend:
    name = "sim"
    runs_graph = False

    def prepare(self, prepared: Prepared) -> None:
        # The integer GEMM kernel compiles on first use (a few hundred ms): do it here, so a
        # run's first convolution is not charged with it. An op needs it when its kernel's
        # module uses the GEMM (conv, matmul, and any plugin built on them).
        # Likewise numba's elementwise kernels (engine/ops/kernels/compiled.py).
        specs = [REGISTRY.get(op) for op in {node.op for node in prepared.nodes.values()}
                 if op in REGISTRY]
        if any(_uses_gemm(spec) for spec in specs):
            from hexscope.engine.ops.kernels import igemm

            igemm.available()
        if any(_uses_compiled(spec) for spec in specs):
            from hexscope.engine.ops.kernels import compiled

            compiled.load()

    def run_node(self, node: Node, spec: OpSpec, inputs: Sequence[Tensor],
                 ctx: KernelContext) -> Sequence[Tensor | np.ndarray]:
        if spec.kernel is None:
            raise NotSimulatedError(f"{spec.name} is not simulated yet")
        return spec.kernel(ctx, *inputs)

    def close(self) -> None:
        pass
