"""Session: stepping order and events, breakpoints, run_to, restart, re-run after an edit,
failures that name the node, node state across runs (issue 2; graph spec §2.5, §2.13)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import (
    BreakpointHit,
    Graph,
    GraphError,
    LogLine,
    NodeError,
    NodeFailed,
    NodeFinished,
    NodeStarted,
    NodeStatus,
    RunFinished,
    RunStatus,
    Session,
)
from hexscope.engine.backends import FakeBackend, SimBackend
from hexscope.engine.dtypes import DType
from hexscope.engine.executor import CancelToken
from hexscope.engine.nodes import Padding
from hexscope.engine.tensor import Tensor, is_frozen
from support.conv_graph import append_conv_consts
from support.ref_conv import ref_conv
from support.supernode_graphs import d32_snode_chain
from support.toy_ops import make_registry

REG = make_registry()
X = np.arange(6, dtype=np.float32)


class CountingBackend(SimBackend):
    def __init__(self) -> None:
        self.calls: list[int] = []

    def run_node(self, node, spec, inputs, ctx):
        self.calls.append(node.node_id)
        return super().run_node(node, spec, inputs, ctx)


def test_execute_returns_output_tensors(chain_graph):
    s = Session(chain_graph)
    (out,) = s.execute([X])
    assert np.array_equal(out.array.reshape(-1), X)
    assert s.output(0x102, 0).shape == (1, 1, 1, 6)
    assert all(s.status(i) is NodeStatus.DONE for i in s.plan)


def test_step_order_and_events(chain_graph):
    s = Session(chain_graph)
    seen = []
    s.events.connect(seen.append)
    s.set_inputs([X])
    assert s.next_node == 0x100
    for _ in range(3):
        s.step()
    assert [type(e) for e in seen] == [NodeStarted, NodeFinished] * 3
    assert [e.node_id for e in seen if isinstance(e, NodeStarted)] == [0x100, 0x101, 0x102]
    assert seen[2].index == 1 and seen[2].total == 5
    assert s.next_node == 0x103
    assert s.status(0x103) is NodeStatus.PENDING
    s.step(), s.step()
    assert s.step() is None and s.next_node is None


def test_breakpoint_stops_before_the_node_and_continue_passes_it(chain_graph):
    s = Session(chain_graph)
    s.set_inputs([X])
    s.breakpoints.add(0x102)
    seen = []
    s.events.connect(seen.append)
    finished = s.run()
    assert finished.status is RunStatus.PAUSED and finished.next_node == 0x102
    assert isinstance(seen[-2], BreakpointHit) and seen[-2].node_id == 0x102
    assert s.status(0x102) is NodeStatus.PENDING and s.status(0x101) is NodeStatus.DONE
    assert s.run().status is RunStatus.FINISHED


def test_run_to_stops_after_the_target(chain_graph):
    s = Session(chain_graph)
    s.set_inputs([X])
    finished = s.run_to(0x101)
    assert finished.status is RunStatus.PAUSED and s.next_node == 0x102
    assert s.output(0x101, 0).shape == (1, 1, 1, 6)
    with pytest.raises(GraphError, match="not part of the prepared graph"):
        s.run_to(0x999)


def test_restart_forgets_results(chain_graph):
    s = Session(chain_graph)
    s.execute([X])
    s.restart()
    assert s.next_node == 0x100 and s.result(0x101) is None
    with pytest.raises(GraphError, match="has not run"):
        s.output(0x101)


def test_cancel_stops_between_nodes(chain_graph):
    s = Session(chain_graph)
    s.set_inputs([X])
    token = CancelToken()
    s.step()
    token.cancel()
    assert s.run(cancel=token).status is RunStatus.PAUSED
    assert s.next_node == 0x101


def rerun_graph() -> Graph:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x11, "Nop", inputs=[(0x10, 0)], outputs=1)
    g.append_const_node(0x12, np.array([1.0, 2.0], np.float32))
    g.append_node(0x13, "Nop", inputs=[(0x12, 0)], outputs=1)
    g.append_node(0x14, "Nop", inputs=[(0x13, 0)], outputs=1)
    g.append_node(0x15, "OUTPUT", inputs=[(0x11, 0), (0x14, 0)])
    return g


def test_rerun_after_edit_runs_only_downstream_nodes():
    g = rerun_graph()
    backend = CountingBackend()
    s = Session(g, backend)
    s.execute([X])
    assert backend.calls == [0x10, 0x11, 0x13, 0x14, 0x15]
    backend.calls.clear()
    g.set_const(0x12, np.array([5.0, 6.0, 7.0], np.float32))
    assert s.status(0x13) is NodeStatus.DONE            # staleness shows after re-prepare
    finished = s.run()
    assert finished.status is RunStatus.FINISHED
    assert backend.calls == [0x13, 0x14, 0x15]
    assert s.output(0x14).array.reshape(-1).tolist() == [5.0, 6.0, 7.0]
    assert s.output(0x11).array.reshape(-1).tolist() == X.tolist()


def test_moves_and_labels_rerun_nothing():
    g = rerun_graph()
    backend = CountingBackend()
    s = Session(g, backend)
    s.execute([X])
    backend.calls.clear()
    g.move({0x13: (5.0, 5.0)})
    g.set_label(0x13, "renamed")
    assert s.run().status is RunStatus.FINISHED and backend.calls == []
    g.apply(g.set_label(0x13, "again").inverse())      # an undo is just as cosmetic
    g.set_padding(0x13, "SAME")                          # but a padding change is not
    s.run()
    assert backend.calls == [0x13, 0x14, 0x15]


def test_stale_nodes_are_reported_before_they_rerun():
    g = rerun_graph()
    s = Session(g)
    s.execute([X])
    g.set_padding(0x13, "VALID")
    s.step()                          # re-prepares; runs the first stale node
    assert s.status(0x13) is NodeStatus.DONE
    assert s.status(0x14) is NodeStatus.STALE
    assert s.status(0x11) is NodeStatus.DONE


def test_failing_node_names_itself_and_keeps_earlier_results(chain_graph):
    s = Session(chain_graph, FakeBackend(fail={0x102: "boom"}))
    with pytest.raises(NodeError, match=r"node 0x102 \(Nop\): boom") as info:
        s.execute([X])
    assert info.value.node_id == 0x102
    assert s.status(0x102) is NodeStatus.FAILED and s.status(0x101) is NodeStatus.DONE
    assert s.next_node == 0x102
    assert any("0x102" in line.text and line.level == 0 for line in s.log.lines)


def test_log_lines_reach_listeners(chain_graph):
    s = Session(chain_graph, FakeBackend(fail={0x101: "bad shape"}))
    seen = []
    s.events.connect(seen.append)
    s.set_inputs([X])
    s.run()
    lines = [e for e in seen if isinstance(e, LogLine)]
    assert lines and lines[0].node_id == 0x101 and lines[0].level == 0
    assert "bad shape" in lines[0].text


def test_failure_event_and_run_status(chain_graph):
    s = Session(chain_graph, FakeBackend(fail={0x101: "bad shape"}))
    s.set_inputs([X])
    seen = []
    s.events.connect(seen.append)
    finished = s.run()
    assert finished.status is RunStatus.FAILED and finished.failed_node == 0x101
    assert [type(e) for e in seen][-2:] == [NodeFailed, RunFinished]


def test_op_without_kernel_is_not_simulated():
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_node(2, "Unsimulated", inputs=[(1, 0)], outputs=1)
    g.append_node(3, "OUTPUT", inputs=[(2, 0)])
    with pytest.raises(NodeError, match="Unsimulated is not simulated yet"):
        Session(g, registry=REG).execute([X])


def test_input_count_must_match_input_node(chain_graph):
    with pytest.raises(NodeError, match="Expected 1, got 2 inputs"):
        Session(chain_graph).execute([X, X])


def test_kernel_bugs_become_node_failures():
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_node(2, "Buggy", inputs=[(1, 0)], outputs=2)
    g.append_node(3, "OUTPUT", inputs=[(2, 0)])
    s = Session(g, registry=REG)
    with pytest.raises(NodeError, match="produced 1 outputs, the node declares 2"):
        s.execute([X])
    with pytest.raises(NodeError, match="internal error in the Buggy kernel: ZeroDivision"):
        s.execute([np.zeros(0, np.float32)])


def test_node_state_persists_across_executions_and_restart_restores_it():
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_node(2, "Counter", inputs=[(1, 0)], outputs=1)
    g.append_node(3, "OUTPUT", inputs=[(2, 0)])
    s = Session(g, registry=REG)
    assert s.execute([X])[0].array.item() == 1
    assert s.execute([X])[0].array.item() == 2      # device keeps node state between runs
    s.restart()
    s.run()
    assert s.output(2).array.item() == 2            # restart replays the run from its start
    s.prepare()
    assert s.execute([X])[0].array.item() == 1      # preparing again resets the state
    s.set_inputs([X])                               # new inputs after a finished run:
    s.run()                                         # a new execution, state carries over
    assert s.output(2).array.item() == 2
    s.restart()
    s.step()
    s.set_inputs([X])                               # part-way: that run is rolled back first
    s.run()
    assert s.output(2).array.item() == 2
    s.reset_state()                                 # as a fresh prepare leaves it
    s.run()
    assert s.output(2).array.item() == 1


def test_prepare_removes_dead_nodes_and_fuses_autoquantize():
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_node(2, "Nop", inputs=[(1, 0)], outputs=1)           # dead
    g.append_node(3, "Min_f", inputs=[(1, 0)], outputs=1)
    g.append_node(4, "Max_f", inputs=[(1, 0)], outputs=1)
    g.append_node(5, "Quantize", inputs=[(1, 0), (3, 0), (4, 0)], outputs=3)
    g.append_const_node(6, np.array([1.0], np.float32))
    g.append_node(7, "OUTPUT", inputs=[(5, 0)])
    s = Session(g, backend=FakeBackend(), registry=REG)
    assert s.plan == (1, 5, 7)
    assert s.prepared.nodes[5].op == "AutoQuantize" and s.prepared.nodes[5].inputs == ((1, 0),)
    kinds = {r.node_id: r.kind for r in s.rewrites}
    assert kinds == {5: "replaced", 2: "removed", 3: "fused", 4: "fused", 6: "removed"}
    assert "dead node" in s.prepared.rewrite_of(2).reason


def test_consts_move_first():
    g = rerun_graph()
    s = Session(g)
    assert s.prepared.order[0] == 0x12 and 0x12 not in s.plan


def test_tensor_inputs_over_a_writable_buffer_are_read_afresh_each_run():
    """A Tensor built over the caller's array shares it, and freezing the Tensor's view does
    not stop writes through that array. The session copies such inputs, so the conv's work
    kept between runs (centred 1x1 input, converted filter) never goes stale (§2, §2.13)."""
    rng = np.random.default_rng(1)
    xbuf = rng.integers(0, 256, 3 * 4 * 6, dtype=np.uint8)
    fbuf = rng.integers(0, 256, 3 * 3 * 6 * 2, dtype=np.uint8)
    x_in = Tensor((1, 3, 4, 6), DType.QUINT8, xbuf)
    f_in = Tensor((3, 3, 6, 2), DType.QUINT8, fbuf)
    f1 = np.ascontiguousarray(rng.integers(0, 256, (1, 1, 6, 4), dtype=np.uint8))
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=2)
    append_conv_consts(g)       # zx = 128, zf = 0
    g.append_const_node(0x15, f1)
    for node_id, filt in ((0x30, (0x15, 0)), (0x31, (0x10, 1))):
        g.append_node(node_id, "QuantizedConv2d_8x8to32", inputs=[
            (0x10, 0), filt, (0x11, 0), (0x12, 0), (0x13, 0), (0x12, 0), (0x14, 0)],
            outputs=3, padding="SAME")
    g.append_node(0x40, "OUTPUT", inputs=[(0x30, 0), (0x31, 0)])
    s = Session(g)
    assert not is_frozen(x_in.readonly().raw)            # xbuf itself stays writable
    for run in range(3):
        y1, y3 = s.execute([x_in, f_in])
        x = xbuf.reshape(1, 3, 4, 6)
        assert np.array_equal(y1.array, ref_conv(x, f1, 128, 0, 1, 1, Padding.SAME)), run
        assert np.array_equal(y3.array, ref_conv(x, fbuf.reshape(3, 3, 6, 2), 128, 0, 1, 1,
                                                 Padding.SAME)), run
        (xbuf if run == 0 else fbuf)[:] = 255 - (xbuf if run == 0 else fbuf)


def test_is_frozen_follows_the_chain_of_bases():
    owner = np.arange(8, dtype=np.uint8)
    view = owner.view()
    view.flags.writeable = False
    assert not is_frozen(view)                           # owner can still be written
    owner.flags.writeable = False
    assert is_frozen(view) and is_frozen(owner)
    assert is_frozen(np.frombuffer(b"abcd", np.uint8))   # immutable bytes
    over_bytearray = np.frombuffer(bytearray(4), np.uint8)
    over_bytearray.flags.writeable = False
    assert not is_frozen(over_bytearray)                 # the bytearray can still change


def test_reset_state_keeps_weights_converted_from_consts_but_not_node_state():
    """A batch run resets node state per input set; the weights converted for the GEMM
    (``Shared``, derived from a frozen Const) stay, so they are not packed again per image,
    and the Supernode's widened range (state) still starts afresh."""
    from hexscope.engine.ops.context import Shared
    from support.conv_graph import append_conv_consts

    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    append_conv_consts(g)
    rng = np.random.default_rng(3)
    g.append_const_node(0x15, rng.integers(0, 256, (1, 1, 4, 4), dtype=np.uint8))
    g.append_node(0x20, "QuantizedConv2d_8x8to32", inputs=[(0x10, 0), (0x15, 0), (0x11, 0),
                  (0x12, 0), (0x13, 0), (0x12, 0), (0x14, 0)], outputs=3, padding="SAME")
    g.append_node(0x21, "OUTPUT", inputs=[(0x20, 0)])
    s = Session(g)
    x = rng.integers(0, 256, (1, 3, 3, 4), dtype=np.uint8)
    first = s.execute([x])[0].array.copy()
    shared = {k: v for k, v in s.executor.states[0x20].items() if isinstance(v, Shared)}
    assert shared
    s.executor.states[0x20]["scratch"] = [1]           # ordinary node state
    s.reset_state()
    assert s.executor.states[0x20] == shared           # the same objects, nothing else
    s.set_inputs([x])
    s.run()
    assert np.array_equal(s.output(0x20).array, first)
    assert all(s.executor.states[0x20][k] is v for k, v in shared.items())


def _node_bytes(session: Session, node_id: int) -> list[bytes]:
    return [np.asarray(t.raw).tobytes() for t in session.executor.trace[node_id].outputs]


@pytest.mark.parametrize("how", ["run", "restart", "part-way"])
def test_an_output_range_edit_between_runs_reaches_the_next_run(how):
    """A d32 Supernode builds its output range from out_min/out_max once and keeps it in its
    node state. A run after an edit started from the state the last run began with, the
    edited nodes' included, so the edit had no effect (found by sn27b): the next run, a
    Restart or a run stopped part-way must equal a fresh session's on the edited graph."""
    rng = np.random.default_rng(11)
    g = d32_snode_chain(rng)
    x = rng.integers(0, 256, (1, 6, 7, 8), dtype=np.uint8)
    s = Session(g)
    s.execute([x])
    s.execute([x])
    before = _node_bytes(s, 0x32)
    if how == "part-way":
        s.begin_run()
        s.step()
        s.step()
    g.set_const(0x15, np.array([-2.0], np.float32))     # both nodes' out_min and out_max
    g.set_const(0x16, np.array([3.0], np.float32))
    if how == "restart":
        s.restart()
        s.run()
    else:
        s.execute([x])
    fresh = Session(g)
    fresh.execute([x])
    for node_id in (0x31, 0x32, 0x33):
        assert _node_bytes(s, node_id) == _node_bytes(fresh, node_id), hex(node_id)
    assert _node_bytes(s, 0x32) != before           # the edit shows
