"""The executor's fast plan: a prepared graph's nodes as a list of ready calls.

A whole run without breakpoints spent about 6 us a node in the executor's own bookkeeping
(looking the node up, building its kernel context, finding each input, emitting events no
one listens to) besides the op's kernel. The plan works all of that out once per prepared
graph, so a run does per node only what its results need: the kernel call, the output check
every run makes, and the trace entry. The stepping executor stays the reference: a run takes
the plan only from a fresh start, and hands back to the stepping loop at a breakpoint, a
cancel or a failure, so these behave exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hexscope.engine.backends.base import Backend
from hexscope.engine.backends.sim import SimBackend
from hexscope.engine.cooperate import paced
from hexscope.engine.log import Log
from hexscope.engine.nodes import Node
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

#: An input as the plan finds it: a Const's tensor, or the (producer id, output index) whose
#: result (or stored Variable value) it reads.
Source = Tensor | tuple[int, int]


@dataclass(slots=True)
class PlanStep:
    """One node of the fast plan."""

    node: Node
    sources: tuple[Source, ...]
    # the op's kernel when the simulator runs it directly; None: through the backend
    kernel: Callable[..., Sequence[Tensor | np.ndarray]] | None
    ctx: KernelContext


def node_context(node: Node, input_ops: tuple[str, ...], log: Log) -> KernelContext:
    """A node's kernel context with the log sinks that name it; the per-run fields (state,
    store, graph inputs, debug level, warnings) are set by whoever runs it."""
    node_id = node.node_id

    def sink(level: int, text: str) -> None:
        log.write(level, text, node_id)

    def warning_sink(text: str) -> None:
        log.write(0, text, node_id, warning=True)

    return KernelContext(node_id=node_id, op=node.op, padding=node.padding,
                         output_defs=node.outputs, input_refs=node.inputs,
                         input_ops=input_ops, log_sink=sink, warning_sink=warning_sink)


def build_plan(plan: Sequence[int], nodes: Mapping[int, Node],
               specs: Mapping[int, object], input_ops: Mapping[int, tuple[str, ...]],
               backend: Backend, log: Log) -> list[PlanStep] | None:
    """The fast plan of a prepared graph, or None when a run must step (an input that is
    neither a Const nor an earlier node's output: the stepping executor names the problem)."""
    direct = type(backend) is SimBackend
    seen: set[int] = set()
    steps = []
    for node_id in paced(plan):
        node = nodes[node_id]
        sources: list[Source] = []
        for src, idx in node.inputs:
            producer = nodes.get(src)
            if producer is not None and producer.is_const and producer.const is not None:
                sources.append(producer.const)
            elif src in seen:
                sources.append((src, idx))
            else:
                return None
        kernel = getattr(specs[node_id], "kernel", None) if direct else None
        steps.append(PlanStep(node, tuple(sources), kernel,
                              node_context(node, input_ops[node_id], log)))
        seen.add(node_id)
    return steps
