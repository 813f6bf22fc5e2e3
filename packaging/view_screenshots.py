"""Screenshots of each view, on the bundled example graphs, into resources/screenshots/.

    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/view_screenshots.py

(With no display it falls back to the offscreen platform, which renders the same pixels.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QSplitter, QWidget  # noqa: E402

from hexscope.engine import Graph, Session  # noqa: E402
from hexscope.engine.analysis.ranges import node_ranges  # noqa: E402
from hexscope.engine.inputs import make_inputs  # noqa: E402
from hexscope.engine.plugins import load_plugin  # noqa: E402
from hexscope.widgets.d32_view import D32PaddingView  # noqa: E402
from hexscope.widgets.fill_padding_view import FillPaddingView  # noqa: E402
from hexscope.widgets.padding_check_panel import PaddingCheckPanel  # noqa: E402
from hexscope.widgets.range_panel import RangePanel  # noqa: E402
from hexscope.widgets.range_plot import RangePlotView  # noqa: E402
from hexscope.widgets.tensor_inspector import TensorInspector  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"
OUT = ROOT / "resources" / "screenshots"


def _session(name: str) -> Session:
    g = Graph.load(EXAMPLES / f"{name}.hexgraph")
    s = Session(g)
    s.execute(make_inputs(g, EXAMPLES))
    return s


def _shoot(app: QApplication, widget: QWidget, name: str, size: tuple[int, int]) -> None:
    widget.resize(*size)
    widget.show()
    for _ in range(5):
        app.processEvents()
    path = OUT / f"views_{name}.png"
    if not widget.grab().save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    load_plugin(ROOT / "resources" / "plugins" / "peek_left.py")
    OUT.mkdir(parents=True, exist_ok=True)
    fill = _session("fill_padding_demo")
    sat = _session("saturating_range")
    outputs = fill.result(0x1001).outputs

    insp = TensorInspector()
    insp.set_outputs("0x1001 AutoQuantize_d32 'to d32'", outputs)
    insp.heatmap.set_dequantized(True)
    insp.select((0, 5, 6, 3))
    _shoot(app, insp, "heatmap", (900, 620))
    insp.tabs.setCurrentIndex(1)
    insp.table.set_include_padding(True)
    insp.select((0, 0, 0, 0))
    _shoot(app, insp, "table", (900, 620))
    insp.set_outputs("0x1001 Quantize 'too narrow'", sat.result(0x1001).outputs)
    insp.tabs.setCurrentIndex(2)
    _shoot(app, insp, "histogram", (900, 500))

    d32 = D32PaddingView()
    d32.set_tensor(outputs[0], insp.qrange)
    d32.select((0, 3, 4, 10))
    _shoot(app, d32, "d32_memory", (1200, 760))
    d32.set_mode("plane")
    d32.set_depth(25)
    d32.set_limit(2, -100, 0)
    d32._show_text.setChecked(True)
    _shoot(app, d32, "d32_plane", (1200, 760))

    fv = FillPaddingView()
    node = fill.prepared.nodes[0x1002]
    fv.set_tensors(fill.executor.input_tensor(node.inputs[0]), fill.result(0x1002).outputs[0],
                   "0x1002 FillPadding_8_d32 (spatial 0x00, depth 0xff)",
                   unwritten=fill.padding_fill)
    _shoot(app, fv, "fill_padding", (1200, 560))

    check = PaddingCheckPanel()
    check.set_graph(Graph.load(EXAMPLES / "padding_demo.hexgraph"))
    check.run_check()
    _shoot(app, check, "padding_check", (800, 300))

    stats = node_ranges(sat)
    split = QSplitter()
    panel, plot = RangePanel(), RangePlotView()
    panel.set_stats(stats)
    plot.set_stats(stats)
    split.addWidget(panel)
    split.addWidget(plot)
    split.setOrientation(split.orientation().Vertical)
    _shoot(app, split, "ranges", (1100, 600))
    return 0


if __name__ == "__main__":
    sys.exit(main())
