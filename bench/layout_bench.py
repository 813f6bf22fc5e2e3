"""Load and lay out a 1,000-node graph the way the app does (target: under 1.5 s).

Builds a hexagon_nn-like chain (each op reads the previous one plus a tiny range const and
a weight const), saves it, then times: load the .hexgraph, build the canvas scene, compute
the layered layout and apply it, and render the whole scene once offscreen.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/layout_bench.py [NODES]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from hexscope.engine import Graph  # noqa: E402
from hexscope.widgets.graph_canvas import GraphScene  # noqa: E402


def make_graph(n_ops: int) -> Graph:
    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    prev = 1
    node_id = 2
    while len(g) < n_ops - 1:
        lo, w = 0x100000 + node_id, 0x200000 + node_id
        g.append_const_node(lo, np.array([-1.0], np.float32))
        g.append_const_node(w, np.zeros((1, 1, 8, 8), np.uint8))
        g.append_node(node_id, "Nop", inputs=[(prev, 0), (lo, 0), (w, 0)], outputs=3)
        prev, node_id = node_id, node_id + 1
    g.append_node(node_id, "OUTPUT", inputs=[(prev, 0)])
    return g


def main(n_nodes: int = 1000) -> float:
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.hexgraph")
        make_graph(n_nodes).save(path)
        start = time.perf_counter()
        graph = Graph.load(path)
        t_load = time.perf_counter()
        scene = GraphScene(graph)
        t_scene = time.perf_counter()
        graph.move(scene.layout_positions())
        t_layout = time.perf_counter()
    image = QImage(1600, 900, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    scene.render(painter, QRectF(image.rect()), scene.itemsBoundingRect())
    painter.end()
    t_render = time.perf_counter()
    total = t_layout - start
    print(f"{len(graph)} nodes ({len(scene.items_by_id)} drawn, "
          f"{len(graph) - len(scene.items_by_id)} consts folded)")
    print(f"load {t_load - start:.3f} s, scene {t_scene - t_load:.3f} s, "
          f"layout+apply {t_layout - t_scene:.3f} s")
    print(f"load + lay out: {total:.3f} s (target < 1.5 s); "
          f"full render zoomed out: {t_render - t_layout:.3f} s")
    del app
    return total


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
