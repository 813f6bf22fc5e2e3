"""Words the window shows about a node's run that depend on what prepare did to it."""

from __future__ import annotations

from hexscope.app.warm_up import is_warm
from hexscope.engine.session import Session


def rewrite_note(session: Session, node_id: int) -> tuple[int | None, str]:
    """For a node that did not run itself: the node whose outputs stand for it (the one it
    was fused into, once that ran) and what to say; (None, "") for any other node."""
    rewrite = next((r for r in session.prepared.rewrites if r.node_id == node_id), None)
    if rewrite is None or rewrite.kind not in ("fused", "removed"):
        return None, ""
    if rewrite.kind == "removed":
        return None, f"does not run: prepare removed it ({rewrite.reason})"
    into = rewrite.into
    if into is None or into not in session.prepared.nodes:
        return None, f"does not run: {rewrite.reason}"
    host = session.prepared.nodes[into]
    where = f"fused into {host.op} 0x{into:x}"
    if session.result(into) is None:
        return None, f"{where}, which has not run yet"
    return into, f"{where}: its outputs are shown (this node's own are never made)"


def preparing_text(nodes: int) -> str:
    """The status bar's words while a first run validates and prepares; on a first run
    after install (no ``hexscope --warm-up``), that the kernels compile, once."""
    text = (f"Preparing the graph ({nodes:,} nodes): validating and rewriting as hexagon_nn "
            "prepare does…")
    if not is_warm():
        text = ("Compiling kernels (once after install; `hexscope --warm-up` does it ahead) "
                f"and preparing the graph ({nodes:,} nodes)…")
    return text


__all__ = ["preparing_text", "rewrite_note"]
