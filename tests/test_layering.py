"""STYLE §2: engine never loads Qt, pyqtgraph, widgets or app; widgets never load app."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import sys
import {module}
bad = sorted(m for m in sys.modules if m.split('.')[0] in {{'PySide6', 'pyqtgraph', 'shiboken6'}}
             or any(m == f or m.startswith(f + '.') for f in {forbidden!r}))
print(','.join(bad))
"""


def _loaded(module: str, forbidden: tuple[str, ...], allow_qt: bool) -> list[str]:
    code = CHECK.format(module=module, forbidden=forbidden)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""})
    names = [m for m in out.stdout.strip().split(",") if m]
    if allow_qt:
        names = [m for m in names if m.split(".")[0] not in ("PySide6", "pyqtgraph", "shiboken6")]
    return names


def test_engine_loads_no_gui_module():
    assert _loaded("hexscope.engine", ("hexscope.widgets", "hexscope.app"), False) == []


@pytest.mark.parametrize("module", ["hexscope.widgets", "hexscope.widgets.graph_canvas",
                                    "hexscope.widgets.op_palette",
                                    "hexscope.widgets.inspector_panel"])
def test_widgets_load_no_app_module(module):
    assert _loaded(module, ("hexscope.app",), True) == []


def test_the_check_itself_sees_a_forbidden_import():
    # Guards the guard: importing the app does load widgets and Qt.
    assert "hexscope.widgets" in _loaded("hexscope.app.main_window", ("hexscope.widgets",), True)
