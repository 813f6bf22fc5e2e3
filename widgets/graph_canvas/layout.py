"""Layered layout in execution order (no Qt; fast enough for 1,000s of nodes).

Left to right (the default): each node sits one column right of its rightmost producer; a
const sits one column left of its first consumer. Within a column, nodes are ordered by the
mean row of their producers (one barycentre sweep), which removes most crossings in the
chains hexagon_nn graphs are. A long layout wraps into bands stacked top to bottom, so it
reads when fitted to the view.

Top to bottom (View > Layout direction): the same layers as rows, one below the other, the
nodes of a layer side by side; a very tall layout wraps into columns side by side, like a
newspaper. It is the left-to-right layout computed with the axes swapped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from hexscope.engine.graph import Graph

NODE_WIDTH = 190.0
HEADER_HEIGHT = 40.0
PORT_HEIGHT = 17.0
FOOTER_HEIGHT = 8.0
COLUMN_GAP = 70.0
ROW_GAP = 36.0
BAND_GAP = 160.0         # between the bands a long layout wraps into
LAYER_GAP_TB = 70.0      # top to bottom: between layers (edges turn in this gap)
NODE_GAP_TB = 50.0       # top to bottom: between the nodes of a layer
LEFT_TO_RIGHT, TOP_TO_BOTTOM = "left-to-right", "top-to-bottom"
DIRECTIONS = (LEFT_TO_RIGHT, TOP_TO_BOTTOM)
WRAP_ASPECT = 1.6        # a layout wider than twice this (width / height) wraps
MIN_WRAP_COLUMNS = 6     # ... if it has more columns than this (a 14-column line fitted
#                          to a 1024x700 window was 12 px tall, too small for names)

Size = tuple[float, float]


def node_size(n_inputs: int, n_outputs: int) -> Size:
    """Width and height of a node drawn with this many port rows."""
    rows = max(n_inputs, n_outputs, 1)
    return NODE_WIDTH, HEADER_HEIGHT + rows * PORT_HEIGHT + FOOTER_HEIGHT


def layers(graph: Graph, visible: Iterable[int]) -> dict[int, int]:
    """The column of every visible node."""
    shown = set(visible)
    column: dict[int, int] = {}
    for node in graph:
        if node.node_id not in shown:
            continue
        preds = [column[s] for s, _ in node.inputs if s in column]
        column[node.node_id] = 1 + max(preds) if preds else 0
    for node in graph:
        nid = node.node_id
        if nid in shown and node.is_const:
            consumers = [column[d] for d, _, _ in graph.consumers(nid) if d in column]
            if consumers:
                column[nid] = max(0, min(consumers) - 1)
    return column


def layered_layout(graph: Graph, visible: Iterable[int], size_of: Callable[[int], Size],
                   wrap: bool = True, direction: str = LEFT_TO_RIGHT
                   ) -> dict[int, tuple[float, float]]:
    """Top-left positions of the visible nodes: columns left to right, each centred on
    y = 0, or (``TOP_TO_BOTTOM``) rows top to bottom, each centred on x = 0."""
    if direction == TOP_TO_BOTTOM:
        def swapped(nid: int) -> Size:
            width, height = size_of(nid)
            return height, width

        # Wrapped into columns for a screen wider than tall: in the swapped frame, a layout
        # taller than wide.
        flipped = _layered(graph, visible, swapped, wrap, LAYER_GAP_TB, NODE_GAP_TB,
                           1 / WRAP_ASPECT)
        return {nid: (y, x) for nid, (x, y) in flipped.items()}
    if direction != LEFT_TO_RIGHT:
        raise ValueError(f"layout direction {direction!r}: expected one of {DIRECTIONS}")
    return _layered(graph, visible, size_of, wrap, COLUMN_GAP, ROW_GAP, WRAP_ASPECT)


def _layered(graph: Graph, visible: Iterable[int], size_of: Callable[[int], Size],
             wrap: bool, column_gap: float, row_gap: float, aspect: float
             ) -> dict[int, tuple[float, float]]:
    column = layers(graph, visible)
    rank = {nid: k for k, nid in enumerate(graph.order)}
    by_column: dict[int, list[int]] = {}
    for nid in sorted(column, key=rank.__getitem__):
        by_column.setdefault(column[nid], []).append(nid)
    positions: dict[int, tuple[float, float]] = {}
    rows: dict[int, float] = {}
    # Two sweeps: the second places consts next to the consumers the first one placed.
    for _ in range(2):
        positions, rows = _place(graph, by_column, size_of, rank, rows, column_gap, row_gap)
    return wrap_bands(positions, size_of, aspect) if wrap else positions


def wrap_bands(positions: dict[int, tuple[float, float]], size_of: Callable[[int], Size],
               aspect: float = WRAP_ASPECT) -> dict[int, tuple[float, float]]:
    """Cut a layout much wider than ``aspect`` into bands stacked top to bottom, like lines
    of text, so a long chain fitted to the view is not a one-pixel line. Columns stay
    whole and in order; each band starts at x = 0 below the previous one."""
    if not positions:
        return positions
    columns: dict[float, list[int]] = {}
    for nid, (x, _) in positions.items():
        columns.setdefault(x, []).append(nid)
    xs = sorted(columns)
    spans = {x: (min(positions[n][1] for n in columns[x]),
                 max(positions[n][1] + size_of(n)[1] for n in columns[x])) for x in xs}
    width = xs[-1] + max(size_of(n)[0] for n in columns[xs[-1]])
    top = min(lo for lo, _ in spans.values())
    height = max(hi for _, hi in spans.values()) - top
    if len(xs) <= MIN_WRAP_COLUMNS or width <= 2 * aspect * height:
        return positions
    # Bands of equal width W with W / (bands * height) close to ``aspect``.
    band_width = max(math.sqrt(width * height * aspect), xs[0] + 1.0)
    return _stack_bands(positions, columns, xs, spans, band_width)


def _stack_bands(positions: dict[int, tuple[float, float]], columns: dict[float, list[int]],
                 xs: list[float], spans: dict[float, tuple[float, float]], band_width: float
                 ) -> dict[int, tuple[float, float]]:
    bands: list[list[float]] = [[]]
    band_x = xs[0]
    for x in xs:
        if x - band_x > band_width:
            bands.append([])
            band_x = x
        bands[-1].append(x)
    out: dict[int, tuple[float, float]] = {}
    y = 0.0
    for band in bands:
        lo = min(spans[x][0] for x in band)
        hi = max(spans[x][1] for x in band)
        for x in band:
            for nid in columns[x]:
                out[nid] = (x - band[0], positions[nid][1] - lo + y)
        y += hi - lo + BAND_GAP
    return out


def _place(graph: Graph, by_column: dict[int, list[int]], size_of: Callable[[int], Size],
           rank: dict[int, int], previous: dict[int, float], column_gap: float,
           row_gap: float) -> tuple[dict[int, tuple[float, float]], dict[int, float]]:
    positions: dict[int, tuple[float, float]] = {}
    row_of: dict[int, float] = {}
    x = 0.0
    for col in sorted(by_column):
        ids = sorted(by_column[col],
                     key=lambda nid: _barycentre(graph, nid, row_of, previous, rank))
        heights = [size_of(nid)[1] for nid in ids]
        y = -(sum(heights) + row_gap * (len(ids) - 1)) / 2
        width = 0.0
        for nid, h in zip(ids, heights, strict=True):
            positions[nid] = (x, y)
            row_of[nid] = y + h / 2
            y += h + row_gap
            width = max(width, size_of(nid)[0])
        x += width + column_gap
    return positions, row_of


def _barycentre(graph: Graph, nid: int, row_of: dict[int, float],
                previous: dict[int, float], rank: dict[int, int]) -> float:
    node = graph.node(nid)
    if node.is_const and previous:
        rows = [previous[d] for d, _, _ in graph.consumers(nid) if d in previous]
    else:
        rows = [row_of[s] for s, _ in node.inputs if s in row_of]
    if rows:
        return sum(rows) / len(rows) + rank[nid] * 1e-6
    # Sources with nothing placed yet keep their execution order, below what is placed.
    return 1e9 + rank[nid]
