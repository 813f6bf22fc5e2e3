"""What the Outputs panel shows for the selected node: its results, the node it was fused
into, or why it has none; and its state kept between executions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hexscope.app.backend_actions import device_note
from hexscope.app.run_messages import rewrite_note
from hexscope.engine.session import Session
from hexscope.widgets.node_state import state_lines

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow


def show_outputs(w: MainWindow, node_id: int | None) -> None:
    """Fill ``w``'s Outputs panel for ``node_id`` (None: no single node selected)."""
    _show_state(w, node_id)
    panel = w.outputs_panel
    if node_id is None or node_id not in w.graph:
        panel.show_result("", None, note="Select a node that has run.")
        return
    node = w.graph.node(node_id)
    session = w.session
    title = f"{node.op} {node.title}"
    if session is None:
        panel.show_result(title, None, note="not run yet (F10 steps, F5 runs)")
        return
    error = session.executor.failed.get(node_id, "")
    result = session.result(node_id)
    if node.is_const and node_id in session.prepared.nodes:
        panel.show_result(title, [session.output(node_id)], note="const data")
    elif result is not None:
        outputs = [session.output(node_id, k) for k in range(len(result.outputs))]
        look = w.scene.looks.get(node_id)
        stale = look is not None and look.status == "stale"
        note = (device_note(session, node_id) or f"ran in {result.seconds * 1e3:.3f} ms") + (
            " · stale: an edit changed its inputs" if stale else "")
        panel.show_result(title, outputs, error, note)
    else:
        host, note = rewrite_note(session, node_id)
        host_result = session.result(host) if host is not None else None
        outputs = None if host_result is None else [
            session.output(host, k) for k in range(len(host_result.outputs))]
        panel.show_result(title, outputs, error, note or "has not run")


def _show_state(w: MainWindow, node_id: int | None) -> None:
    """The node's state kept between executions, read only while the worker is idle."""
    session = w.session
    if node_id is None or session is None or w.controller.busy:
        w.outputs_panel.set_state([])
    else:
        ex = session.executor
        w.outputs_panel.set_state(state_lines(node_id, ex.states, ex.store))


def ran_shape(session: Session | None, node_id: int, k: int) -> str | None:
    """The shape of output ``k`` of ``node_id`` in its last run, if it ran."""
    result = session.result(node_id) if session else None
    if result is None or k >= len(result.outputs):
        return None
    return result.outputs[k].describe()


__all__ = ["ran_shape", "show_outputs"]
