"""Hexscope's icon (``resources/icons``, drawn by ``packaging/make_icon.py``), read through
importlib.resources so it is found in a wheel, an editable install and the bundle alike."""

from __future__ import annotations

from functools import cache
from importlib import resources

from PySide6.QtGui import QIcon, QPixmap

SIZES = (16, 32, 48, 64, 128, 256)


@cache
def app_icon() -> QIcon:
    """The icon at every size shipped (an empty icon if the files are missing)."""
    icon = QIcon()
    folder = resources.files("hexscope.resources") / "icons"
    for size in SIZES:
        pixmap = QPixmap()
        try:
            data = (folder / f"hexscope-{size}.png").read_bytes()
        except OSError:
            continue
        if pixmap.loadFromData(data, "PNG"):
            icon.addPixmap(pixmap)
    return icon


__all__ = ["app_icon"]
