"""WelcomePage: what a new user sees first: the examples, recent files, how to start, and the
keys that matter."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from importlib import resources

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

PATH_ROLE = Qt.ItemDataRole.UserRole
KEYS = (("F5", "Run / continue"), ("F10", "Step one node"), ("F9", "Toggle a breakpoint"),
        ("Ctrl+F10", "Run to the selected node (stops before it)"), ("Shift+F5", "Stop"))


def bundled_examples() -> list[tuple[str, str]]:
    """(file path, one line on what it shows) for every example that ships with the app."""
    folder = resources.files("hexscope.resources") / "examples"
    try:
        notes = json.loads((folder / "examples.json").read_text("utf-8"))
    except (OSError, ValueError):
        notes = {}
    return [(str(entry), notes.get(entry.name, "")) for entry in sorted(
        folder.iterdir(), key=lambda e: e.name) if entry.name.endswith(".hexgraph")]


class WelcomePage(QWidget):
    """Buttons and lists; the window decides what each request does."""

    open_requested = Signal(str)        # a path: an example or a recent file
    new_requested = Signal()
    open_dialog_requested = Signal()
    import_c_requested = Signal()

    def __init__(self, recent: Sequence[str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._build_ui()
        self.set_recent(recent)

    def _build_ui(self) -> None:
        title = QLabel("<h1>Hexscope</h1><p>A debugger for hexagon_nn graphs: edit, step "
                       "through the simulated HVX, see d32 padding and ranges.</p>")
        title.setWordWrap(True)
        buttons = QHBoxLayout()
        for text, signal in (("New graph", self.new_requested),
                             ("Open…", self.open_dialog_requested),
                             ("Import hexagon_nn C…", self.import_c_requested)):
            button = QPushButton(text)
            button.clicked.connect(signal)
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.examples = QListWidget()
        for path, note in bundled_examples():
            item = QListWidgetItem(f"{os.path.basename(path)} — {note}" if note
                                   else os.path.basename(path))
            item.setData(PATH_ROLE, path)
            item.setToolTip(note)
            self.examples.addItem(item)
        self.recent = QListWidget()
        for view in (self.examples, self.recent):
            # Whole lines, wrapped to the page's width, never a sideways scroll.
            view.setWordWrap(True)
            view.setResizeMode(QListView.ResizeMode.Adjust)
            view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            view.itemActivated.connect(self._open_item)
            view.itemDoubleClicked.connect(self._open_item)
        keys = QGridLayout()
        for row, (key, what) in enumerate(KEYS):
            keys.addWidget(QLabel(f"<b>{key}</b>"), row, 0)
            keys.addWidget(QLabel(what), row, 1)
        keys.setColumnStretch(2, 1)       # keys and their meaning side by side, not apart
        layout = QVBoxLayout(self)
        layout.setContentsMargins(32, 24, 32, 24)
        layout.addWidget(title)
        layout.addLayout(buttons)
        layout.addWidget(QLabel("<h3>Examples</h3> (double-click to open)"))
        layout.addWidget(self.examples, 2)
        layout.addWidget(QLabel("<h3>Recent files</h3>"))
        layout.addWidget(self.recent, 1)
        layout.addWidget(QLabel("<h3>Keys</h3>"))
        layout.addLayout(keys)

    def set_recent(self, paths: Sequence[str]) -> None:
        self.recent.clear()
        for path in paths:
            item = QListWidgetItem(path)
            item.setData(PATH_ROLE, path)
            self.recent.addItem(item)
        if not paths:
            none = QListWidgetItem("No recent files yet.")
            none.setFlags(Qt.ItemFlag.NoItemFlags)
            self.recent.addItem(none)

    def _open_item(self, item: QListWidgetItem) -> None:
        path = item.data(PATH_ROLE)
        if path:
            self.open_requested.emit(str(path))


__all__ = ["WelcomePage", "bundled_examples"]
