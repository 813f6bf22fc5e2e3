"""TFLite's partitioning of a model into node subsets, restated from
``tensorflow/lite/graph_info.cc`` (``PartitionGraphIntoIndependentNodeSubsets``, greedy, as the
interpreter previews a delegate's partitions).

Epoch by epoch, every operator whose inputs are ready joins the current subset if it is of the
subset's kind (delegated or not); the first ready operator sets the kind. Greedy: an operator
joins even when operators before it in the execution order wait for a later subset, so
independent branches gather around a refused operator. Operators with side effects (on
resources: variables, CALL_ONCE) keep their order through a chain of control edges. A
subset's inputs and outputs are sorted tensor indices, as the delegate receives them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hexscope.engine.io.tflite.model import TfModel, TfOperator

NOT_READY, ALWAYS_READY = -1, -2
STATEFUL = frozenset({"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"})
RESOURCE_TYPES = frozenset({"type13", "type14"})      # TFLite's resource and variant


@dataclass
class NodeSubset:
    delegated: bool | None = None
    operators: list[int] = field(default_factory=list)
    inputs: set[int] = field(default_factory=set)
    outputs: set[int] = field(default_factory=set)


def _side_effect(model: TfModel, op: TfOperator) -> bool:
    return op.code in STATEFUL or any(
        t != -1 and model.tensor(t).dtype in RESOURCE_TYPES for t in op.inputs + op.outputs)


def partition(model: TfModel, delegated: set[int]) -> list[NodeSubset]:
    """Every node subset in order, each all delegated or all not."""
    ops = model.operators
    tensor_epoch = [ALWAYS_READY] * len(model.tensors)
    for op in ops:
        for t in op.outputs:
            if t != -1:
                tensor_epoch[t] = NOT_READY
    node_epoch = [NOT_READY] * len(ops)
    waits = [0] * len(ops)        # incoming control edges
    after: dict[int, int] = {}    # the next operator with side effects
    last = -1
    for op in ops:
        if _side_effect(model, op):
            if last != -1:
                after[last] = op.index
                waits[op.index] += 1
            last = op.index
    subsets: list[NodeSubset] = []
    while True:
        subset = NodeSubset()
        subsets.append(subset)
        epoch = len(subsets) - 1
        progress = True
        while progress:
            progress = False
            for op in ops:
                if _join(model, op, subset, epoch, subsets, tensor_epoch, node_epoch, waits,
                         op.index in delegated):
                    progress = True
                    if op.index in after:
                        waits[after[op.index]] -= 1
        if not subset.operators:
            subsets.pop()
            break
    for t in model.outputs:
        if tensor_epoch[t] >= 0:
            subsets[tensor_epoch[t]].outputs.add(t)
    return subsets


def _join(model: TfModel, op: TfOperator, subset: NodeSubset, epoch: int,
          subsets: list[NodeSubset], tensor_epoch: list[int], node_epoch: list[int],
          waits: list[int], kind: bool) -> bool:
    """``UpdateNode``: put ``op`` in the current subset when it is ready and of its kind."""
    if node_epoch[op.index] != NOT_READY or waits[op.index]:
        return False
    if any(t != -1 and tensor_epoch[t] == NOT_READY for t in op.inputs):
        return False
    if subset.delegated is None:
        subset.delegated = kind
    if subset.delegated != kind:
        return False
    node_epoch[op.index] = epoch
    subset.operators.append(op.index)
    for t in op.outputs:
        if t != -1:
            tensor_epoch[t] = epoch
    for t in op.inputs:
        if t == -1 or tensor_epoch[t] == epoch:
            continue
        subset.inputs.add(t)
        if tensor_epoch[t] >= 0:
            subsets[tensor_epoch[t]].outputs.add(t)
    return True


__all__ = ["NodeSubset", "partition"]
