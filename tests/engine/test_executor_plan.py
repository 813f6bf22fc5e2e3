"""The executor's fast plan (engine/executor_plan.py): a run from a fresh start gives what
stepping gives, byte for byte, and hands breakpoints, cancels, failures and listened events
back to the stepping loop unchanged."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine import NodeError, NodeFailed, NodeFinished, NodeStarted, RunStatus, Session
from hexscope.engine.events import Emitter
from hexscope.engine.executor import CancelToken, Executor, NodeStatus
from support.large_graph import residual_graph


def _trace_bytes(session: Session) -> list[tuple]:
    rows = []
    for node_id in session.plan:
        result = session.result(node_id)
        assert result is not None
        rows.append((node_id, result.warnings, tuple(
            (t.shape, t.dtype, t.layout, t.padding, t.device_dtype,
             t.raw.tobytes() if t.has_data else None) for t in result.outputs)))
    return rows


def _stepped(session: Session) -> None:
    while session.step() is not None:
        pass


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.integers(1, 3), channels=st.sampled_from([4, 8]), seed=st.integers(0, 999),
       scale=st.floats(0.05, 40.0))
def test_plan_run_equals_stepping(blocks: int, channels: int, seed: int, scale: float) -> None:
    graph = residual_graph(7 + 17 * blocks, channels, seed)
    rng = np.random.default_rng(seed)
    inputs = [[(rng.standard_normal((1, 8, 8, channels)) * scale).astype(np.float32)]
              for _ in range(2)]
    fast, stepped = Session(graph), Session(graph)
    for x in inputs:              # twice: node state carried from a run must agree too
        fast.execute(x)
        stepped.set_inputs(x)
        _stepped(stepped)
        assert _trace_bytes(fast) == _trace_bytes(stepped)
        assert [t.raw.tobytes() for t in fast.graph_outputs()] == \
            [t.raw.tobytes() for t in stepped.graph_outputs()]


def test_plan_skips_the_stepping_executor(monkeypatch) -> None:
    calls = []
    original = Executor.step

    def counting(self):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(self)

    monkeypatch.setattr(Executor, "step", counting)
    session = Session(residual_graph(24))
    session.execute([np.ones((1, 8, 8, 8), np.float32)])
    assert calls == []
    assert all(session.status(i) is NodeStatus.DONE for i in session.plan)


def test_listened_events_are_the_stepping_ones() -> None:
    graph, x = residual_graph(24), [np.ones((1, 8, 8, 8), np.float32)]

    def kinds(run) -> list[tuple]:  # type: ignore[no-untyped-def]
        session, seen = Session(graph), []
        session.events.connect(seen.append)
        run(session)
        return [(type(e).__name__, getattr(e, "node_id", None)) for e in seen
                if isinstance(e, (NodeStarted, NodeFinished))]

    def step_all(session: Session) -> None:
        session.set_inputs(x)
        _stepped(session)

    assert kinds(lambda s: s.execute(x)) == kinds(step_all)
    assert len(kinds(lambda s: s.execute(x))) == 2 * len(Session(graph).plan)


def test_emitter_listened_looks_through_forwarding() -> None:
    inner, outer = Emitter(), Emitter()
    inner.connect(outer.emit)
    assert not inner.listened()
    outer.connect(print)
    assert inner.listened()


def test_breakpoint_and_cancel_stop_where_stepping_stops() -> None:
    session = Session(residual_graph(24))
    session.set_inputs([np.ones((1, 8, 8, 8), np.float32)])
    target = session.plan[5]
    session.breakpoints.add(target)
    session.breakpoints.add(session.plan[0])      # the first node never stops
    finished = session.run()
    assert finished.status is RunStatus.PAUSED and finished.next_node == target
    assert session.status(target) is NodeStatus.PENDING
    assert all(session.status(i) is NodeStatus.DONE for i in session.plan[:5])
    assert session.run().status is RunStatus.FINISHED
    token = CancelToken()
    token.cancel()
    session.breakpoints.clear()
    session.restart()
    assert session.run(cancel=token).status is RunStatus.PAUSED
    assert session.next_node == session.plan[0]


def test_failure_names_the_node_as_stepping_does() -> None:
    graph = residual_graph(24)
    bad = [np.ones((1, 8, 8, 4), np.float32)]   # 4 channels into 8-deep filters
    messages = []
    for run in ("execute", "step"):
        session = Session(graph)
        if run == "execute":
            try:
                session.execute(bad)
            except NodeError as exc:
                messages.append(str(exc))
        else:
            session.set_inputs(bad)
            event = None
            while not isinstance(event, NodeFailed):
                event = session.step()
            messages.append(event.message)
        failed = [i for i in session.plan if session.status(i) is NodeStatus.FAILED]
        assert len(failed) == 1
    assert messages[0].endswith(messages[1]) and f"0x{failed[0]:x}" in messages[0]


def test_d32_examples_run_by_plan_as_stepped() -> None:
    from pathlib import Path

    from hexscope.engine.inputs import make_inputs
    from hexscope.engine.io.any_graph import load_any

    examples = Path(__file__).resolve().parents[2] / "resources" / "examples"
    for name in ("d32_pipeline.hexgraph", "fill_padding_demo.hexgraph"):
        graph = load_any(examples / name)
        x = make_inputs(graph, examples)
        fast, stepped = Session(graph), Session(graph)
        fast.execute(x)
        stepped.set_inputs(x)
        _stepped(stepped)
        assert _trace_bytes(fast) == _trace_bytes(stepped), name


def test_plain_outputs_takes_only_what_the_full_check_lets_through() -> None:
    from hexscope.engine.dtypes import DType
    from hexscope.engine.executor import plain_outputs
    from hexscope.engine.tensor import Tensor

    y = Tensor.from_array(np.zeros((1, 2, 2, 3), np.uint8), DType.QUINT8)
    lo = Tensor.from_array(np.zeros(1, np.float32))
    checks = ((DType.QUINT8, 12), (DType.FLOAT32, None))
    taken = plain_outputs([y, lo], checks)
    assert taken == (y, lo) and not y.raw.flags.writeable and not lo.raw.flags.writeable
    # the full check's cases: an array to wrap, another type, past the capacity, a count
    assert plain_outputs([y.array, lo], checks) is None
    assert plain_outputs([lo, lo], checks) is None
    assert plain_outputs([y, lo], ((DType.QUINT8, 11), (DType.FLOAT32, None))) is None
    assert plain_outputs([y], checks) is None
    assert plain_outputs(iter([y, lo]), checks) is None
    empty = Tensor.shape_only((1, 1, 1, 1))          # no data: no capacity to pass
    assert plain_outputs([y, empty], ((None, 12), (None, 0))) == (y, empty)
