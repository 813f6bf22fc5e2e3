"""Help ▸ User guide (F1): the guide shipped with the app, read from the installed package."""

from __future__ import annotations

import re
from collections import Counter

from PySide6.QtCore import QUrl
from PySide6.QtGui import QColor, QTextDocument

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


def _link_colours(view) -> set[str]:
    colours = set()
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor() and fmt.anchorHref():
                colours.add(fmt.foreground().color().name())
            it += 1
        block = block.next()
    return colours


def test_the_guide_follows_a_switch_to_the_dark_theme(qtbot, window):
    """Opened in the light theme, then View ▸ Theme ▸ Dark: the page, its links and its
    code take the dark colours (issue 32: the guide stayed light)."""
    from hexscope.app.theme import Theme, apply_theme, dark_palette, light_palette

    try:
        apply_theme(Theme.LIGHT)
        window.help.guide.trigger()
        view = window.help.guide_view
        qtbot.waitExposed(view)
        view.anchorClicked.emit(QUrl("#the-command-line"))
        at = view.verticalScrollBar().value()
        assert _link_colours(view) == {light_palette().link().color().name()}
        apply_theme(Theme.DARK)
        qtbot.waitUntil(lambda: _link_colours(view) == {dark_palette().link().color().name()},
                        timeout=2000)
        assert view.verticalScrollBar().value() == at        # still where the reader was
        # the page's ground: the commonest colour down its right margin (one fixed pixel
        # landed on a table row or a screenshot as the guide grew)
        image = view.viewport().grab().toImage()
        x = image.width() - 12
        margin = Counter(image.pixelColor(x, y).name() for y in range(0, image.height(), 4))
        ground = QColor(margin.most_common(1)[0][0])
        assert ground.lightness() < 80
    finally:
        apply_theme(Theme.LIGHT)
