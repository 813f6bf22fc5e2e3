"""Undo commands: each wraps the engine Graph edits of one user action.

The edits are made before the command is pushed, so an edit the engine refuses (a cycle, a
taken id) raises :class:`GraphError` and never reaches the stack. Undo applies the edits'
inverses in reverse order, redo re-applies them, both exactly as recorded.

A command never has a Qt parent or children. A ``QUndoCommand`` child created from Python
is owned by its C++ parent while Python drops its wrapper, so the parent's ``redo()`` then
dispatched into a dead Python object (the crash on Delete). One command holding its list of
edits keeps every lifetime on the Python side; the stack owns the command it is pushed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtGui import QUndoCommand, QUndoStack

from hexscope.engine.graph import Edit, Graph


class GraphEditCommand(QUndoCommand):
    """One undo step made of graph edits that have already been applied."""

    def __init__(self, graph: Graph, edits: Edit | Sequence[Edit], text: str = "") -> None:
        edits = (edits,) if isinstance(edits, Edit) else tuple(edits)
        super().__init__(text or "; ".join(e.description for e in edits))
        self.graph = graph
        self.edits = edits
        self._applied = True

    def redo(self) -> None:
        if not self._applied:
            for edit in self.edits:
                self.graph.apply(edit)
        self._applied = True

    def undo(self) -> None:
        for edit in reversed(self.edits):
            self.graph.apply(edit.inverse())
        self._applied = False


def push_edit(stack: QUndoStack, graph: Graph, method: str, *args: object,
              text: str = "") -> Edit:
    """Call ``graph.<method>(*args)`` and push the resulting edit onto ``stack``."""
    edit_fn: Callable[..., Edit] = getattr(graph, method)
    edit = edit_fn(*args)
    stack.push(GraphEditCommand(graph, edit, text))
    return edit


def push_edits(stack: QUndoStack, graph: Graph, text: str,
               calls: list[tuple[str, tuple[object, ...]]]) -> list[Edit]:
    """Several edits as one undo step; if one fails, the earlier ones are rolled back."""
    done: list[Edit] = []
    try:
        for method, args in calls:
            done.append(getattr(graph, method)(*args))
    except Exception:
        for edit in reversed(done):
            graph.apply(edit.inverse())
        raise
    stack.push(GraphEditCommand(graph, done, text))
    return done
