"""ProblemsPanel: validation issues and run-time failures; activating one selects its node."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from hexscope.engine.validate import Issue, Severity
from hexscope.widgets.theme_colors import theme_colors

_ERROR = Qt.ItemDataRole.UserRole + 1     # True: an error, False: a warning


class ProblemsPanel(QWidget):
    node_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.issues: list[Issue] = []
        self.list = QListWidget()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.list)
        self.list.itemClicked.connect(self._activate)
        self.list.itemActivated.connect(self._activate)

    def set_issues(self, issues: list[Issue],
                   extra: Sequence[str | tuple[int | None, str]] = (),
                   warnings: Sequence[tuple[int, str]] = ()) -> None:
        """Show ``issues``, then run-time problems: a failed node's ``(node_id, text)`` or a
        free text (e.g. an input that cannot be made), then what the run warned (one entry
        per distinct warning, naming its first node)."""
        self.issues = list(issues)
        self.list.clear()
        for issue in self.issues:
            error = issue.severity is Severity.ERROR
            item = QListWidgetItem(("✖ " if error else "⚠ ") + str(issue))
            item.setData(_ERROR, error)
            item.setData(Qt.ItemDataRole.UserRole, issue.node_id)
            self.list.addItem(item)
        for entry in extra:
            node_id, text = entry if isinstance(entry, tuple) else (None, entry)
            item = QListWidgetItem("✖ " + text)
            item.setData(_ERROR, True)
            if node_id is not None:
                item.setData(Qt.ItemDataRole.UserRole, node_id)
            self.list.addItem(item)
        for node_id, text in warnings:
            item = QListWidgetItem("⚠ " + text)
            item.setData(_ERROR, False)
            item.setData(Qt.ItemDataRole.UserRole, node_id)
            self.list.addItem(item)
        if not self.issues and not extra and not warnings:
            self.list.addItem(QListWidgetItem("No problems."))
        self._color()

    def _color(self) -> None:
        colors = theme_colors()
        for row in range(self.list.count()):
            item = self.list.item(row)
            error = item.data(_ERROR)
            if error is not None:
                item.setForeground(colors.error_text if error else colors.warning_text)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._color()
        super().changeEvent(event)

    def _activate(self, item: QListWidgetItem) -> None:
        node_id = item.data(Qt.ItemDataRole.UserRole)
        if node_id is not None:
            self.node_activated.emit(int(node_id))
