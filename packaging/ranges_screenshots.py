"""Screenshots of the Ranges panel's Apply calibrated ranges and of the sensitivity ranking
(issue 29), for docs/ranges.md.

    Xvfb :62 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:62 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/ranges_screenshots.py

Opens resources/examples/classic_quantized.hexgraph, runs it (F5) with the Ranges panel in
front: ranges_before.png. Calibrates it over 8 images of N(0, 1) noise (as ``hexscope
calibrate`` does), applies the file from the panel, runs again: ranges_after.png (the table
of what changed, before beside after). Undoes that, ranks by sensitivity:
sensitivity_canvas.png (colours and rank badges) and sensitivity_compare.png (the Compare
panel's line). With no display it falls back to the offscreen platform.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QDockWidget, QSplitter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshots import EXAMPLE, OUT, settle, shown_window, wait_idle  # noqa: E402

from hexscope.engine.batch.records import InputSet  # noqa: E402
from hexscope.engine.graph import Graph  # noqa: E402
from hexscope.engine.ranges import Method, calibrate, write_ranges  # noqa: E402
from hexscope.engine.tensor import Tensor  # noqa: E402


def _ranges_file() -> str:
    rng = np.random.default_rng(0)
    sets = [InputSet(f"n{k}", [Tensor.from_array(rng.normal(0, 1, (1, 16, 16, 3))
                                                 .astype(np.float32))]) for k in range(8)]
    cal = calibrate(Graph.load(EXAMPLE), sets, Method.parse("minmax"))
    path = os.path.join(tempfile.mkdtemp(prefix="hexscope-ranges-"), "classic_ranges.json")
    write_ranges(cal.ranges, path)
    return path


def main() -> int:
    window = shown_window()
    settle()
    if not window.files.open_graph(str(EXAMPLE)):
        print("could not open", EXAMPLE, file=sys.stderr)
        return 1
    settle()
    dock = window.views.docks["ranges"]  # type: ignore[attr-defined]
    dock.show()
    dock.raise_()
    wait_idle(window, "run")
    window.resizeDocks([dock], [400], Qt.Orientation.Vertical)
    dock.findChild(QSplitter).setSizes([330, 70])      # the table over the plot
    window.canvas.zoom_to_fit()
    settle(600)
    OUT.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(OUT / "ranges_before.png"))
    window.ranges.apply_file(_ranges_file())  # type: ignore[attr-defined]
    wait_idle(window, "run")
    window.canvas.zoom_to_fit()
    settle(600)
    window.grab().save(str(OUT / "ranges_after.png"))
    window.undo_stack.undo()
    wait_idle(window, "run")
    for side in window.findChildren(QDockWidget):     # the canvas at full width
        if side.windowTitle() in ("Ops", "Inspector", "Outputs"):
            side.hide()
    window.resizeDocks([dock], [250], Qt.Orientation.Vertical)
    window.ranges.rank()  # type: ignore[attr-defined]
    for _ in range(100):
        if window.ranges.ranking is not None:  # type: ignore[attr-defined]
            break
        settle(100)
    window.canvas.zoom_to_fit()
    settle(600)
    window.grab().save(str(OUT / "sensitivity_canvas.png"))
    compare = window.compare  # type: ignore[attr-defined]
    compare.dock.show()
    compare.dock.raise_()
    settle(400)
    window.grab().save(str(OUT / "sensitivity_compare.png"))
    print("wrote", *(OUT / f for f in ("ranges_before.png", "ranges_after.png",
                                       "sensitivity_canvas.png", "sensitivity_compare.png")))
    window.undo_stack.setClean()
    window.close()
    window.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
