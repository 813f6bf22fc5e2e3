"""Screenshots of a 10,000-node graph for bench/README.md: fitted, a region, the minimap.

    Xvfb :17 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:17 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/large_screenshots.py

Builds the residual network of tests/support/large_graph.py (real ops: convolutions with
their consts, requantize, relu, residual adds) at 10,000 nodes, saves it, opens it in the
app as a user would (File > Open) and takes, in resources/screenshots/:

* large_fit.png: the whole graph as it opens, fitted to the view;
* large_region.png: zoomed to a region (one residual block, a node selected, the minimap
  showing where the view is);
* large_minimap.png: the minimap alone, enlarged 2x.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from PySide6.QtCore import QEventLoop, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from hexscope.app.main_window import MainWindow  # noqa: E402
from hexscope.app.settings import AppSettings  # noqa: E402
from support.large_graph import residual_graph  # noqa: E402

OUT = ROOT / "resources" / "screenshots"


def settle(ms: int = 400, window: MainWindow | None = None) -> None:
    """Let ``ms`` pass, then (given the window) until the canvas's tiles are all drawn."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    while window is not None and window.canvas.tiles.pending:
        QApplication.processEvents()


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Hexscope")
    tmp = tempfile.mkdtemp(prefix="hexscope-large-")
    path = os.path.join(tmp, "resnet_10000.hexgraph")
    residual_graph(10_000).save(path)
    settings = AppSettings(QSettings(os.path.join(tmp, "s.ini"), QSettings.Format.IniFormat),
                           root=tmp)
    window = MainWindow(settings)
    window.resize(1280, 800)
    window.show()
    settle()
    t0 = time.perf_counter()
    window.files.open_graph(path)
    settle(50)
    print(f"opened {len(window.graph):,} nodes in {time.perf_counter() - t0:.2f} s")
    settle(800, window)
    OUT.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(OUT / "large_fit.png"))
    convs = [n.node_id for n in window.graph if n.op == "QuantizedConv2d_8x8to32"]
    target = convs[len(convs) // 3]
    window.select_node(target)
    window.canvas.zoom_to(0.55)
    window.canvas.centerOn(window.scene.items_by_id[target].sceneBoundingRect().center())
    settle(800, window)
    window.grab().save(str(OUT / "large_region.png"))
    mini = window.canvas.minimap.grab()
    mini.scaled(mini.width() * 2, mini.height() * 2,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation).save(str(OUT / "large_minimap.png"))
    window.undo_stack.setClean()
    window.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
