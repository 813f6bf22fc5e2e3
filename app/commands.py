"""Undo commands: each wraps one engine Graph edit and the Edit record it returned.

The edit is made before the command is pushed, so an edit the engine refuses (a cycle, a
taken id) raises :class:`GraphError` and never reaches the stack. Undo applies the edit's
inverse, redo re-applies the edit, both exactly as recorded.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QUndoCommand, QUndoStack

from hexscope.engine.graph import Edit, Graph


class GraphEditCommand(QUndoCommand):
    """One graph edit that has already been applied."""

    def __init__(self, graph: Graph, edit: Edit, text: str = "",
                 parent: QUndoCommand | None = None) -> None:
        super().__init__(text or edit.description, parent)
        self.graph = graph
        self.edit = edit
        self._applied = True

    def redo(self) -> None:
        if not self._applied:
            self.graph.apply(self.edit)
        self._applied = True

    def undo(self) -> None:
        self.graph.apply(self.edit.inverse())
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
    macro = QUndoCommand(text)
    for edit in done:
        GraphEditCommand(graph, edit, parent=macro)
    stack.push(macro)
    return done
