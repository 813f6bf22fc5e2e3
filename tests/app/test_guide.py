"""Help ▸ User guide (F1): the guide shipped with the app, read from the installed package."""

from __future__ import annotations

import re

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument

from hexscope.widgets.guide_view import GUIDE, guide_html, guide_text


def test_help_opens_the_shipped_guide_with_its_pictures(qtbot, window):
    window.help.guide.trigger()
    view = window.help.guide_view
    qtbot.waitExposed(view)
    assert view.page == GUIDE
    text = view.toPlainText()
    for heading in ("Editing a graph", "Stepping through a run", "The views",
                    "Comparing runs", "The command line", "File formats", "Device"):
        assert heading in text
    html, _ = guide_html(guide_text(GUIDE))
    images = re.findall(r'<img src="([^"]+)"', html)
    assert len(images) >= 10
    for src in images:
        image = view.loadResource(QTextDocument.ResourceType.ImageResource, QUrl(src))
        assert not image.isNull(), src
        assert image.width() <= view.viewport().width()     # fitted to the page
    assert view.missing_images == []


def test_guide_links_stay_in_the_window(qtbot, window):
    window.help.guide.trigger()
    view = window.help.guide_view
    view.resize(800, 600)
    view.anchorClicked.emit(QUrl("#the-command-line"))
    assert view.verticalScrollBar().value() > 0
    view.anchorClicked.emit(QUrl("compare.md"))
    assert view.page == "compare.md"
    assert "Accuracy debugging" in view.toPlainText()
    view.anchorClicked.emit(QUrl("guide.md#device"))
    assert view.page == GUIDE and view.verticalScrollBar().value() > 0


def test_f1_is_the_guide_key(window):
    assert window.help.guide.shortcut().toString() == "F1"
