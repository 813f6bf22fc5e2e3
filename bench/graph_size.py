"""How validate, prepare, the padding check, save, load and the app scale with graph size.

Builds residual networks of real ops (``tests/support/large_graph.py``: convolution layers
with their filter and range consts, requantize, relu, residual adds) at 1k, 5k, 10k and 20k
nodes and prints, per size, the median of ``--repeat`` runs of each engine pass, then (with
``--app``) the time the main window takes to open the graph until it is drawn, and single
edits through the window's own actions: move, connect, delete, relabel, undo. An edit's time
is until the canvas has its new items (the validation that follows 120 ms later is timed on
its own line, "revalidate").

Run::

    .venv/bin/python bench/graph_size.py [--sizes 1000 5000 10000 20000] [--repeat 3] [--app]

``--app`` needs a display (``QT_QPA_PLATFORM=offscreen`` works). The last column is the
growth from the smallest to the largest size divided by the growth in nodes: 1.0 is linear.
The repaint rows have a peer in the same run: the same window's repaint of an empty canvas
(the cost of the window itself); the table after the main one divides by it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hexscope.engine import Graph  # noqa: E402
from hexscope.engine.analysis.padding_check import check_padding  # noqa: E402
from hexscope.engine.prepare import prepare  # noqa: E402
from hexscope.engine.validate import validate  # noqa: E402
from support.large_graph import input_tensor, residual_graph  # noqa: E402


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def engine_rows(g: Graph, repeat: int, tmp: Path) -> dict[str, float]:
    path = tmp / f"g{len(g)}.hexgraph"
    rows = {
        "validate": median_time(lambda: validate(g), repeat),
        "prepare": median_time(lambda: prepare(g), repeat),
        "save": median_time(lambda: g.save(path), repeat),
        "load": median_time(lambda: Graph.load(path), repeat),
        "padding check (2 runs)": median_time(lambda: check_padding(g, [input_tensor()]), 1),
    }
    return rows


def app_rows(g: Graph, repeat: int, tmp: Path) -> dict[str, float]:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from hexscope.app.main_window import MainWindow
    from hexscope.app.settings import AppSettings

    app = QApplication.instance() or QApplication([])
    path = tmp / f"app{len(g)}.hexgraph"
    g.save(path)
    settings = AppSettings(QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
                           root=str(tmp / "appdata"))
    win = MainWindow(settings)
    win.show()
    app.processEvents()
    win.central.setCurrentWidget(win.canvas)         # not the welcome page
    app.processEvents()
    rows = {"repaint, empty canvas (peer)": _repaint(app, win.canvas)}
    t0 = time.perf_counter()
    win.files.open_graph(str(path))
    app.processEvents()            # as after the Open dialog: the scene's changes, a paint
    win.canvas.viewport().repaint()
    rows["app: open until drawn"] = time.perf_counter() - t0
    rows |= repaint_rows(app, win)
    graph = win.graph
    convs = [n.node_id for n in graph if n.op == "QuantizedConv2d_8x8to32"]
    mid = convs[len(convs) // 2]

    # A user edits zoomed in: 100 % around the node; the time includes Qt's repaint of
    # what the edit changed (processEvents), as the user sees it.
    win.canvas.zoom_to(1.0)
    win.canvas.center_on_node(mid)
    app.processEvents()

    def timed(name: str, action: Callable[[], object]) -> None:
        t = time.perf_counter()
        action()
        win._validate_timer.stop()
        app.processEvents()
        rows[f"edit: {name}"] = time.perf_counter() - t

    x, y = graph.node(mid).position or (0.0, 0.0)
    timed("move", lambda: win.edits.move({mid: (x + 50, y + 30)}))
    relu = next(n.node_id for n in graph if n.op == "QuantizedRelu_8")    # an earlier one
    timed("connect", lambda: win.edits.connect(relu, 0, mid, 0))
    assert graph.node(mid).inputs[0] == (relu, 0)
    timed("relabel", lambda: win.edits.set_label(mid, "renamed"))
    win.scene.select_only(mid)
    timed("delete", win.edits.delete_selected)
    timed("undo", win.undo_stack.undo)
    t = time.perf_counter()
    win.revalidate()
    rows["revalidate (after an edit)"] = time.perf_counter() - t
    win.undo_stack.setClean()
    win.shutdown()
    win.close()
    win.deleteLater()
    app.processEvents()
    return rows


def _repaint(app: object, canvas: object, repeat: int = 5) -> float:
    """Median time of a full repaint of the canvas, once its tiles are all rendered."""
    while canvas.tiles.pending:            # type: ignore[attr-defined]
        app.processEvents()                # type: ignore[attr-defined]
    canvas.viewport().repaint()            # type: ignore[attr-defined]
    return median_time(canvas.viewport().repaint, repeat)  # type: ignore[attr-defined]


def repaint_rows(app: object, win: object) -> dict[str, float]:
    """Repaints of the canvas as a user pans and zooms: the whole viewport, after the first
    paint at that zoom (tiles rendered, nodes cached), and the first paint of a zoom step."""
    canvas = win.canvas                    # type: ignore[attr-defined]
    t = time.perf_counter()
    while canvas.tiles.pending:
        app.processEvents()                # type: ignore[attr-defined]
    rows = {"tiles complete after open": time.perf_counter() - t,
            "repaint, fitted": _repaint(app, canvas)}
    t = time.perf_counter()
    canvas.zoom_by(1.2)                    # one wheel step in: a new tile level
    canvas.viewport().repaint()
    rows["first paint of a zoom step in, fitted"] = time.perf_counter() - t
    graph = win.graph                      # type: ignore[attr-defined]
    convs = [n.node_id for n in graph if n.op == "QuantizedConv2d_8x8to32"]
    target = win.scene.items_by_id[convs[len(convs) // 3]].sceneBoundingRect().center()
    for zoom, name in ((0.1, "1/10 (tiles)"), (0.25, "1/4"), (0.55, "0.55 (a region)"),
                       (1.0, "100 %")):
        canvas.zoom_to(zoom)
        canvas.centerOn(target)
        t = time.perf_counter()
        canvas.viewport().repaint()
        rows[f"first paint at {name}"] = time.perf_counter() - t
        rows[f"repaint at {name}"] = _repaint(app, canvas)
    bar = canvas.horizontalScrollBar()
    t = time.perf_counter()
    for _ in range(5):                     # a drag of 5 x 40 px: Qt repaints the strip
        bar.setValue(bar.value() + 40)
        app.processEvents()                # type: ignore[attr-defined]
    rows["pan 40 px at 100 %"] = (time.perf_counter() - t) / 5
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--app", action="store_true", help="also time the main window")
    args = parser.parse_args()
    table: dict[str, dict[int, float]] = {}
    nodes: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        for size in args.sizes:
            g = residual_graph(size)
            nodes[size] = len(g)
            rows = engine_rows(g, args.repeat, tmp)
            if args.app:
                rows |= app_rows(g, args.repeat, tmp)
            for name, seconds in rows.items():
                table.setdefault(name, {})[size] = seconds
            print(f"{len(g)} nodes done", file=sys.stderr, flush=True)
    sizes = args.sizes
    print("| pass | " + " | ".join(f"{nodes[s]:,} nodes" for s in sizes)
          + " | growth / node growth |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for name, by_size in table.items():
        cells = [f"{by_size[s] * 1e3:.1f} ms" if by_size[s] < 0.01
                 else f"{by_size[s] * 1e3:.0f} ms" if by_size[s] < 1 else f"{by_size[s]:.2f} s"
                 for s in sizes]
        growth = (by_size[sizes[-1]] / by_size[sizes[0]]) / (nodes[sizes[-1]] / nodes[sizes[0]])
        print(f"| {name} | " + " | ".join(cells) + f" | {growth:.2f} |")
    peer = table.get("repaint, empty canvas (peer)")
    if peer:
        print("\n| repaint / empty-canvas repaint | " + " | ".join(
            f"{nodes[s]:,} nodes" for s in sizes) + " |")
        print("|---|" + "---:|" * len(sizes))
        for name, by_size in table.items():
            if "paint" in name or name.startswith("pan"):
                print(f"| {name} | " + " | ".join(f"{by_size[s] / peer[s]:.0f}"
                                                  for s in sizes) + " |")


if __name__ == "__main__":
    main()
