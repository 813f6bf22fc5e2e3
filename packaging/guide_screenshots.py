"""Screenshots for the user guide (docs/guide.md): the welcome page, the debugger in the
light and the dark theme (with a data view open), the keyboard shortcuts page, and the
compare colouring in the dark theme.

    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/guide_screenshots.py

Writes resources/screenshots/guide_*.png (the README's screenshots, by packaging/
screenshots.py and its siblings, live there too). With no display it falls back to the
offscreen platform.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402
from screenshots import (  # noqa: E402
    EXAMPLE,
    OUT,
    node_by_op,
    settle,
    shown_window,
    wait_idle,
)

from hexscope.app.main_window import MainWindow  # noqa: E402
from hexscope.app.theme import Theme  # noqa: E402


def save(widget: QWidget, name: str) -> None:
    settle()
    path = OUT / f"guide_{name}.png"
    if not widget.grab().save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")
    print(f"wrote {path}")


def debugger_mid_run(window: MainWindow) -> None:
    """Open the example, stop at a breakpoint on the max pool, select the Relu that ran
    and show its output in the Tensor view."""
    window.files.open_graph(str(EXAMPLE))
    window.select_node(node_by_op(window, "QuantizedMaxPool_8"))
    window.debug.actions["breakpoint"].trigger()
    wait_idle(window, "run")
    window.select_node(node_by_op(window, "QuantizedRelu_8"))
    window.views.docks["tensor"].raise_()


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    window = shown_window()
    window.settings.add_recent(str(EXAMPLE))
    window.show_welcome()
    save(window, "welcome")

    debugger_mid_run(window)
    window.theme_actions[Theme.LIGHT].trigger()
    save(window, "light")
    window.help.shortcuts.trigger()
    save(window.help.dialog, "shortcuts")
    window.help.dialog.close()
    window.theme_actions[Theme.DARK].trigger()
    save(window, "dark")
    wait_idle(window, "run")                 # on to the end, then compare with float
    compare = window.compare  # type: ignore[attr-defined]
    compare.panel.tolerance.setValue(1.0)
    compare.compare("isolated")
    compare.wait()                           # made on its worker thread
    compare.panel.go_to_first_divergence()
    window.canvas.zoom_to_fit()
    save(window, "dark_compare")
    window.theme_actions[Theme.SYSTEM].trigger()
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    window.close()
    QApplication.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
