"""``hexscope gui [GRAPH]``: create the application and the main window, run the loop."""

from __future__ import annotations

import sys


def run_gui(path: str | None = None) -> int:
    """Open the main window (on ``path`` if given) and return the application's exit code."""
    from PySide6.QtWidgets import QApplication

    from hexscope.app.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Hexscope")
    app.setOrganizationName("Hexscope")
    window = MainWindow()
    window.show()
    if not window.files.offer_restore() and path:
        window.files.open_graph(path)
    return app.exec()
