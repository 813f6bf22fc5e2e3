"""Recent files and where autosaves go (the autosave itself: :mod:`hexscope.app.autosave`)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths

from hexscope.app.settings_writer import SettingsWriter
from hexscope.widgets.graph_canvas.layout import DIRECTIONS, LEFT_TO_RIGHT

MAX_RECENT = 10


class AppSettings:
    """Persistent settings; ``root`` overrides where autosaves go (tests).

    ``qsettings`` is read on the caller's thread; writes go to a thread of their own
    (:mod:`settings_writer`: QSettings' file write ends in an fdatasync) and, until read
    back from the file, are answered from what this object last set."""

    def __init__(self, settings: QSettings | None = None, root: str | None = None) -> None:
        self.qsettings = settings or QSettings("Hexscope", "Hexscope")
        base = root or QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.AppDataLocation) or str(Path.home() / ".hexscope")
        self.autosave_dir = Path(base) / "autosave"
        file_name, file_format = self.qsettings.fileName(), self.qsettings.format()
        self._writer = SettingsWriter(lambda: QSettings(file_name, file_format))
        self._set: dict[str, object] = {}

    def value(self, key: str, default: object = None) -> object:
        """A setting as last set by this object, else as the file has it, else ``default``."""
        if key in self._set:
            return self._set[key]
        return self.qsettings.value(key, default)

    def set_value(self, key: str, value: object) -> None:
        """Set a setting now; the file has it soon after, or at :meth:`flush`."""
        self._set[key] = value
        self._writer.put(key, value)

    def flush(self) -> None:
        """Wait until every setting set is in the file."""
        self._writer.flush()

    # recent files -------------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: str) -> list[str]:
        path = os.path.abspath(path)
        files = [path] + [p for p in self.recent_files() if p != path]
        self.set_value("recent_files", files[:MAX_RECENT])
        return files[:MAX_RECENT]

    def clear_recent(self) -> None:
        self.set_value("recent_files", [])

    # theme ------------------------------------------------------------------------------------
    def theme(self) -> str:
        """"system", "light" or "dark" (View ▸ Theme)."""
        value = str(self.value("theme", "system"))
        return value if value in ("system", "light", "dark") else "system"

    def set_theme(self, value: str) -> None:
        self.set_value("theme", value)

    # window layout ------------------------------------------------------------------------
    def save_layout(self, geometry: QByteArray, state: QByteArray) -> None:
        self.set_value("window/geometry", geometry)
        self.set_value("window/state", state)

    def layout(self) -> tuple[QByteArray | None, QByteArray | None]:
        """The window geometry and dock state saved at the last close, if any."""
        values = [self.value(f"window/{key}") for key in ("geometry", "state")]
        return tuple(v if isinstance(v, QByteArray) else None for v in values)  # type: ignore[return-value]

    def splitter(self, name: str) -> QByteArray | None:
        """A panel's splitter as the user left it (``name``: the panel's key), if saved."""
        value = self.value(f"window/splitter-{name}")
        return value if isinstance(value, QByteArray) else None

    def set_splitter(self, name: str, state: QByteArray) -> None:
        self.set_value(f"window/splitter-{name}", state)

    # canvas -------------------------------------------------------------------------------
    def layout_direction(self) -> str:
        """The direction of automatic layouts (View > Layout direction)."""
        value = str(self.value("canvas/layout_direction", LEFT_TO_RIGHT))
        return value if value in DIRECTIONS else LEFT_TO_RIGHT

    def set_layout_direction(self, direction: str) -> None:
        if direction not in DIRECTIONS:
            raise ValueError(f"layout direction {direction!r}: expected one of {DIRECTIONS}")
        self.set_value("canvas/layout_direction", direction)

    # autosave -----------------------------------------------------------------------------
    # Each running window writes its own slot there (hexscope.app.autosave).
