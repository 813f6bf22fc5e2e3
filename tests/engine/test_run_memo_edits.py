"""What nodes keep between runs (keyed on their frozen range tensors, their layout) never
outlives an edit: a Const edit, a range change or a new input shape between two runs of one
Session gives the bytes a fresh Session gives (issue 25, the executor's speed round)."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph, Session
from hexscope.engine.executor import NodeResult
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor, frozen_refs
from support.delegate_d32_graphs import SHAPE, residual


def _x(shape: tuple[int, ...] = SHAPE, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def _all_bytes(s: Session) -> dict[int, list[tuple]]:
    """Every node's outputs, padding included, with their geometry and warnings."""
    return {i: [(t.shape, t.dtype, t.layout, tuple(t.padding), t.raw.tobytes())
                for t in r.outputs] + [r.warnings]
            for i, r in s.executor.trace.items()}


def _edited_vs_fresh(edit, x_after: np.ndarray | None = None) -> None:
    g = residual()
    s = Session(g)
    assert "Requantize_8to8_d32" in {n.op for n in s.prepared.nodes.values()}
    s.execute([_x()])
    s.execute([_x()])
    edit(g)
    x = _x() if x_after is None else x_after
    s.execute([x])
    fresh = Session(g)
    fresh.execute([x])
    assert _all_bytes(s) == _all_bytes(fresh)


def test_a_requantize_range_const_edit_between_runs_gives_a_fresh_sessions_bytes():
    def edit(g: Graph) -> None:
        g.set_const(0x1C, np.array([-2.0], np.float32))
        g.set_const(0x1D, np.array([2.0 * 127 / 128], np.float32))
    _edited_vs_fresh(edit)


def test_an_upstream_range_edit_between_runs_gives_a_fresh_sessions_bytes():
    # the Supernodes' output range: the add's and the requantize's input ranges move
    def edit(g: Graph) -> None:
        g.set_const(0x18, np.array([-3.0], np.float32))
        g.set_const(0x19, np.array([9.0], np.float32))
    _edited_vs_fresh(edit)


def test_a_new_input_shape_between_runs_gives_a_fresh_sessions_bytes():
    _edited_vs_fresh(lambda g: None, _x((1, 3, 4, 40), seed=1))


def test_frozen_refs_takes_only_tensors_whose_bytes_cannot_change():
    frozen = Tensor.scalar_of(np.array([1.0], np.float32)).readonly()
    writable = Tensor.scalar(2.0)
    assert frozen_refs((frozen, frozen)) == (frozen, frozen)
    assert frozen_refs((frozen, writable)) is None
    assert frozen_refs((Tensor.shape_only((1, 1, 1, 1)),)) is None
    # a read-only view of a writable array can still change through the array
    base = np.zeros(4, np.uint8)
    view = Tensor((1, 1, 1, 1), frozen.dtype, base.view())
    view.readonly()
    assert frozen_refs((view,)) is None


def test_a_range_tensor_written_in_place_between_calls_is_read_again():
    """A writable range tensor is not kept by identity: its new bytes give a new plan."""
    kernel = REGISTRY.get("Requantize_8to8_d32").kernel
    x = _d32_input()
    ranges = [Tensor.scalar(v) for v in (-1.0, 1.0, -4.0, 4.0 * 127 / 128)]
    ctx = KernelContext(node_id=0x20, op="Requantize_8to8_d32")
    first = [t.raw.tobytes() for t in kernel(ctx, x, *ranges)]
    ranges[1].raw.view(np.float32)[0] = 3.0         # x_max, changed in place
    again = [t.raw.tobytes() for t in kernel(ctx, x, *ranges)]
    fresh = [t.raw.tobytes() for t in
             kernel(KernelContext(node_id=0x20, op="Requantize_8to8_d32"), x, *ranges)]
    assert again == fresh != first


def _d32_input() -> Tensor:
    flat = Tensor.from_array(_x((1, 2, 3, 37), seed=2))
    return flat.to_d32().readonly()


def _convert_graph() -> Graph:
    """INPUT → Convert_to_d32 (an out-of-range height padding: logged at level 2 each run)
    → Convert_from_d32 → OUTPUT."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 3, 5, 7), 1)])
    for nid in (0x11, 0x12, 0x13):
        g.append_const_node(nid, np.array([0], np.int32))
    g.append_const_node(0x14, np.array([99], np.int32))
    g.append_node(0x20, "Convert_to_d32",
                  inputs=[(0x10, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x14, 0)],
                  outputs=[OutputDef((1, 3, 5, 7), 1)])
    g.append_node(0x21, "Convert_from_d32", inputs=[(0x20, 0)],
                  outputs=[OutputDef((1, 3, 5, 7), 1)])
    g.append_node(0x50, "OUTPUT", inputs=[(0x21, 0)])
    return g


def test_what_a_run_gives_the_contexts_follows_the_session_between_runs():
    """The fast plan sets the contexts' per-run fields only when they change: a new debug
    level and a new padding fill reach the kernels at the next run."""
    s = Session(_convert_graph())
    x = _x((1, 3, 5, 7))
    s.execute([x])
    s.execute([x])
    assert "height padding" not in s.log.text()
    s.log.debug_level = 2
    s.execute([x])
    assert "height padding" in s.log.text(node_id=0x20)
    s.padding_fill = s.executor.padding_fill = 0x3C
    s.execute([x])
    d32 = s.executor.trace[0x20].outputs[0]
    fresh = Session(_convert_graph(), padding_fill=0x3C)
    fresh.execute([x])
    assert d32.raw.tobytes() == fresh.executor.trace[0x20].outputs[0].raw.tobytes()
    assert 0x3C in d32.raw
    # the plan's results are NodeResults as their constructor makes them
    result = s.result(0x20)
    assert type(result) is NodeResult
    assert result == NodeResult(result.outputs, result.seconds, result.warnings)
    assert hash(result) == hash(NodeResult(result.outputs, result.seconds, result.warnings))


def test_an_add_range_tensor_written_in_place_between_calls_is_read_again():
    """The d32 add keeps its input ranges by the tensors' identity only when frozen."""
    kernel = REGISTRY.get("QuantizedAdd_8p8to8_d32").kernel
    x, y = _d32_input(), _d32_input()
    ranges = [Tensor.scalar(v) for v in (-1.0, 1.0, -2.0, 2.0)]

    def run(ctx: KernelContext) -> list[bytes]:
        return [t.raw.tobytes() for t in kernel(ctx, x, y, *ranges)]

    ctx = KernelContext(node_id=0x20, op="QuantizedAdd_8p8to8_d32")
    first = run(ctx)
    assert run(ctx) == first
    ranges[3].raw.view(np.float32)[0] = 5.0         # y_max, changed in place
    again = run(ctx)
    assert again != first
    # the same history with new tensors at each call (the adaptive output range carries)
    twin = KernelContext(node_id=0x20, op="QuantizedAdd_8p8to8_d32")
    for values in ((-1.0, 1.0, -2.0, 2.0), (-1.0, 1.0, -2.0, 2.0), (-1.0, 1.0, -2.0, 5.0)):
        out = kernel(twin, x, y, *(Tensor.scalar(v) for v in values))
    assert again == [t.raw.tobytes() for t in out]
    # frozen tensors: kept by identity, and new objects of other bits are read
    frozen = [Tensor.scalar_of(np.array([v], np.float32)).readonly()
              for v in (-1.0, 1.0, -2.0, 2.0)]
    ctx = KernelContext(node_id=0x21, op="QuantizedAdd_8p8to8_d32")
    assert [t.raw.tobytes() for t in kernel(ctx, x, y, *frozen)] == first
    assert [t.raw.tobytes() for t in kernel(ctx, x, y, *frozen)] == first
    frozen[3] = Tensor.scalar_of(np.array([5.0], np.float32)).readonly()
    assert [t.raw.tobytes() for t in kernel(ctx, x, y, *frozen)] == again
