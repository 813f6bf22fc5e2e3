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
    t0 = time.perf_counter()
    win.files.open_graph(str(path))
    win.canvas.viewport().repaint()
    app.processEvents()
    rows = {"app: open until drawn": time.perf_counter() - t0}
    t = time.perf_counter()
    win.canvas.viewport().repaint()
    rows["repaint, fitted"] = time.perf_counter() - t
    graph = win.graph
    convs = [n.node_id for n in graph if n.op == "QuantizedConv2d_8x8to32"]
    mid = convs[len(convs) // 2]

    # A user edits zoomed in: 100 % around the node; the time includes Qt's repaint of
    # what the edit changed (processEvents), as the user sees it.
    win.canvas.zoom_to(1.0)
    win.canvas.center_on_node(mid)
    app.processEvents()
    t = time.perf_counter()
    win.canvas.viewport().repaint()
    rows["repaint at 100 %"] = time.perf_counter() - t

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
    win.files.autosave_timer.stop()
    win.undo_stack.setClean()
    win.shutdown()
    win.close()
    win.deleteLater()
    app.processEvents()
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
        cells = [f"{by_size[s] * 1e3:.0f} ms" if by_size[s] < 1 else f"{by_size[s]:.2f} s"
                 for s in sizes]
        growth = (by_size[sizes[-1]] / by_size[sizes[0]]) / (nodes[sizes[-1]] / nodes[sizes[0]])
        print(f"| {name} | " + " | ".join(cells) + f" | {growth:.2f} |")


if __name__ == "__main__":
    main()
