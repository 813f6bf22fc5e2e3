"""A scripted backend for executor and controller tests: it can return, fail or stall."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Node
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import OpSpec
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.prepare import Prepared

Script = Sequence[Tensor | np.ndarray] | Callable[[Sequence[Tensor]], Sequence[Tensor]]


class FakeBackend:
    """Returns ``outputs[node_id]`` (or one float32 zero per output), records every call."""

    name = "fake"
    runs_graph = False

    def __init__(self, outputs: dict[int, Script] | None = None,
                 fail: dict[int, str] | None = None) -> None:
        self.outputs = dict(outputs or {})
        self.fail = dict(fail or {})
        self.stall: dict[int, threading.Event] = {}
        self.calls: list[int] = []
        self.prepared: Prepared | None = None
        self.closed = False

    def prepare(self, prepared: Prepared) -> None:
        self.prepared = prepared

    def run_node(self, node: Node, spec: OpSpec, inputs: Sequence[Tensor],
                 ctx: KernelContext) -> Sequence[Tensor | np.ndarray]:
        self.calls.append(node.node_id)
        if node.node_id in self.stall:
            self.stall[node.node_id].wait(timeout=10)
        if node.node_id in self.fail:
            raise KernelError(self.fail[node.node_id])
        script = self.outputs.get(node.node_id)
        if callable(script):
            return script(inputs)
        if script is not None:
            return script
        if node.op == "INPUT":
            return ctx.graph_inputs
        return [np.zeros((1, 1, 1, 1), np.float32) for _ in node.outputs]

    def close(self) -> None:
        self.closed = True
