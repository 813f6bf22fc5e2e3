"""Screenshots of the Compare panel for the README (issue 12).

    Xvfb :12 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:12 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/compare_screenshots.py

Opens resources/examples/saturating_range.hexgraph as a user would, runs it (F5), compares
it with the float reference (isolated), colours the canvas by the max error in LSB and goes to
the first divergence (a healthy graph has none under the excess-error rule, issue 32: this
example's Quantize range is too narrow for its data, a real divergence):
resources/screenshots/compare_canvas.png (the window) and
compare_views.png (the panel: the table and A, B and A − B of the selected output). With no
display it falls back to the offscreen platform.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshots import OUT, ROOT, settle, shown_window, wait_idle  # noqa: E402

EXAMPLE = ROOT / "resources" / "examples" / "saturating_range.hexgraph"


def main() -> int:
    window = shown_window()
    settle()
    if not window.files.open_graph(str(EXAMPLE)):
        print("could not open", EXAMPLE, file=sys.stderr)
        return 1
    settle()
    wait_idle(window, "run")
    compare = window.compare  # type: ignore[attr-defined]
    compare.panel.tolerance.setValue(1.0)
    compare.compare("isolated")
    compare.wait()                           # made on its worker thread
    comparison = compare.panel.comparison
    if comparison is None or comparison.first_divergence is None:
        print("no divergence to show in", EXAMPLE, file=sys.stderr)
        return 1
    compare.panel.go_to_first_divergence()
    window.resizeDocks([compare.dock], [430], Qt.Orientation.Vertical)
    window.canvas.zoom_to_fit()
    settle(600)
    OUT.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(OUT / "compare_canvas.png"))
    compare.dock.setFloating(True)
    compare.dock.resize(1260, 560)
    settle(600)
    compare.panel.go_to_first_divergence()
    settle(400)
    compare.dock.grab().save(str(OUT / "compare_views.png"))
    print("wrote", OUT / "compare_canvas.png", OUT / "compare_views.png")
    window.undo_stack.setClean()
    window.close()
    window.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
