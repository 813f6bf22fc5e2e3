"""``hexscope --self-test``: the installed app checks itself without a screen.

It opens the main window (offscreen unless a platform is set), loads a bundled example through
``importlib.resources`` (so it works from a wheel, an editable install or a bundle), steps it
to the end with the window's own Step action, and checks every output the window's run made
against an independent engine run of the same file. Exit 0 when all agree; 1 with the reason.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from importlib import resources
from typing import TextIO

EXAMPLE = "classic_quantized.hexgraph"
STEP_TIMEOUT = 60.0


def run_self_test(out: TextIO = sys.stdout) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from hexscope.app.main_window import MainWindow
    from hexscope.app.settings import AppSettings

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory(prefix="hexscope-self-test-") as home, \
            resources.as_file(resources.files("hexscope.resources") / "examples" / EXAMPLE) \
            as path:
        # Settings and autosaves of its own: the user's are never touched.
        settings = AppSettings(QSettings(os.path.join(home, "s.ini"),
                                         QSettings.Format.IniFormat), root=home)
        window = MainWindow(settings)
        try:
            return _check(app, window, str(path), out)
        finally:
            window.undo_stack.setClean()
            window.files.meta_dirty = False
            window.shutdown()
            settings.flush()        # before the temporary directory goes
            window.deleteLater()
            app.processEvents()


def _check(app: object, window: object, path: str, out: TextIO) -> int:
    w = window
    missing = _missing_files()
    if missing:
        return _fail(out, "not installed: " + ", ".join(missing))
    print("self-test: the user guide and the icon are installed", file=out)
    if not w.files.open_graph(path):  # type: ignore[attr-defined]
        return _fail(out, f"could not open the bundled example {path}")
    print(f"self-test: opened {EXAMPLE} ({len(w.graph)} nodes)", file=out)  # type: ignore[attr-defined]
    steps = 0
    while True:
        w.debug.actions["step"].trigger()  # type: ignore[attr-defined]
        if not _wait_idle(app, w):
            return _fail(out, f"a step did not finish within {STEP_TIMEOUT:.0f} s")
        steps += 1
        session = w.session  # type: ignore[attr-defined]
        if session is None:
            return _fail(out, "no debug session after stepping: " + "; ".join(w.run_errors))  # type: ignore[attr-defined]
        if session.executor.failed:
            node_id, why = next(iter(session.executor.failed.items()))
            return _fail(out, f"node 0x{node_id:x} failed: {why}")
        if w.next_node is None:  # type: ignore[attr-defined]
            break
        if steps > 100_000:
            return _fail(out, "stepping never reached the end")
    print(f"self-test: stepped {steps} node(s) to the end", file=out)
    return _compare(session, path, out)


def _missing_files() -> list[str]:
    """What Help ▸ User guide and the window icon read, from the installed package."""
    from hexscope.app.app_icon import app_icon
    from hexscope.widgets.guide_view import GUIDE, guide_text

    missing = []
    try:
        if "# Hexscope user guide" not in guide_text(GUIDE):
            missing.append(f"the user guide ({GUIDE} is not the guide)")
    except (OSError, ModuleNotFoundError) as exc:
        missing.append(f"the user guide ({exc})")
    if app_icon().isNull():
        missing.append("the icon (resources/icons)")
    return missing


def _wait_idle(app: object, window: object) -> bool:
    deadline = time.monotonic() + STEP_TIMEOUT
    controller = window.controller  # type: ignore[attr-defined]
    while True:
        app.processEvents()  # type: ignore[attr-defined]
        if not controller.busy and not controller._pending:  # noqa: SLF001
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)


def _compare(session: object, path: str, out: TextIO) -> int:
    """Every node's outputs byte-equal to an engine run made here, without the app."""
    from hexscope.engine import Graph, Session
    from hexscope.engine.inputs import make_inputs

    graph = Graph.load(path)
    reference = Session(graph)
    reference.set_inputs(make_inputs(graph, os.path.dirname(path)))
    reference.run()
    compared = 0
    for node_id in reference.plan:
        mine, theirs = session.result(node_id), reference.result(node_id)  # type: ignore[attr-defined]
        if mine is None or theirs is None:
            return _fail(out, f"node 0x{node_id:x} has no result in one of the runs")
        for k, (a, b) in enumerate(zip(mine.outputs, theirs.outputs, strict=True)):
            if not a.same_as(b):
                return _fail(out, f"node 0x{node_id:x} output {k} differs from the engine's")
        compared += 1
    print(f"self-test: {compared} node(s) match an independent engine run byte for byte",
          file=out)
    # A bundle that lost llvmlite's library still passes (the float path is exact too), so
    # say which path ran: a packager sees it here.
    from hexscope.engine.ops.kernels import igemm

    path_name = "integer kernel (llvmlite)" if igemm.available() else "float32 BLAS"
    print(f"self-test: convolutions used the {path_name} path", file=out)
    print("self-test: passed", file=out)
    return 0


def _fail(out: TextIO, why: str) -> int:
    print(f"self-test: FAILED: {why}", file=out)
    return 1


__all__ = ["run_self_test"]
