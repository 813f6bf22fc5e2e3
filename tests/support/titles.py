"""The window title as the user sees it: Qt replaces the ``[*]`` placeholder."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


def shown_title(widget: QWidget) -> str:
    """``windowTitle()`` with ``[*]`` drawn as Qt draws it (``*`` while modified)."""
    return widget.windowTitle().replace("[*]", "*" if widget.isWindowModified() else "")
