"""A node on the canvas: op, id in hex and label in the header, ports in port order.

Everything is painted by the item itself (no child items), so a 1,000-node graph stays a few
thousand items; zoomed far out a node is painted as a plain block (level of detail).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsSceneHoverEvent,
    QStyleOptionGraphicsItem,
    QWidget,
)

from hexscope.engine.nodes import Node
from hexscope.engine.ops.registry import Category
from hexscope.widgets.graph_canvas.layout import HEADER_HEIGHT, PORT_HEIGHT, node_size
from hexscope.widgets.graph_canvas.model import PortInfo
from hexscope.widgets.theme_colors import LIGHT, ThemeColors, ink_on, theme_colors

CATEGORY_COLORS: dict[Category | None, str] = {
    Category.IO: "#5b7083", Category.PLUMBING: "#757575", Category.CHECK: "#8e5ea2",
    Category.PRINT: "#8e5ea2", Category.D32: "#2b8181", Category.MATH: "#3366aa",
    Category.ACTIVATION: "#a56525", Category.POOLING: "#428142", Category.QUANTIZE: "#a35d8a",
    Category.ELEMENTWISE: "#4874bc", Category.FLOAT: "#837528", Category.LOOKUP: "#6d6db3",
    Category.STATE: "#a0522d", Category.USER: "#555599", None: "#996666",
}
# "done" is a neutral slate, not green: green is pooling's category colour and Compare's
# "within tolerance". A run state is told by its badge's shape (✓, ✕, ▶) as much as colour.
STATUS_COLORS = {
    "done": QColor("#3a414d"), "failed": QColor("#d62828"), "stale": QColor("#c9a227"),
    "running": QColor("#1f78d1"), "next": QColor("#ff9f1c"), "problem": QColor("#e4572e"),
    "warned": QColor("#f2c94c"),       # ran, with warnings: an amber "!" badge
}
LOD_SIMPLE = 0.4
PORTS_LOD = 0.49           # ports (dots and names) from this zoom up; the overview zoom is 0.5
PORT_RADIUS = 4.5
HEADER_PAD = 8.0
BLOCK_TEXT_PX = 11         # the overview's block names, in screen pixels
# Below this zoom a block is under 24 px wide: its name would be an elided "C…d". The
# canvas paints these zooms from cached tiles (overview_tiles.py), which must hold no text
# (scaled down, it would blur).
BLOCK_TEXT_MIN_LOD = 0.125
MAX_WIDTH = 320.0
BLOCK_TEXT_SIZES = (11, 10, 9, 8)   # pixel sizes tried before a name is shortened
OVERHANG = 30.0            # how far a block's name may reach past its sides (inside bounds)
BADGE_PX = 11              # a state badge on a block's corner, in screen pixels
# The badges reach this far past the block (half a badge at the lowest zoom with names).
BADGE_MARGIN = 64.0
BREAKPOINT_COLOR = QColor("#c1121f")
RANK_COLOR = QColor("#7a1020")      # the rank badge (sensitivity ranking)


def header_font() -> QFont:
    """The bold font of the op name in the header."""
    font = QFont()
    font.setPointSizeF(9.5)
    font.setBold(True)
    return font


_METRICS: list[QFontMetricsF] = []


def _header_metrics() -> QFontMetricsF:
    if not _METRICS:
        _METRICS.append(QFontMetricsF(header_font()))
    return _METRICS[0]


@dataclass
class NodeLook:
    """How the debugger and the editor want a node to look right now."""

    status: str = ""            # "", "pending", "done", "failed", "stale", "running"
    is_next: bool = False
    breakpoint: bool = False
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)   # what the node's last run warned
    error: str = ""
    seconds: float | None = None
    rewrite: str = ""           # "", "fused", "removed", "replaced"
    rewrite_reason: str = ""
    runs_as: str = ""           # the op a "replaced" node runs as after prepare
    overlay: QColor | None = None
    overlay_note: str = ""      # the numbers behind the overlay colour (tooltip)
    rank: str = ""              # a rank badge over the block ("#1": sensitivity ranking)


class NodeItem(QGraphicsItem):
    """One graph node; ``look`` holds the run state, ``edges`` the attached edge items."""

    def __init__(self, node: Node, category: Category | None, inputs: list[PortInfo],
                 outputs: list[PortInfo], can_append: bool, doc: str = "") -> None:
        super().__init__()
        self.node = node
        self.category = category
        self.inputs = inputs
        self.outputs = outputs
        self.can_append = can_append
        self.doc = doc
        self.look = NodeLook()
        self.edges: list[object] = []
        self.follow_edges = True      # False while the scene moves many items at once
        rows = len(inputs) + (1 if can_append else 0)
        self.width, self.height = node_size(rows, len(outputs))
        # As wide as the op's full name needs (QuantizedConv2d_8x8to32 must stay readable:
        # the suffix is the part that tells ops apart), up to a cap; past it the middle goes.
        # (10 % spare: hinted text at other zooms and DPIs can be wider than measured.)
        self.width = min(MAX_WIDTH, max(self.width, _header_metrics().horizontalAdvance(
            node.op) * 1.1 + 2 * HEADER_PAD))
        self._color = QColor(CATEGORY_COLORS.get(category, CATEGORY_COLORS[None]))
        self.block_rgb = self._color.rgb()
        # Qt asks for it twice per item and repaint: one object, not a new one each time.
        # Wide enough for the state badges that sit on a block's corners when zoomed out;
        # the item's shape (clicks, rubber band) stays the body and its port handles.
        m = BADGE_MARGIN
        self._bounds = QRectF(-m, -m, self.width + 2 * m, self.height + 2 * m)
        self._shape = QPainterPath()
        self._shape.addRect(QRectF(-14, -14, self.width + 28, self.height + 30))
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
                      | QGraphicsItem.GraphicsItemFlag.ItemIsMovable
                      | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges)
        self.setAcceptHoverEvents(True)
        self.setZValue(1)
        # The tooltip is made when the pointer comes (hoverMoveEvent), not at each new
        # look: a run's end or Compare sets 10,000 looks, ~8 us of HTML each.
        self._hovered = False

    @property
    def node_id(self) -> int:
        return self.node.node_id

    # geometry ---------------------------------------------------------------------------------
    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return self._bounds

    def shape(self) -> QPainterPath:  # noqa: D102 - Qt override
        return self._shape

    def body_rect(self) -> tuple[float, float, float, float]:
        """The node's body in scene coordinates: x, y, width, height."""
        pos = self.pos()
        return pos.x(), pos.y(), self.width, self.height

    def input_pos(self, port: int) -> QPointF:
        """Scene position of input ``port`` (the append slot is ``len(inputs)``)."""
        return self.mapToScene(QPointF(0, self._row_y(port)))

    def output_pos(self, port: int) -> QPointF:
        return self.mapToScene(QPointF(self.width, self._row_y(port)))

    def _row_y(self, row: int) -> float:
        return HEADER_HEIGHT + row * PORT_HEIGHT + PORT_HEIGHT / 2

    def port_at(self, scene_pos: QPointF) -> tuple[str, int] | None:
        """("in", k) or ("out", k) when ``scene_pos`` is over a port row's handle area."""
        p = self.mapFromScene(scene_pos)
        row = int((p.y() - HEADER_HEIGHT) // PORT_HEIGHT)
        if p.y() < HEADER_HEIGHT or row < 0:
            return None
        if -10 <= p.x() <= 48:
            n = len(self.inputs) + (1 if self.can_append else 0)
            return ("in", row) if row < n else None
        if self.width - 48 <= p.x() <= self.width + 10:
            return ("out", row) if row < len(self.outputs) else None
        return None

    # state --------------------------------------------------------------------------------------
    def set_look(self, **changes: object) -> None:
        for key, value in changes.items():
            setattr(self.look, key, value)
        self.block_rgb = self.block_color().rgb()   # read by the minimap for every node
        if self._hovered:                           # a tooltip may be up: kept true
            self.setToolTip(self._node_tooltip())
        self.update()

    def toolTip(self) -> str:  # noqa: N802 - Qt's name
        """The node's tooltip as it is now (Qt shows the one the last hover set)."""
        return self._node_tooltip()

    def _node_tooltip(self) -> str:
        lines = [f"<b>{self.node.op}</b> 0x{self.node_id:x}"
                 + (f" '{self.node.label}'" if self.node.label else "")]
        if self.doc:
            lines.append(self.doc)
        look = self.look
        colors = theme_colors()         # the tooltip's ground is the palette's
        failed, problem = colors.error_text.name(), colors.warning_text.name()
        if look.error:
            lines.append(f"<span style='color:{failed}'>failed: {_esc(look.error)}</span>")
        lines += [f"<span style='color:{problem}'>problem: {_esc(p)}</span>"
                  for p in look.problems]
        lines += [f"<span style='color:{problem}'>warning: {_esc(p)}</span>"
                  for p in look.warnings]
        if look.rewrite:
            lines.append(f"<i>prepare: {look.rewrite} — {_esc(look.rewrite_reason)}</i>")
        if look.seconds is not None:
            lines.append(f"wall time {look.seconds * 1e3:.3f} ms")
        if look.overlay_note:
            lines.append(look.overlay_note)
        return "<br>".join(lines)

    def hoverEnterEvent(self, event: QGraphicsSceneHoverEvent) -> None:  # noqa: N802
        self._hovered = True
        self.setToolTip(self._node_tooltip())
        super().hoverEnterEvent(event)

    def hoverLeaveEvent(self, event: QGraphicsSceneHoverEvent) -> None:  # noqa: N802
        self._hovered = False
        super().hoverLeaveEvent(event)

    def hoverMoveEvent(self, event: QGraphicsSceneHoverEvent) -> None:  # noqa: N802
        hit = self.port_at(event.scenePos())
        if hit is None:
            self.setToolTip(self._node_tooltip())
        elif hit[0] == "in" and hit[1] >= len(self.inputs):
            self.setToolTip("drag an output here to append an input")
        else:
            port = (self.inputs if hit[0] == "in" else self.outputs)[hit[1]]
            kind = "input" if hit[0] == "in" else "output"
            extra = f"<br>value {port.folded}" if port.folded else ""
            self.setToolTip(f"{kind} {hit[1]} <b>{port.name}</b>: {port.type_text}{extra}")
        super().hoverMoveEvent(event)

    def itemChange(self, change: QGraphicsItem.GraphicsItemChange, value: object) -> object:  # noqa: N802
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged \
                and self.follow_edges:
            scene = self.scene()
            if hasattr(scene, "node_moved"):
                scene.node_moved(self)      # before its edges are checked against it
            for edge in self.edges:
                edge.update_path()  # type: ignore[attr-defined]
        return super().itemChange(change, value)

    # painting ---------------------------------------------------------------------------------
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        rect = QRectF(0, 0, self.width, self.height)
        look = self.look
        faded = look.rewrite in ("fused", "removed")
        if faded:
            painter.setOpacity(0.45)
        colors = theme_colors()
        body = look.overlay or colors.body
        # Over an overlay (a light tint) the light set's ink reads; otherwise the theme's.
        ink = LIGHT if look.overlay else colors
        if lod < LOD_SIMPLE:
            self._paint_block(painter, rect, lod)
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, lod > 0.7)
        path = QPainterPath()
        path.addRoundedRect(rect, 6, 6)
        painter.fillPath(path, body)
        head = QPainterPath()
        head.addRoundedRect(QRectF(0, 0, self.width, HEADER_HEIGHT), 6, 6)
        head_color = STATUS_COLORS["failed"] if look.status == "failed" else self._color
        painter.fillPath(head, head_color)
        painter.fillRect(QRectF(0, HEADER_HEIGHT - 6, self.width, 6), head_color)
        self._paint_header(painter)
        if lod > PORTS_LOD:
            self._paint_ports(painter, ink)
        self._paint_outline(painter, path, faded, colors)
        self._paint_badges(painter)

    def block_color(self) -> QColor:
        """The colour of the node drawn as a block (overview, minimap)."""
        return self._state_color() or self._color

    def _paint_block(self, painter: QPainter, rect: QRectF, lod: float) -> None:
        """Zoomed out: the block keeps its category colour (or the overlay the user asked
        for); the run state is a frame and a badge, so "ran" never reads as a category."""
        look = self.look
        badge = BADGE_PX / lod
        # badges from the zoom where names show (tiles below it hold strips instead)
        fits = lod > BLOCK_TEXT_MIN_LOD and rect.width() > 2 * badge
        fill = look.overlay or self._color
        if look.status == "failed" or look.is_next and not fits:
            # a failure must stand out at any zoom (red is no category's colour); "next"
            # fills orange only where its badge would not show
            fill = self._state_color() or fill
        painter.fillRect(rect, fill)
        self._paint_block_name(painter, lod, fill)
        frame = self._state_color() if look.status in ("failed", "running", "stale") \
            or look.is_next else None
        if frame is not None:
            pen = QPen(frame, 3)
            pen.setCosmetic(True)
            if look.status == "stale":
                pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(rect)
        if fits:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            self._paint_block_badges(painter, rect, badge, 1 / lod)
        else:                      # strips where a badge would not show
            if look.status == "done":
                painter.fillRect(QRectF(0, rect.height() * 0.65, rect.width(),
                                        rect.height() * 0.35), STATUS_COLORS["done"])
            if look.breakpoint:
                painter.fillRect(QRectF(0, 0, rect.width() * 0.3, rect.height()),
                                 BREAKPOINT_COLOR)
        if self.isSelected():      # a blue frame, two pixels wide at any zoom
            pen = QPen(QColor("#1f78d1"), 2.5)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(rect)

    def _paint_block_badges(self, painter: QPainter, rect: QRectF, size: float,
                            px: float) -> None:
        """The breakpoint dot on the top left corner, the state glyph (✓ ran, ✕ failed,
        ▶ next, ● running) on the top right one, clear of the name: shapes of the same
        screen size at any zoom."""
        look = self.look
        r = size / 2
        ring = QPen(QColor("white"), 1.5 * px)
        if look.breakpoint:
            painter.setPen(ring)
            painter.setBrush(BREAKPOINT_COLOR)
            painter.drawEllipse(QPointF(r * 0.3, -r * 0.3), r, r)
        if look.rank:
            font = QFont(painter.font())
            font.setBold(True)
            font.setPixelSize(max(1, round(size * 0.8)))
            painter.setFont(font)
            w = QFontMetricsF(font).horizontalAdvance(look.rank) + size * 0.5
            self._paint_rank(painter, QRectF(-size * 0.3, rect.height() - size * 0.5, w,
                                             size * 1.1))
        state = "failed" if look.status == "failed" else "next" if look.is_next \
            else "warned" if look.status == "done" and look.warnings \
            else look.status if look.status in ("done", "running") else ""
        if not state:
            return
        c = QPointF(rect.width() - r * 0.3, -r * 0.3)
        painter.setPen(ring)
        painter.setBrush(STATUS_COLORS[state])
        painter.drawEllipse(c, r, r)
        glyph = QPen(ink_on(STATUS_COLORS[state]), max(1.6 * px, size * 0.14))
        glyph.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(glyph)
        k = r * 0.45
        if state == "warned":
            painter.drawLine(c + QPointF(0, -k * 1.1), c + QPointF(0, k * 0.25))
            painter.drawPoint(c + QPointF(0, k * 0.95))
        elif state == "done":
            painter.drawPolyline([c + QPointF(-k, 0), c + QPointF(-k * 0.3, k * 0.8),
                                  c + QPointF(k, -k * 0.7)])
        elif state == "failed":
            painter.drawLine(c + QPointF(-k, -k), c + QPointF(k, k))
            painter.drawLine(c + QPointF(-k, k), c + QPointF(k, -k))
        elif state == "next":
            painter.setBrush(ink_on(STATUS_COLORS[state]))
            painter.drawPolygon([c + QPointF(-k * 0.6, -k), c + QPointF(k, 0),
                                 c + QPointF(-k * 0.6, k)])

    def block_label(self, lod: float) -> tuple[str, int]:
        """The name a block shows at ``lod`` and its pixel size: the label, else the short
        op name ("Conv2d"), else its compact form ("Conv", "Quant", "OUT"), whichever fits
        whole at 11 to 8 px (a name may overhang the block by ``OVERHANG`` a side, on a
        plate of the block's colour); only then the compact name cut at its end, never a
        "q…t"."""
        room = (self.width + 2 * OVERHANG) * lod - 4
        short = short_name(self.node.op)
        names = [n for n in (self.node.label, short, COMPACT_NAMES.get(short, short)) if n]
        for name in names:
            for size in BLOCK_TEXT_SIZES:
                if _block_metrics(size).horizontalAdvance(name) * 1.08 <= room:
                    return name, size
        size = BLOCK_TEXT_SIZES[-1]
        return _block_metrics(size).elidedText(names[-1], Qt.TextElideMode.ElideRight,
                                               room / 1.08), size

    def _paint_block_name(self, painter: QPainter, lod: float, fill: QColor) -> None:
        """Zoomed out: a readable name on the block (see ``block_label``), as long as the
        block is tall enough on screen to hold it."""
        if lod <= BLOCK_TEXT_MIN_LOD:
            return
        text, size = self.block_label(lod)
        if not text:
            return
        wide = _block_metrics(size).horizontalAdvance(text) / lod + 6 / lod
        h = size * 1.4 / lod
        if wide > self.width or h > self.height:   # overhangs: on a plate of its colour
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(fill)
            painter.drawRoundedRect(QRectF((self.width - wide) / 2, (self.height - h) / 2,
                                           wide, h), 2 / lod, 2 / lod)
        font = QFont(painter.font())
        font.setBold(True)
        font.setPixelSize(max(1, int(size / lod)))
        painter.setFont(font)
        painter.setPen(ink_on(fill))
        painter.drawText(QRectF(-OVERHANG, 0, self.width + 2 * OVERHANG, self.height),
                         Qt.AlignmentFlag.AlignCenter, text)

    def _state_color(self) -> QColor | None:
        look = self.look
        if look.status == "failed":
            return STATUS_COLORS["failed"]
        if look.is_next:
            return STATUS_COLORS["next"]
        if look.problems:
            return STATUS_COLORS["problem"]
        # an overlay the user asked for (compare, ranges) shows through the plain run states
        return look.overlay or STATUS_COLORS.get(look.status)

    def _paint_header(self, painter: QPainter) -> None:
        painter.setPen(QColor("white"))
        font = QFont(painter.font())
        font.setPointSizeF(9.5)
        font.setBold(True)
        painter.setFont(font)
        inner = self.width - 2 * HEADER_PAD
        op = painter.fontMetrics().elidedText(self.node.op, Qt.TextElideMode.ElideMiddle,
                                              int(inner))
        painter.drawText(QRectF(HEADER_PAD, 2, inner, 19), Qt.AlignmentFlag.AlignVCenter, op)
        font.setBold(False)
        font.setPointSizeF(8.5)
        painter.setFont(font)
        sub = f"0x{self.node_id:x}" + (f"  {self.node.label}" if self.node.label else "")
        if self.look.rewrite == "replaced" and self.look.runs_as:
            sub = f"0x{self.node_id:x}  runs as {self.look.runs_as}"
        elided = painter.fontMetrics().elidedText(sub, Qt.TextElideMode.ElideRight,
                                                  int(self.width - 16))
        painter.drawText(QRectF(8, 19, self.width - 16, 18), Qt.AlignmentFlag.AlignVCenter,
                         elided)

    def _paint_ports(self, painter: QPainter, ink: ThemeColors) -> None:
        font = QFont(painter.font())
        font.setPointSizeF(8)
        painter.setFont(font)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        mono.setPointSizeF(8)
        half = self.width / 2 - 6
        for k, port in enumerate(self.inputs):
            y = self._row_y(k)
            self._port_dot(painter, QPointF(0, y), port.connected or bool(port.folded), ink)
            painter.setPen(ink.body_text)
            painter.setFont(font)
            painter.drawText(QRectF(9, y - 8, half, 16), Qt.AlignmentFlag.AlignVCenter,
                             port.name)
            if port.folded:
                painter.setFont(mono)
                painter.setPen(ink.folded_text)
                width = painter.fontMetrics().horizontalAdvance(port.name + "  ")
                text = painter.fontMetrics().elidedText(
                    "= " + port.folded, Qt.TextElideMode.ElideRight, int(self.width - width - 24))
                painter.drawText(QRectF(9 + width, y - 8, self.width, 16),
                                 Qt.AlignmentFlag.AlignVCenter, text)
        if self.can_append:
            y = self._row_y(len(self.inputs))
            painter.setPen(QPen(ink.muted, 1, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(QPointF(0, y), PORT_RADIUS, PORT_RADIUS)
            painter.setFont(font)
            painter.setPen(ink.muted)
            painter.drawText(QRectF(9, y - 8, half, 16), Qt.AlignmentFlag.AlignVCenter, "+")
        painter.setFont(font)
        for k, port in enumerate(self.outputs):
            y = self._row_y(k)
            self._port_dot(painter, QPointF(self.width, y), True, ink)
            painter.setPen(ink.body_text)
            painter.drawText(QRectF(self.width / 2, y - 8, half, 16),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                             port.name)

    def _port_dot(self, painter: QPainter, center: QPointF, filled: bool,
                  ink: ThemeColors) -> None:
        painter.setPen(QPen(ink.port, 1))
        painter.setBrush(QBrush(ink.port if filled else ink.port_hollow))
        painter.drawEllipse(center, PORT_RADIUS, PORT_RADIUS)

    def _paint_outline(self, painter: QPainter, path: QPainterPath, faded: bool,
                       colors: ThemeColors) -> None:
        look = self.look
        color = self._state_color() if look.status != "pending" or look.is_next else None
        width = 3.5 if look.is_next or look.status in ("failed", "running") else 2.5
        pen = QPen(color or colors.outline, width if color else 1)
        if look.status == "stale" or faded:
            pen.setStyle(Qt.PenStyle.DashLine)
        if self.isSelected():
            pen = QPen(colors.selection, 3.5 if color is None else width)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(pen)
        painter.drawPath(path)
        if self.isSelected() and color is not None:
            painter.setPen(QPen(colors.selection, 1.5, Qt.PenStyle.DotLine))
            painter.drawRoundedRect(QRectF(-6, -6, self.width + 12, self.height + 12), 9, 9)

    def _paint_badges(self, painter: QPainter) -> None:
        look = self.look
        font = QFont(painter.font())
        font.setPointSizeF(8)
        font.setBold(True)
        painter.setFont(font)
        if look.breakpoint:
            painter.setPen(QPen(QColor("white"), 2))
            painter.setBrush(BREAKPOINT_COLOR)
            painter.drawEllipse(QPointF(-2, -2), 10, 10)
        if look.is_next:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(STATUS_COLORS["next"])
            arrow = [QPointF(-14, 8), QPointF(-4, 14), QPointF(-14, 20)]
            painter.drawPolygon(arrow)
        if look.rank:
            self._paint_rank(painter, QRectF(12, -16, painter.fontMetrics().horizontalAdvance(
                look.rank) + 10, 14))
        tag, color = self._tag()
        if tag:
            metrics = painter.fontMetrics()
            w = metrics.horizontalAdvance(tag) + 10
            box = QRectF(self.width - w - 4, self.height + 2, w, 14)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(color)
            painter.drawRoundedRect(box, 3, 3)
            painter.setPen(ink_on(color))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, tag)
        if look.problems:
            painter.setPen(QPen(STATUS_COLORS["problem"], 1))
            painter.setBrush(STATUS_COLORS["problem"])
            painter.drawEllipse(QPointF(self.width - 2, -2), 7, 7)
            painter.setPen(QColor("white"))
            painter.drawText(QRectF(self.width - 9, -9, 14, 14), Qt.AlignmentFlag.AlignCenter,
                             "!")

    def _paint_rank(self, painter: QPainter, box: QRectF) -> None:
        """The rank badge (``NodeLook.rank``): white on dark red, over any overlay."""
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(RANK_COLOR)
        painter.drawRoundedRect(box, box.height() * 0.2, box.height() * 0.2)
        painter.setPen(QColor("white"))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, self.look.rank)

    def _tag(self) -> tuple[str, QColor]:
        look = self.look
        if look.status == "failed":
            return "failed", STATUS_COLORS["failed"]
        if look.status == "stale":
            return "stale", STATUS_COLORS["stale"]
        if look.rewrite in ("fused", "removed"):
            return look.rewrite, QColor("#777")
        if look.status == "running":
            return "running", STATUS_COLORS["running"]
        if look.status == "done":
            ms = f" {look.seconds * 1e3:.2f} ms" if look.seconds is not None else ""
            if look.warnings:
                return "! warning" + ms, STATUS_COLORS["warned"]
            return "✓" + ms, STATUS_COLORS["done"]
        if look.is_next:
            return "next", STATUS_COLORS["next"]
        return "", QColor()


_BLOCK_METRICS: dict[int, QFontMetricsF] = {}


def _block_metrics(pixel_size: int) -> QFontMetricsF:
    if pixel_size not in _BLOCK_METRICS:
        font = QFont()
        font.setBold(True)
        font.setPixelSize(pixel_size)
        _BLOCK_METRICS[pixel_size] = QFontMetricsF(font)
    return _BLOCK_METRICS[pixel_size]


def short_name(op: str) -> str:
    """A short name for the overview: QuantizedConv2d_8x8to32 -> Conv2d,
    QuantizeDownAndShrinkRange_32to8 -> Requantize, QuantizedRelu_8 -> Relu."""
    base = op.split("_", 1)[0] or op
    base = SHORT_NAMES.get(base, base)
    if base.startswith("Quantized") and len(base) > len("Quantized"):
        base = base[len("Quantized"):]
    return base


SHORT_NAMES = {"QuantizeDownAndShrinkRange": "Requantize", "Supernode": "Supernode"}
#: Short names shortened again for a narrow block (the issue's "Conv", "Relu", "Add").
COMPACT_NAMES = {
    "Conv2d": "Conv", "Quantize": "Quant", "Requantize": "ReQ", "Dequantize": "DeQ",
    "AutoQuantize": "AutoQ", "QuantizeForTest": "QTest", "Supernode": "SNode",
    "FillPadding": "Fill", "PPrintWithPadding": "Print", "Variable": "Var",
    "Sigmoid": "Sigm", "Softmax": "Smax", "ConcatV2": "Cat", "Concat": "Cat", "BiasAdd": "Bias",
    "Flatten": "Flat", "OUTPUT": "OUT", "INPUT": "IN", "MaxPool": "MaxP", "AvgPool": "AvgP",
    "Convert": "Cvt",
}


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
