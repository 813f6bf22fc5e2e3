"""PySide6 6.12.0 drops a reference to None/True/False on every void or bool call on
Python 3.11 (NOTES-stack.md); a long session then aborts. Fail loudly if it comes back."""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12),
                                reason="None/True/False are immortal on Python 3.12+")


def test_void_and_bool_calls_keep_singleton_refcounts(qtbot):
    from PySide6.QtWidgets import QWidget

    w = QWidget()
    qtbot.addWidget(w)
    before = [sys.getrefcount(v) for v in (None, True, False)]
    for k in range(500):
        w.setObjectName(f"w{k}")           # returns void
        w.setToolTip("x")                  # returns void
        w.isVisible()                      # returns bool (False)
        w.isEnabled()                      # returns bool (True)
    after = [sys.getrefcount(v) for v in (None, True, False)]
    # Other threads may move the counts a little; the bug loses one per call (~1000).
    assert all(a >= b - 50 for a, b in zip(after, before, strict=True)), (before, after)
