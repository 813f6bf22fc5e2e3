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
    """What the executor calls; the session owns order, state, breakpoints and the trace.

    A backend either runs node by node (``runs_graph = False``: the simulator), or runs the
    graph up to a node and returns the outputs it was asked for ("taps", ``runs_graph =
    True``: hexagon_nn on a device, which runs whole graphs only). Such a backend also has
    ``begin_run()`` (called when the executor starts a run over: forget the last run's
    outputs) and ``set_target(node_id | None)`` (the node a run is heading for, so one
    remote run covers it), and serves ``run_node`` from what its remote runs returned.
    """

    name: str
    runs_graph: bool

    def prepare(self, prepared: Prepared) -> None: ...

    def run_node(self, node: Node, spec: OpSpec, inputs: Sequence[Tensor],
                 ctx: KernelContext) -> Sequence[Tensor | np.ndarray]: ...

    def close(self) -> None: ...
