"""Fixtures for driving the real main window offscreen."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from nop_graphs import nop_graph  # noqa: E402
from PySide6.QtCore import QSettings

from hexscope.app.main_window import MainWindow
from hexscope.app.settings import AppSettings


@pytest.fixture
def settings(tmp_path) -> AppSettings:
    qs = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    return AppSettings(qs, root=str(tmp_path / "appdata"))


@pytest.fixture
def window(qtbot, settings):
    w = MainWindow(settings)
    yield w
    w.undo_stack.setClean()          # no "unsaved changes" prompt when it closes
    w.files.meta_dirty = False
    w.close()
    w.shutdown()
    w.deleteLater()
    assert not w.controller.thread_running, "the worker thread is still alive"


@pytest.fixture
def graph_file(tmp_path) -> str:
    path = tmp_path / "nops.hexgraph"
    nop_graph().save(path)
    return str(path)
