"""The graph drawn for a report: a layered layout (or the editor's positions), each node a
box coloured by its error, its time or its diff, as inline SVG.

Readable at every size: up to ``LABEL_LIMIT`` nodes each box carries its op; beyond, nodes
are blocks without labels and a long graph wraps into bands (as the canvas does zoomed
out); beyond ``RASTER_LIMIT`` the boxes and wires are one embedded PNG, so a 10,000-node
report stays a few megabytes and opens at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
from matplotlib.collections import LineCollection
from matplotlib.patches import Patch

from hexscope.engine.nodes import Node
from hexscope.engine.report.figures import figure_svg, new_figure

LABEL_LIMIT = 120
RASTER_LIMIT = 2500
CONST_ROWS = 3            # a node's consts stack in this many rows, then side by side
SPREAD = 1.5              # columns apart, in rows (a box is wider than tall)
BAND_COLUMNS = 60          # columns per band once a graph is drawn without labels
PLAIN = "#d9dee5"
EDGE = "#8a94a3"


@dataclass(frozen=True, slots=True)
class Key:
    """One entry of the drawing's legend."""

    label: str
    colour: str


def layered_positions(nodes: Sequence[Node]) -> dict[int, tuple[float, float]]:
    """Where :func:`layered_layout` puts each node."""
    return layered_layout(nodes)[0]


def layered_layout(nodes: Sequence[Node]
                   ) -> tuple[dict[int, tuple[float, float]], dict[int, int]]:
    """Column = longest path from a source (consts half a column before their first
    consumer), row = order of appearance in the column; long graphs wrap into bands.
    Returns the positions and each node's band."""
    readers_of: dict[int, list[int]] = {}
    for n in nodes:
        for src, _ in n.inputs:
            readers_of.setdefault(src, []).append(n.node_id)
    dag = nx.DiGraph()
    dag.add_nodes_from(n.node_id for n in nodes if not n.is_const)
    for n in nodes:
        if not n.is_const:
            dag.add_edges_from((src, n.node_id) for src, _ in n.inputs
                               if src in dag and src != n.node_id)
    try:
        order = list(nx.topological_sort(dag))
    except nx.NetworkXUnfeasible:           # an invalid graph with a cycle: file order
        order = [n.node_id for n in nodes if not n.is_const]
    level: dict[int, float] = {}
    for nid in order:
        level[nid] = 1 + max((level.get(p, -1) for p in dag.predecessors(nid)), default=-1)
    for n in nodes:
        if n.is_const:
            readers = [level[c] for c in readers_of.get(n.node_id, ()) if c in level]
            level[n.node_id] = (min(readers) if readers else 0) - 0.5
    columns: dict[float, list[int]] = {}
    for n in nodes:
        columns.setdefault(level[n.node_id], []).append(n.node_id)
    return _bands(columns, wrap=len(nodes) > LABEL_LIMIT)


def _bands(columns: dict[float, list[int]], wrap: bool
           ) -> tuple[dict[int, tuple[float, float]], dict[int, int]]:
    xs = sorted(columns)
    height = max((len(c) if x == int(x) else min(len(c), CONST_ROWS)
                  for x, c in columns.items()), default=1)
    per_band = BAND_COLUMNS if wrap and len(xs) > BAND_COLUMNS * 1.5 else len(xs) or 1
    positions: dict[int, tuple[float, float]] = {}
    bands: dict[int, int] = {}
    first = xs[0] if xs else 0.0
    for x in xs:
        band, col = divmod(x - first, per_band)
        base = band * (height + 1.5)
        # consts (half columns) sit between the rows of the nodes, never under one
        if x != int(x):
            for k, nid in enumerate(columns[x]):
                sub, row = divmod(k, CONST_ROWS)
                positions[nid] = (col * SPREAD - 0.2 * sub, base + row + 0.55)
                bands[nid] = int(band)
            continue
        for row, nid in enumerate(columns[x]):
            positions[nid] = (col * SPREAD, base + row)
            bands[nid] = int(band)
    return positions, bands


def editor_positions(nodes: Sequence[Node]) -> dict[int, tuple[float, float]] | None:
    """The editor's positions in layout units (one column ~ 220 px), if every node has one."""
    if not nodes or any(n.position is None for n in nodes):
        return None
    return {n.node_id: (n.position[0] / 220.0, n.position[1] / 90.0)  # type: ignore[index]
            for n in nodes}


def draw_graph(nodes: Sequence[Node], colours: Mapping[int, str], title: str,
               legend: Sequence[Key] = (), width: float = 10.0) -> str:
    """The graph as an ``<svg>``: nodes coloured by ``colours`` (others plain), wires grey."""
    nodes = list(nodes)
    pos = editor_positions(nodes) if len(nodes) <= LABEL_LIMIT else None
    band: dict[int, int] = {}
    if pos is None:
        pos, band = layered_layout(nodes)
    xs = [p[0] for p in pos.values()] or [0.0]
    ys = [p[1] for p in pos.values()] or [0.0]
    span_x, span_y = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    if len(nodes) <= LABEL_LIMIT:       # room for each op's name
        width = min(14.0, max(6.0, span_x * 0.8 + 2.0))
    height = min(40.0, max(2.5, width * span_y / span_x * 0.55))
    fig = new_figure(width, height)
    ax = fig.add_subplot()
    ax.set_title(title, loc="left")
    ax.set_axis_off()
    big = len(nodes) > RASTER_LIMIT
    # a wire between two bands would cross the whole drawing: the bands read in order
    segments = [(pos[src], pos[n.node_id]) for n in nodes for src, _ in n.inputs
                if src in pos and n.node_id in pos
                and band.get(src, 0) == band.get(n.node_id, 0)]
    wires = LineCollection(segments, colors=EDGE, linewidths=0.3 if big else 0.7,
                           alpha=0.5 if len(nodes) > LABEL_LIMIT else 0.9, zorder=1)
    wires.set_rasterized(big)
    ax.add_collection(wires)
    points = [pos[n.node_id] for n in nodes]
    fill = [colours.get(n.node_id, PLAIN) for n in nodes]
    # a block a little smaller than a row, in points (scatter sizes are areas in pt²)
    row_points = min(height * 72.0 / span_y, width * 72.0 / span_x * SPREAD)
    block = max(1.0, (0.7 * row_points) ** 2)
    if len(nodes) <= LABEL_LIMIT:
        for n, (x, y), c in zip(nodes, points, fill, strict=True):
            small = n.is_const
            ax.text(x, y, "" if small else _short(n.op), ha="center", va="center",
                    fontsize=6 if len(nodes) > 40 else 7, zorder=3,
                    bbox={"boxstyle": "round,pad=0.3", "fc": c, "ec": "#4a5260",
                          "lw": 0.5 if small else 0.8})
            if small:
                ax.plot([x], [y], marker="s", ms=4 if c == PLAIN else 7, mfc=c,
                        mec="#4a5260", mew=0.5, zorder=3)
    else:
        dots = ax.scatter([p[0] for p in points], [p[1] for p in points], c=fill,
                          marker="s", s=block, linewidths=0, zorder=2)
        dots.set_rasterized(big)
        # the coloured few must show among thousands: drawn again, larger, outlined
        marked = [(p, c) for p, c in zip(points, fill, strict=True) if c != PLAIN]
        if marked:
            ax.scatter([p[0] for p, _ in marked], [p[1] for p, _ in marked],
                       c=[c for _, c in marked], marker="s", s=max(block, 36.0),
                       edgecolors="#222222", linewidths=0.6, zorder=4)
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(max(ys) + 0.8, min(ys) - 0.8)
    if legend:
        ax.legend(handles=[Patch(fc=k.colour, ec="#4a5260", label=k.label) for k in legend],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    return figure_svg(fig)


def _short(op: str) -> str:
    """An op name short enough for a box (QuantizedConv2d_8x8to32 -> QConv2d_8x8to32)."""
    name = op.replace("Quantized", "Q").replace("DownAndShrinkRange", "Down")
    return name if len(name) <= 14 else name[:13] + "…"


def error_colour(value: float | None, worst: float, log: bool = True) -> str:
    """Green (0) through yellow to red (the worst), on a log scale (errors, whose few large
    ones would hide the rest) or a linear one (times); grey when unknown."""
    if value is None or math.isnan(value):
        return PLAIN
    if value <= 0:
        return _mix(0.0)
    top = max(worst, value, 1e-12)
    return _mix(min(1.0, math.log1p(value) / math.log1p(top) if log else value / top))


# green, yellow, red: the stops of Model Explorer's gradient too (model_explorer.GRADIENT)
STOPS = ((0x8F, 0xD1, 0x9E), (0xFF, 0xE0, 0x66), (0xE5, 0x39, 0x35))


def _mix(share: float) -> str:
    lo, hi, t = (STOPS[0], STOPS[1], share * 2) if share < 0.5 else \
        (STOPS[1], STOPS[2], share * 2 - 1)
    r, g, b = (round(x + (y - x) * t) for x, y in zip(lo, hi, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


__all__ = ["LABEL_LIMIT", "PLAIN", "RASTER_LIMIT", "Key", "draw_graph", "editor_positions",
           "error_colour", "layered_layout", "layered_positions"]
