"""SemanticsView: the shipped hexagon_nn semantics documents, opened at a cited section."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTextBrowser, QWidget

from hexscope.widgets.doc_text import TITLES, semantics_text


def semantics_html(markdown: str) -> str:
    """The document as HTML, each numbered heading carrying an anchor ``sec-<number>``.

    Rendered by markdown-it-py (CommonMark with tables): Qt's own markdown reader lost the
    text of most headings in these documents."""
    html = MarkdownIt("commonmark").enable("table").render(markdown)

    def anchor(match: re.Match[str]) -> str:
        number = re.match(r"(\d+(?:\.\d+)*)", _TAGS.sub("", match[3]))
        name = f'<a name="sec-{number[1]}"></a>' if number else ""
        return f"<h{match[1]}{match[2]}>{name}{match[3]}</h{match[1]}>"
    return _HEADING.sub(anchor, html)


_HEADING = re.compile(r"<h([1-6])([^>]*)>(.*?)</h\1>", re.S)
_TAGS = re.compile(r"<[^>]+>")


class SemanticsView(QTextBrowser):
    """One document at a time; :meth:`show_section` scrolls to a heading such as '1.7 Output
    size and padding'."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window)
        self.setOpenExternalLinks(False)
        self.resize(820, 640)
        self.which: str | None = None
        self._anchors: set[str] = set()

    def show_section(self, which: str, section: str) -> bool:
        """Show document ``which`` at heading ``section``; False when there is no such
        heading (the document is shown from its start)."""
        if which != self.which:
            html = semantics_html(semantics_text(which))
            self._anchors = set(re.findall(r'<a name="(sec-[\d.]+)">', html))
            self.setHtml(html)
            self.which = which
            self.setWindowTitle(f"{TITLES[which]} — Hexscope")
        # "§6.7" may be item 7 of section 6's list: the nearest heading above it is shown.
        parts = section.split(".")
        while parts and f"sec-{'.'.join(parts)}" not in self._anchors:
            parts.pop()
        if not parts:
            self.verticalScrollBar().setValue(0)
            return False
        self.scrollToAnchor(f"sec-{'.'.join(parts)}")
        return True


__all__ = ["SemanticsView"]
