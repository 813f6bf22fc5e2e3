"""OpPalette: every declared op, grouped by category, with search; drag an op to the canvas."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, Qt, QUrl, Signal
from PySide6.QtGui import QColor, QDrag
from PySide6.QtWidgets import (
    QLineEdit,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hexscope.engine.ops.reference import describe as describe_reference
from hexscope.engine.ops.registry import REGISTRY, OpRegistry, OpSpec
from hexscope.widgets.doc_text import render_doc
from hexscope.widgets.graph_canvas.view import OP_MIME
from hexscope.widgets.theme_colors import is_dark

NAME_ROLE = Qt.ItemDataRole.UserRole
CATEGORY_ROLE = Qt.ItemDataRole.UserRole + 1
_USER_ROLE = Qt.ItemDataRole.UserRole + 2     # True on a user op (plugin)
USER_COLOR = QColor("#5b3f99")
DARK_USER_COLOR = QColor("#b9a3f0")     # the same hue, legible on a dark base


def _op_item(spec: OpSpec) -> QTreeWidgetItem:
    """One op row; user ops (from plugins) are marked and say where they were declared."""
    text = spec.name if spec.simulated else f"{spec.name}  (not simulated)"
    tip = spec.summary
    if spec.user:
        text += "  ⚙ user"
        tip = f"user op from {spec.source or 'a plugin'}\n{spec.summary}"
    item = QTreeWidgetItem([text])
    item.setData(0, NAME_ROLE, spec.name)
    item.setToolTip(0, tip)
    if spec.user:
        item.setData(0, _USER_ROLE, True)
        item.setForeground(0, DARK_USER_COLOR if is_dark() else USER_COLOR)
    return item


def op_mime_data(name: str) -> QMimeData:
    """What a drag of op ``name`` carries: the canvas reads ``OP_MIME``."""
    mime = QMimeData()
    mime.setData(OP_MIME, name.encode())
    mime.setText(name)
    return mime


class _OpTree(QTreeWidget):
    def mimeTypes(self) -> list[str]:  # noqa: N802 - Qt override
        return [OP_MIME, "text/plain"]

    def mimeData(self, items: list[QTreeWidgetItem]) -> QMimeData:  # noqa: N802 - Qt override
        names = [item.data(0, NAME_ROLE) for item in items if item.data(0, NAME_ROLE)]
        return op_mime_data(names[0]) if names else QMimeData()

    def startDrag(self, actions: Qt.DropAction) -> None:  # noqa: N802 - Qt override
        item = self.currentItem()
        if item is None or not item.data(0, NAME_ROLE):
            return
        drag = QDrag(self)
        drag.setMimeData(self.mimeData([item]))
        drag.exec(Qt.DropAction.CopyAction)


class OpPalette(QWidget):
    """Search box, op tree and the selected op's doc text."""

    op_activated = Signal(str)     # double-click: add the op at the view's centre
    doc_link_clicked = Signal(QUrl)   # a citation in the doc pane: the app opens the section

    def __init__(self, registry: OpRegistry = REGISTRY, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.registry = registry
        self._build_ui()
        self.search.textChanged.connect(self.filter)
        self.tree.currentItemChanged.connect(self._show_doc)
        self.tree.itemDoubleClicked.connect(self._activate)
        self.populate()

    def _build_ui(self) -> None:
        self.search = QLineEdit(placeholderText="Search ops…")
        self.search.setClearButtonEnabled(True)
        self.tree = _OpTree()
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        # The suffix tells hexagon_nn's variants apart (_8x8to32, _d32): when a name must be
        # cut, cut its middle.
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.doc = QTextBrowser()
        self.doc.setOpenLinks(False)
        self.doc.anchorClicked.connect(self.doc_link_clicked)
        self.doc.setPlaceholderText("Click an op: its ports and doc.\n"
                                    "Drag it onto the canvas\n(or double-click it) to add it.")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.doc)
        split.setSizes([400, 160])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.search)
        layout.addWidget(split)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # A theme switch: the user ops' colour is chosen for the palette's base.
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            color = DARK_USER_COLOR if is_dark() else USER_COLOR
            for g in range(self.tree.topLevelItemCount()):
                group = self.tree.topLevelItem(g)
                for k in range(group.childCount()):
                    # The item's own mark: its plugin may have gone from the registry since.
                    if group.child(k).data(0, _USER_ROLE):
                        group.child(k).setForeground(0, color)
        super().changeEvent(event)

    def preferred_width(self) -> int:
        """The width at which every op name shows whole (the dock opens at it)."""
        metrics = self.tree.fontMetrics()
        widest = max((metrics.horizontalAdvance(self.tree.topLevelItem(g).child(c).text(0))
                      for g in range(self.tree.topLevelItemCount())
                      for c in range(self.tree.topLevelItem(g).childCount())), default=0)
        scrollbar = self.tree.verticalScrollBar().sizeHint().width()
        return widest + 2 * self.tree.indentation() + scrollbar + 16

    def populate(self) -> None:
        """Rebuild the tree from the registry (after a plugin declared more ops)."""
        self.tree.clear()
        for category, specs in self.registry.by_category().items():
            group = QTreeWidgetItem([category.value])
            group.setData(0, CATEGORY_ROLE, category.value)
            group.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(group)
            for spec in specs:
                group.addChild(_op_item(spec))
        self.tree.expandAll()
        self.filter(self.search.text())

    def filter(self, text: str) -> None:
        """Show ops whose name, alias or summary contains ``text``."""
        q = text.strip().lower()
        for g in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(g)
            shown = 0
            for k in range(group.childCount()):
                item = group.child(k)
                spec = self.registry.get(item.data(0, NAME_ROLE))
                hit = not q or q in spec.name.lower() or q in spec.summary.lower() or any(
                    q in a.lower() for a in spec.aliases)
                item.setHidden(not hit)
                shown += hit
            group.setHidden(shown == 0)
            total = group.childCount()
            counts = f"{shown} of {total}" if q and shown < total else str(total)
            group.setText(0, f"{group.data(0, CATEGORY_ROLE)} ({counts})")

    def group_texts(self) -> list[str]:
        """The category headers that are shown, with their counts."""
        return [self.tree.topLevelItem(g).text(0) for g in range(self.tree.topLevelItemCount())
                if not self.tree.topLevelItem(g).isHidden()]

    def visible_ops(self) -> list[str]:
        names = []
        for g in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(g)
            names += [group.child(k).data(0, NAME_ROLE) for k in range(group.childCount())
                      if not group.isHidden() and not group.child(k).isHidden()]
        return names

    def _show_doc(self, item: QTreeWidgetItem | None) -> None:
        name = item.data(0, NAME_ROLE) if item else None
        if not name:
            self.doc.clear()
            return
        self.doc.setHtml(doc_html(self.registry.get(name)))

    def _activate(self, item: QTreeWidgetItem) -> None:
        name = item.data(0, NAME_ROLE)
        if name:
            self.op_activated.emit(name)


def doc_html(spec: OpSpec) -> str:
    """The op's declaration as HTML: ports with types, the doc text, the float reference."""
    def rows(ports: object, n: int) -> str:
        return "".join(f"<li><b>{p.name}</b>: {p.type_text}</li>"
                       for p in ports.ports_for(n))  # type: ignore[attr-defined]

    n_in = max(spec.inputs.arity[0], len(spec.inputs.head))
    n_out = max(spec.outputs.arity[0], len(spec.outputs.head))
    text = render_doc(spec.doc)
    sim = "" if spec.simulated else " <i>(not simulated yet)</i>"
    if spec.user:
        where = (spec.source or "a plugin").replace("&", "&amp;").replace("<", "&lt;")
        sim += f"<br><i>user op from {where}</i>"
    op_id = f" · id {spec.op_id}" if spec.op_id is not None else ""
    return (f"<p><b>{spec.name}</b></p>"
            f"<p>{spec.category.value}{op_id}{sim}</p>"
            f"<p>inputs ({spec.inputs.arity_text()}):<ul>{rows(spec.inputs, n_in)}</ul>"
            f"outputs ({spec.outputs.arity_text()}):<ul>{rows(spec.outputs, n_out)}</ul></p>"
            f"{text}"
            f"<p><i>{_esc(describe_reference(spec.reference))}</i></p>")


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")
