"""Recent files and where autosaves go (the autosave itself: :mod:`hexscope.app.autosave`)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths

from hexscope.widgets.graph_canvas.layout import DIRECTIONS, LEFT_TO_RIGHT

MAX_RECENT = 10


class AppSettings:
    """Persistent settings; ``root`` overrides where autosaves go (tests)."""

    def __init__(self, settings: QSettings | None = None, root: str | None = None) -> None:
        self.qsettings = settings or QSettings("Hexscope", "Hexscope")
        base = root or QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.AppDataLocation) or str(Path.home() / ".hexscope")
        self.autosave_dir = Path(base) / "autosave"

    # recent files -------------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.qsettings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: str) -> list[str]:
        path = os.path.abspath(path)
        files = [path] + [p for p in self.recent_files() if p != path]
        self.qsettings.setValue("recent_files", files[:MAX_RECENT])
        return files[:MAX_RECENT]

    def clear_recent(self) -> None:
        self.qsettings.setValue("recent_files", [])

    # theme ------------------------------------------------------------------------------------
    def theme(self) -> str:
        """"system", "light" or "dark" (View ▸ Theme)."""
        value = str(self.qsettings.value("theme", "system"))
        return value if value in ("system", "light", "dark") else "system"

    def set_theme(self, value: str) -> None:
        self.qsettings.setValue("theme", value)

    # window layout ------------------------------------------------------------------------
    def save_layout(self, geometry: QByteArray, state: QByteArray) -> None:
        self.qsettings.setValue("window/geometry", geometry)
        self.qsettings.setValue("window/state", state)

    def layout(self) -> tuple[QByteArray | None, QByteArray | None]:
        """The window geometry and dock state saved at the last close, if any."""
        values = [self.qsettings.value(f"window/{key}") for key in ("geometry", "state")]
        return tuple(v if isinstance(v, QByteArray) else None for v in values)  # type: ignore[return-value]

    def splitter(self, name: str) -> QByteArray | None:
        """A panel's splitter as the user left it (``name``: the panel's key), if saved."""
        value = self.qsettings.value(f"window/splitter-{name}")
        return value if isinstance(value, QByteArray) else None

    def set_splitter(self, name: str, state: QByteArray) -> None:
        self.qsettings.setValue(f"window/splitter-{name}", state)

    # canvas -------------------------------------------------------------------------------
    def layout_direction(self) -> str:
        """The direction of automatic layouts (View > Layout direction)."""
        value = str(self.qsettings.value("canvas/layout_direction", LEFT_TO_RIGHT))
        return value if value in DIRECTIONS else LEFT_TO_RIGHT

    def set_layout_direction(self, direction: str) -> None:
        if direction not in DIRECTIONS:
            raise ValueError(f"layout direction {direction!r}: expected one of {DIRECTIONS}")
        self.qsettings.setValue("canvas/layout_direction", direction)

    # autosave -----------------------------------------------------------------------------
    # Each running window writes its own slot there (hexscope.app.autosave).
