"""Screenshots of the side-by-side view and of the HTML reports (issue 31).

    Xvfb :31 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:31 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/diff_screenshots.py

Makes a second version of resources/examples/classic_quantized.hexgraph (one conv1 weight
byte and the weights' max changed), then, as a user would: View ▸ Compare graphs side by
side… with it (side_by_side_versions.png), the toolbar's "Authored vs prepared"
(side_by_side_prepared.png); and ``hexscope compare --against … --html`` and ``hexscope
diff --html``, rendered by headless Chromium when it is installed (report_compare.png,
report_diff.png). All in resources/screenshots/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QFileDialog  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshots import EXAMPLE, OUT, settle, shown_window  # noqa: E402

from hexscope.app.cli import main as cli  # noqa: E402
from hexscope.engine import Graph  # noqa: E402


def second_version(folder: Path) -> Path:
    graph = Graph.load(EXAMPLE)
    weights = np.array(graph.node(0x10010).const.array)
    weights[1, 1, 0, 3] = (int(weights[1, 1, 0, 3]) + 40) % 256
    graph.set_const(0x10010, weights)
    graph.set_const(0x10012, np.array([1.25], np.float32))
    path = folder / "classic_quantized_v2.hexgraph"
    graph.save(path)
    return path


def side_by_side(v2: Path) -> None:
    window = shown_window()
    settle()
    window.files.open_graph(str(EXAMPLE))
    settle()
    QFileDialog.getOpenFileName = staticmethod(lambda *a, **k: (str(v2), ""))  # the user's pick
    window.side_by_side.compare.trigger()
    side = window.side_by_side.window
    side.resize(1280, 800)
    side.move(0, 0)
    _shoot(side, "side_by_side_versions.png")
    side.prepared_action.trigger()
    _shoot(side, "side_by_side_prepared.png", prefer="Supernode", zoom=0.6)
    side.close()
    window.undo_stack.setClean()
    window.close()
    window.shutdown()


def _shoot(side, name: str, prefer: str = "", zoom: float = 0.0) -> None:
    while not side.view.is_ready:
        settle(50)
    view = side.view
    changed = [e for e in view.diff.entries if e.kind == "changed"]
    first = next((e for e in changed if prefer and prefer in e.changes[0].text()),
                 changed[0] if changed else None)
    if first is not None:
        view.differences.setCurrentItem(view.differences.topLevelItem(
            view.diff.entries.index(first)))
        view.show_entry(first)
        if zoom:
            view.canvas_a.zoom_to(zoom)         # the other pane follows
    settle(600)
    side.grab().save(str(OUT / name))
    print("wrote", OUT / name)


def reports(v2: Path, folder: Path) -> None:
    compare, diff = folder / "compare.html", folder / "diff.html"
    cli(["compare", str(EXAMPLE), "--against", str(v2), "-q", "--html", str(compare)])
    cli(["diff", str(EXAMPLE), str(v2), "--html", str(diff)])
    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium: the reports are in", folder, "(not rendered)")
        return
    for page, name, height in ((compare, "report_compare.png", 1700),
                               (diff, "report_diff.png", 1000)):
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--window-size=1280,{height}",
                        f"--screenshot={OUT / name}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
        print("wrote", OUT / name)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        v2 = second_version(Path(tmp))
        side_by_side(v2)
        reports(v2, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
