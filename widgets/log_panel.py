"""LogPanel: the graph log with hexagon_nn's levels, filterable by level and node, savable."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine.events import LogLine
from hexscope.engine.log import LEVEL_NAMES
from hexscope.widgets.theme_colors import theme_colors

LEVELS = [("errors (0)", 0), ("info (≤1)", 1), ("progress (≤2)", 2), ("all", 99)]
_LEVEL = Qt.ItemDataRole.UserRole + 1


def level_color(level: int) -> QColor | None:
    """Errors in the theme's error colour, info in the palette's text colour (None), the
    chattier levels fainter."""
    colors = theme_colors()
    return colors.error_text if level <= 0 else None if level == 1 else colors.faint_text


def line_text(line: LogLine) -> str:
    node = f"0x{line.node_id:x}" if line.node_id is not None else "-"
    level = "warning" if line.warning else LEVEL_NAMES.get(line.level, str(line.level))
    return f"[{level}] {node}: {line.text}"


class LogPanel(QWidget):
    """Lines arrive with :meth:`append`; filters apply to what is shown and what is saved."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lines: list[LogLine] = []
        self.errors = 0            # lines at level 0 (kept as lines come: the tab shows it)
        self.warnings = 0          # nodes' warnings (level 0 too, counted apart)
        # one scroll to the newest line per burst of lines (a run of a large graph logs
        # hundreds in a row: a scroll each took 0.1 s of the GUI thread per 600 lines)
        self._scroll = QTimer(self, singleShot=True, interval=0)
        self.selected_node: int | None = None
        self._build_ui()
        self._scroll.timeout.connect(self.list.scrollToBottom)
        self.level.currentIndexChanged.connect(self.refilter)
        self.node_filter.textChanged.connect(self.refilter)
        self.only_selected.toggled.connect(self.refilter)
        self.save_button.clicked.connect(self._save)
        self.clear_button.clicked.connect(self.clear)

    def _build_ui(self) -> None:
        self.level = QComboBox()
        for text, value in LEVELS:
            self.level.addItem(text, value)
        self.level.setCurrentIndex(len(LEVELS) - 1)
        self.node_filter = QLineEdit(placeholderText="node id, e.g. 0x2001")
        self.only_selected = QCheckBox("selected node")
        self.save_button = QPushButton("Save…")
        self.clear_button = QPushButton("Clear")
        self.count = QLabel()
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Level"))
        bar.addWidget(self.level)
        bar.addWidget(self.node_filter)
        bar.addWidget(self.only_selected)
        bar.addStretch(1)
        bar.addWidget(self.count)
        bar.addWidget(self.clear_button)
        bar.addWidget(self.save_button)
        self.list = QListWidget()
        self.list.setUniformItemSizes(True)
        font = self.list.font()
        font.setFamily("monospace")
        font.setStyleHint(font.StyleHint.Monospace)
        self.list.setFont(font)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(bar)
        layout.addWidget(self.list)

    def append(self, line: LogLine) -> None:
        self.lines.append(line)
        self.errors += line.level == 0 and not line.warning
        self.warnings += line.warning
        if self._passes(line):
            self._add_row(line)
            self._scroll.start()
        self._update_count()

    def clear(self) -> None:
        self.lines.clear()
        self.errors = 0
        self.warnings = 0
        self.list.clear()
        self._update_count()

    def set_selected_node(self, node_id: int | None) -> None:
        self.selected_node = node_id
        if self.only_selected.isChecked():
            self.refilter()

    def visible_lines(self) -> list[LogLine]:
        return [line for line in self.lines if self._passes(line)]

    def refilter(self) -> None:
        self.list.clear()
        for line in self.visible_lines():
            self._add_row(line)
        self._update_count()

    def _passes(self, line: LogLine) -> bool:
        if line.level > self.level.currentData():
            return False
        wanted = self._node_wanted()
        return wanted is None or line.node_id == wanted

    def _node_wanted(self) -> int | None:
        if self.only_selected.isChecked():
            return self.selected_node if self.selected_node is not None else -1
        text = self.node_filter.text().strip()
        if not text:
            return None
        try:
            return int(text, 16) if not text.isdigit() or text.startswith("0") else int(text)
        except ValueError:
            return -1

    def _add_row(self, line: LogLine) -> None:
        item = QListWidgetItem(line_text(line))
        item.setData(_LEVEL, line.level)
        self._color(item)
        item.setData(Qt.ItemDataRole.UserRole, line.node_id)
        self.list.addItem(item)

    def _color(self, item: QListWidgetItem) -> None:
        color = level_color(item.data(_LEVEL))
        if color is None:
            item.setData(Qt.ItemDataRole.ForegroundRole, None)
        else:
            item.setForeground(color)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            for row in range(self.list.count()):
                self._color(self.list.item(row))
        super().changeEvent(event)

    def _update_count(self) -> None:
        self.count.setText(f"{self.list.count()} of {len(self.lines)} lines")

    def _save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save log", "hexscope.log",
                                              "Text (*.log *.txt)")
        if path:
            self.save(path)

    def save(self, path: str) -> None:
        """Write the lines that pass the filters."""
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(line_text(line) + "\n" for line in self.visible_lines())
