"""Screenshots of the main window for the README: the editor and the debugger mid-run.

    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/screenshots.py

Opens the app on resources/examples/classic_quantized.hexgraph as a user would, takes
resources/screenshots/editor.png, then steps into the graph, runs to a breakpoint, selects
a node that ran and takes resources/screenshots/debugger.png. With no display it falls back
to the offscreen platform.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from hexscope.app.main_window import MainWindow  # noqa: E402
from hexscope.app.settings import AppSettings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "resources" / "examples" / "classic_quantized.hexgraph"
OUT = ROOT / "resources" / "screenshots"


def settle(ms: int = 300) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_idle(window: MainWindow, trigger: str) -> None:
    loop = QEventLoop()
    window.controller.idle.connect(loop.quit)
    window.debug.actions[trigger].trigger()
    QTimer.singleShot(10000, loop.quit)
    loop.exec()
    window.controller.idle.disconnect(loop.quit)


def node_by_op(window: MainWindow, op: str) -> int:
    return next(n.node_id for n in window.graph if n.op == op)


def shown_window() -> MainWindow:
    """The app's main window at 1280x800 with fresh settings, shown."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Hexscope")
    tmp = tempfile.mkdtemp(prefix="hexscope-shots-")
    settings = AppSettings(QSettings(os.path.join(tmp, "s.ini"), QSettings.Format.IniFormat),
                           root=tmp)
    window = MainWindow(settings)
    window.resize(1280, 800)
    window.show()
    return window


def save_shot(window: MainWindow, name: str) -> None:
    """The whole window as resources/screenshots/NAME."""
    OUT.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(OUT / name))
    print("wrote", OUT / name)


def close_clean(window: MainWindow) -> None:
    """Close without the unsaved-changes question (the scripts edit nothing worth keeping)."""
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    window.close()
    window.shutdown()


def compare_with_tflite(window: MainWindow) -> None:
    """Compare the open model with TFLite in the Compare panel, as a user does, and wait for
    the result; the dock gets room for the A, B and A − B pictures under the canvas."""
    compare, panel = window.compare, window.compare.panel
    compare.dock.raise_()
    panel.target.setCurrentIndex(panel.target.findData("tflite"))
    panel.compare_button.click()
    loop = QEventLoop()
    timer = QTimer(interval=100)
    timer.timeout.connect(lambda: (compare.running is None and not panel.busy
                                   and not compare._timer.isActive()) and loop.quit())
    timer.start()
    QTimer.singleShot(30000, loop.quit)
    loop.exec()
    timer.stop()
    window.resizeDocks([compare.dock], [470], Qt.Orientation.Vertical)
    settle()


def main() -> int:
    window = shown_window()
    window.files.open_graph(str(EXAMPLE))
    window.palette.search.setText("quantized")
    conv = node_by_op(window, "QuantizedConv2d_8x8to32")
    window.select_node(conv)
    tree = window.palette.tree
    tree.setCurrentItem(tree.findItems("QuantizedConv2d_8x8to32", Qt.MatchFlag.MatchExactly
                                       | Qt.MatchFlag.MatchRecursive)[0])
    settle()
    OUT.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(OUT / "editor.png"))

    window.palette.search.setText("")
    relu = node_by_op(window, "QuantizedRelu_8")
    window.select_node(node_by_op(window, "QuantizedMaxPool_8"))
    window.debug.actions["breakpoint"].trigger()
    wait_idle(window, "step")
    # Run stops before the max pool (breakpoint). Not more steps first: since prepare makes a
    # Supernode of the convolution chain, three steps reach the max pool itself, and Run
    # would continue past its breakpoint.
    wait_idle(window, "run")
    window.select_node(relu)
    window.log_dock.raise_()
    settle()
    window.grab().save(str(OUT / "debugger.png"))
    print(f"wrote {OUT / 'editor.png'} and {OUT / 'debugger.png'}")
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
