"""Recent files and autosave (a crash loses at most a minute of editing)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

from hexscope.engine.graph import Graph

MAX_RECENT = 10
AUTOSAVE_SECONDS = 60


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

    # autosave -----------------------------------------------------------------------------
    @property
    def autosave_graph(self) -> Path:
        return self.autosave_dir / "autosave.hexgraph"

    @property
    def _autosave_info(self) -> Path:
        return self.autosave_dir / "autosave.json"

    def autosave(self, graph: Graph, original: str | None) -> Path:
        """Write the unsaved graph and a note of which file it belongs to."""
        self.autosave_dir.mkdir(parents=True, exist_ok=True)
        graph.save(self.autosave_graph)
        info = {"original": original, "time": time.time(), "pid": os.getpid()}
        self._autosave_info.write_text(json.dumps(info))
        return self.autosave_graph

    def pending_autosave(self) -> dict[str, object] | None:
        """The autosave a previous session left behind (it crashed or was killed)."""
        if not self.autosave_graph.exists() or not self._autosave_info.exists():
            return None
        try:
            info = json.loads(self._autosave_info.read_text())
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def discard_autosave(self) -> None:
        for path in (self.autosave_graph, self._autosave_info):
            path.unlink(missing_ok=True)
