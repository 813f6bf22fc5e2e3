"""``hexscope gui [GRAPH]``: create the application and the main window, run the loop.

Set ``HEXSCOPE_QUIT_AFTER_START=1`` to open the window, print one JSON line describing it
(title, graph, log) on stdout and quit: a start-up check for tests and packaging.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

QUIT_AFTER_START = "HEXSCOPE_QUIT_AFTER_START"


def run_gui(path: str | None = None, plugin_errors: Sequence[str] | None = None) -> int:
    """Open the main window (on ``path`` if given) and return the application's exit code.

    ``plugin_errors`` are the plugin load failures the command line met (it loads the
    plugins before calling this); they are shown in the log panel. Called directly
    (``plugin_errors`` None), the standard plugins are loaded here.
    """
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from hexscope.app.app_icon import app_icon
    from hexscope.app.main_window import MainWindow

    if plugin_errors is None:
        plugin_errors = _load_standard_plugins()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Hexscope")
    app.setOrganizationName("Hexscope")
    app.setDesktopFileName("hexscope")      # matches packaging's hexscope.desktop
    app.setWindowIcon(app_icon())
    # The cyclic collector runs on the GUI thread only, in short passes on a timer, and the
    # objects of the document shown are frozen (app/collector.py).
    from hexscope.app.collector import GuiCollector

    collector = GuiCollector(app)
    collector.freeze_soon()             # the app's modules and widgets, made once
    window = MainWindow()
    window.document_shown.connect(collector.freeze_soon)
    window.show()
    if not os.environ.get(QUIT_AFTER_START):
        from hexscope.app.kernel_preload import start_preload

        start_preload()                 # the first step need not load them (issue 32)
    window.report_startup_errors(list(plugin_errors))
    if not window.files.offer_restore() and not (path and window.files.open_graph(path)):
        window.show_welcome()
    if os.environ.get(QUIT_AFTER_START):
        QTimer.singleShot(0, window, lambda: _report_and_close(window))
    code = app.exec()
    window.shutdown()
    return int(code)


def _load_standard_plugins() -> list[str]:
    from hexscope.engine.plugins import load_standard_plugins

    problems: list[Exception] = []
    load_standard_plugins(errors=problems)  # type: ignore[arg-type]
    return [str(exc) for exc in problems]


def _report_and_close(window: MainWindow) -> None:
    """Print what the user would see on start-up, then close the window (ends the loop)."""
    report = {
        "title": window.windowTitle().replace("[*]", "*" if window.isWindowModified() else ""),
        "visible": window.isVisible(),
        "path": window.files.path,
        "nodes": [f"0x{n.node_id:x} {n.op}" for n in window.graph],
        "canvas_items": len(window.scene.items_by_id),
        "welcome": window.welcome is not None and window.central.currentWidget() is window.welcome,
        "problems": [str(i) for i in window.issues],
        "log": [line.text for line in window.log_panel.lines],
    }
    print(json.dumps(report), flush=True)
    window.close()
