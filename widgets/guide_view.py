"""GuideView: the user guide (docs/*.md, installed as ``hexscope.resources.guide``) in a
window, read from the installed files and never from the network.

Links between the guide's pages and to their headings stay in the window; images point into
``resources/screenshots`` (``../resources/screenshots/x.png`` in the checkout, where GitHub
shows them too) and are read from the installed package; web links go to the browser.
"""

from __future__ import annotations

import re
from importlib import resources

from markdown_it import MarkdownIt
from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QImage, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

GUIDE = "guide.md"
_HEADING = re.compile(r"<h([1-6])([^>]*)>(.*?)</h\1>", re.S)
_TAGS = re.compile(r"<[^>]+>")
_SCREENSHOT = re.compile(r"(?:^|/)screenshots/([\w.-]+\.png)$")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def guide_html(markdown: str) -> tuple[str, set[str]]:
    """The page as HTML with an anchor per heading (GitHub's slugs), and those anchors."""
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    anchors: set[str] = set()

    def anchor(match: re.Match[str]) -> str:
        import html as html_lib

        name = slug(html_lib.unescape(_TAGS.sub("", match[3])))
        anchors.add(name)
        return f'<h{match[1]}{match[2]}><a name="{name}"></a>{match[3]}</h{match[1]}>'
    return _HEADING.sub(anchor, html), anchors


def guide_text(page: str) -> str:
    return (resources.files("hexscope.resources.guide") / page).read_text(encoding="utf-8")


def screenshot(name: str) -> bytes:
    return (resources.files("hexscope.resources") / "screenshots" / name).read_bytes()


class GuideView(QTextBrowser):
    """One page of the guide at a time; :meth:`show_page` opens a page at a heading."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window)
        self.setWindowTitle("User guide — Hexscope")
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._follow)
        self.resize(960, 760)
        self.page: str | None = None
        self._html = ""
        self.anchors: set[str] = set()
        self.missing_images: list[str] = []

    def show_page(self, page: str = GUIDE, heading: str = "") -> None:
        if page != self.page:
            html, self.anchors = guide_html(guide_text(page))
            self.missing_images = []
            self._html = html
            self._render()
            self.page = page
        if heading and heading in self.anchors:
            self.scrollToAnchor(heading)
        else:
            self.verticalScrollBar().setValue(0)

    def _render(self) -> None:
        # Links, code and table heads take the theme's colours: set as the document is made
        # (Qt bakes them in then), so a theme switch renders the page again.
        pal = self.palette()
        self.document().setDefaultStyleSheet(
            f"a {{ color: {pal.link().color().name()}; }}"
            f"pre, code {{ background-color: {pal.alternateBase().color().name()}; }}"
            f"th {{ background-color: {pal.window().color().name()}; }}")
        self.setHtml(self._html)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) \
                and self.page is not None:
            at = self.verticalScrollBar().value()
            self._render()
            self.verticalScrollBar().setValue(at)

    def loadResource(self, kind: int, url: QUrl) -> object:  # noqa: N802 - Qt override
        if kind == QTextDocument.ResourceType.ImageResource:
            match = _SCREENSHOT.search(url.path())
            image = QImage()
            if match is None or not image.loadFromData(_read(match[1])):
                self.missing_images.append(url.toString())
                return QImage()
            width = max(200, self.viewport().width() - 40)
            if image.width() > width:     # screenshots are 1280 px wide: fit the page
                image = image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
            return image
        return super().loadResource(kind, url)

    def _follow(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
            return
        path = url.path().rsplit("/", 1)[-1]
        if path.endswith(".md"):
            self.show_page(path, url.fragment())
        elif not path and url.fragment():
            self.show_page(self.page or GUIDE, url.fragment())


def _read(name: str) -> bytes:
    try:
        return screenshot(name)
    except OSError:
        return b""


__all__ = ["GUIDE", "GuideView", "guide_html", "slug"]
