"""How the structural diff, its HTML report and the side-by-side view scale with graph size.

Builds residual networks (``tests/support/large_graph.py``) at 1k, 5k and 10k nodes and a
copy with one filter byte changed, and prints per size the median of ``--repeat`` runs of:
``structural_diff`` (A against the copy; authored against prepared), the diff's HTML report,
and (with ``--app``) the side-by-side view until both panes are built, and one scroll step
with the other pane following. The peer, measured in the same run, is the engine's id-only
diff (``engine/graph_diff.diff_graphs``, what autosave uses): the last column divides by it.

Run::

    .venv/bin/python bench/diff_bench.py [--sizes 1000 5000 10000] [--repeat 3] [--app]

``--app`` needs a display (``QT_QPA_PLATFORM=offscreen`` works).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hexscope.engine.graph_diff import diff_graphs  # noqa: E402
from hexscope.engine.prepare import prepare  # noqa: E402
from hexscope.engine.report.html_diff import write_diff_html  # noqa: E402
from hexscope.engine.structural_diff import structural_diff  # noqa: E402
from support.diff_graphs import copy_graph  # noqa: E402
from support.large_graph import residual_graph  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def one_size(nodes: int, repeat: int, app: bool) -> list[tuple[str, float]]:
    a = residual_graph(nodes)
    b = copy_graph(a)
    data = np.array(b.node(0x1005).const.array)
    data[0, 0, 0, 0] ^= 1
    b.set_const(0x1005, data)
    prepared = list(prepare(a).nodes.values())
    rows = [("id-only diff (peer)", timed(lambda: diff_graphs(a, b), repeat)),
            ("structural diff", timed(lambda: structural_diff(a, b), repeat)),
            ("authored vs prepared", timed(lambda: structural_diff(a, prepared), repeat))]
    diff = structural_diff(a, b)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "d.html"
        rows.append(("HTML report", timed(lambda: write_diff_html(diff, a, b, out), repeat)))
    if app:
        rows += app_rows(a, b, diff, repeat)
    return rows


def app_rows(a, b, diff, repeat: int) -> list[tuple[str, float]]:
    from PySide6.QtWidgets import QApplication

    from hexscope.widgets.side_by_side import SideBySideView

    qt = QApplication.instance() or QApplication([])
    views = []

    def build() -> None:
        view = SideBySideView(a, b, diff)
        view.resize(1280, 800)
        view.show()
        while not view.is_ready:
            qt.processEvents()
        views.append(view)

    built = timed(build, repeat)
    view = views[-1]
    view.canvas_a.zoom_to(1.0)              # zoomed in: there is something to scroll
    qt.processEvents()
    bar = view.canvas_a.horizontalScrollBar()

    def scroll() -> None:
        bar.setValue(bar.value() + 20)
        qt.processEvents()

    rows = [("side by side: built", built), ("side by side: scroll step", timed(scroll, 20))]
    for v in views:
        v.close_scenes()
        v.deleteLater()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--app", action="store_true")
    args = parser.parse_args()
    for nodes in args.sizes:
        rows = one_size(nodes, args.repeat, args.app)
        peer = rows[0][1]
        print(f"== {nodes} nodes")
        for name, seconds in rows:
            print(f"  {name:28} {seconds * 1000:9.1f} ms   {seconds / peer:8.1f} x peer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
