"""An edge from an output port to an input port, drawn as a horizontal S-curve."""

from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QStyleOptionGraphicsItem,
    QWidget,
)

from hexscope.widgets.graph_canvas.crossings import Segment
from hexscope.widgets.graph_canvas.node_item import LOD_SIMPLE, NodeItem
from hexscope.widgets.theme_colors import LIGHT, theme_colors

EDGE_COLOR = LIGHT.edge
BACK_BEND = 80.0
MIN_BEND = 40.0
# Below this zoom, nodes are blocks of a few pixels and edges only a grey haze. (Tiles are
# rendered at powers of two: at 1/32 they have no edges, at 1/16 they do.)
EDGE_MIN_LOD = 0.04
SHAPE_HALF = 4.0          # half the width of the band along the curve that clicks hit

#: Opacity of an edge passing over other nodes, and of its halo, while not highlighted.
_PASSING_LINE_ALPHA = 0.55
_PASSING_HALO_ALPHA = 0.35


def curve_segments(sx: float, sy: float, ex: float, ey: float,
                   gap_y: float | None = None) -> list[Segment]:
    """The cubic segments of the edge from an output at (sx, sy) to an input at (ex, ey):
    an S-curve whose bend grows with the horizontal distance.

    ``gap_y`` is a height between the two nodes when the consumer lies wholly below the
    producer. If the consumer is then not to the right (a top-to-bottom layout's next
    layer, the next band of a wrapped one), the edge leaves to the right, turns down into
    that gap, runs along it and comes into the input from the left: an S-curve would cut
    diagonally through both nodes.
    """
    if gap_y is not None and ex < sx - 2 * MIN_BEND:
        # Well to the left (the next band): each turn a half loop within the column gap
        # beside its port, and a straight run along the gap. Two curves meeting halfway
        # swept diagonally over the nodes above the consumer and below the producer.
        b = MIN_BEND
        return [(sx, sy, sx + b, sy, sx + b, gap_y, sx, gap_y),
                (sx, gap_y, sx, gap_y, ex, gap_y, ex, gap_y),
                (ex, gap_y, ex - b, gap_y, ex - b, ey, ex, ey)]
    if gap_y is not None and ex < sx + 2 * MIN_BEND:
        bend = BACK_BEND if ex < sx - BACK_BEND else MIN_BEND
        mx = (sx + ex) / 2
        return [(sx, sy, sx + bend, sy, sx + bend, gap_y, mx, gap_y),
                (mx, gap_y, ex - bend, gap_y, ex - bend, ey, ex, ey)]
    bend = max(MIN_BEND, abs(ex - sx) * 0.5)
    if ex < sx:
        # A backward edge (to the next band of a wrapped layout): a bend as wide as the
        # distance would swing far outside the graph and make zoom-to-fit shrink it.
        bend = BACK_BEND
    return [(sx, sy, sx + bend, sy, ex - bend, ey, ex, ey)]


def curve(start: QPointF, end: QPointF) -> QPainterPath:
    """The path of :func:`curve_segments` between two ports."""
    return _path(curve_segments(start.x(), start.y(), end.x(), end.y()))


def _path(segments: list[Segment]) -> QPainterPath:
    path = QPainterPath(QPointF(segments[0][0], segments[0][1]))
    for _, _, ax, ay, bx, by, ex, ey in segments:
        path.cubicTo(QPointF(ax, ay), QPointF(bx, by), QPointF(ex, ey))
    return path


class EdgeItem(QGraphicsPathItem):
    """Output ``src_port`` of ``src`` to input ``dst_port`` of ``dst``."""

    def __init__(self, src: NodeItem, src_port: int, dst: NodeItem, dst_port: int) -> None:
        super().__init__()
        self.src, self.src_port, self.dst, self.dst_port = src, src_port, dst, dst_port
        self.highlighted = False
        self._bounds = QRectF()
        self.crossing = False             # passes over a node: drawn above it, with a halo
        pen = QPen(EDGE_COLOR, 1.6)
        pen.setCosmetic(True)
        self.setPen(pen)
        self.setZValue(0)
        # Click an edge, then Delete, to disconnect (hexagon_nn allows it on the last input).
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setToolTip(f"0x{src.node_id:x}:{src_port} → 0x{dst.node_id:x} input {dst_port}")
        src.edges.append(self)
        dst.edges.append(self)
        self.update_path()

    def update_path(self, check: bool = True) -> None:
        """Follow the ports (after a move); ``check`` False leaves the crossing test to the
        caller (the scene checks many edges in one pass)."""
        start, end = self.src.output_pos(self.src_port), self.dst.input_pos(self.dst_port)
        self._line = QLineF(start, end)     # the zoomed-out drawing (painted by the thousand)
        bottom, top = self.src.y() + self.src.height, self.dst.y()
        gap = (bottom + top) / 2 if top > bottom else None
        self.segments = curve_segments(start.x(), start.y(), end.x(), end.y(), gap)
        path = _path(self.segments)
        self.prepareGeometryChange()     # with the old bounds: the scene's index finds it
        self._bounds = path.controlPointRect().adjusted(-SHAPE_HALF, -SHAPE_HALF,
                                                        SHAPE_HALF, SHAPE_HALF)
        self.setPath(path)
        scene = self.scene()
        if check and scene is not None and hasattr(scene, "node_grid"):
            self.set_crossing(bool(scene.node_grid.crossing([(self.src, self.dst,
                                                              self.segments)])[0]))

    def set_crossing(self, crossing: bool) -> None:
        """An edge that passes over a node other than its ends could be read as that node's
        edge: it is drawn above the nodes, with a halo (see paint)."""
        if crossing != self.crossing:
            self.crossing = crossing
            self._restack()
            self.update()

    def _restack(self) -> None:
        self.setZValue(2 if self.highlighted or self.crossing else 0)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < EDGE_MIN_LOD:
            return          # nodes of a few pixels: edges would only be a grey haze
        colors = theme_colors()
        pen = self.pen()
        if not self.highlighted:
            pen.setColor(colors.edge)      # follows the theme; a highlight keeps its colour
        if lod >= LOD_SIMPLE:
            # The halo only where nodes show ports and text: below LOD_SIMPLE a node is a
            # plain block with no ports an edge could be mistaken to reach, the edge (drawn
            # above it) stays visible across its colour, and a 7-pixel white band around
            # every crossing edge would wash out the overview.
            if self.highlighted or self.crossing:
                halo_color = QColor(colors.halo)
                if not self.highlighted:
                    # a passing edge, translucent: the ports and names it crosses stay
                    # readable through it (opaque, it hid them on large graphs)
                    halo_color.setAlphaF(_PASSING_HALO_ALPHA)
                    color = QColor(pen.color())
                    color.setAlphaF(_PASSING_LINE_ALPHA)
                    pen.setColor(color)
                halo = QPen(halo_color, 7.0)
                halo.setCosmetic(True)
                painter.setPen(halo)
                painter.drawPath(self.path())
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(self.path())
            return
        # Zoomed out, where a curve is a few pixels: a straight line, no antialiasing
        # (tens of thousands of edges are drawn when a large graph is fitted). An edge
        # routed through the gap below its producer keeps its route: straight, the back
        # edge of a wrapped band would cross the whole band.
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(pen)
        if len(self.segments) > 1:
            painter.strokePath(self.path(), pen)
        else:
            painter.drawLine(self._line)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        # Kept from update_path. Qt's own, for a pen wider than 0, is the rect of shape():
        # a Python call that strokes the path (~20 us an edge: 0.3 s for the 15,000 edges
        # of a 10,000-node graph at its first paint, all at once).
        return self._bounds

    def shape(self) -> QPainterPath:
        # A band along the curve: the path's own shape is its filled hull, which would make
        # clicks far from the line select it.
        stroker = QPainterPathStroker()
        stroker.setWidth(2 * SHAPE_HALF)
        return stroker.createStroke(self.path())

    def detach(self) -> None:
        for item in (self.src, self.dst):
            if self in item.edges:
                item.edges.remove(self)

    def set_highlight(self, color: QColor | None) -> None:
        pen = QPen(color or EDGE_COLOR, 2.6 if color else 1.6)
        pen.setCosmetic(True)
        if color is None:
            pen.setStyle(Qt.PenStyle.SolidLine)
        self.setPen(pen)
        self.highlighted = color is not None
        # Above the nodes (z 1), so it cannot pass behind one; the halo keeps it apart.
        self._restack()
