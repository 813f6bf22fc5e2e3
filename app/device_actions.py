"""The device's own artifacts in the app (issue 30): File ▸ Open device dump… (a B of the
Compare panel), the Timing menu (import a device profile, colour the canvas by device cycles
or simulator time, export the run as a Chrome trace).

An imported profile is kept beside the graph as ``GRAPH.cycles.json`` (as ``hexscope
import-profile`` writes it) and read again when that graph is opened.
"""

from __future__ import annotations

import html
import json
import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QFileDialog

from hexscope.engine.device.perfdump import parse_profile
from hexscope.engine.device.profile import (
    Profile,
    ProfileError,
    attach,
    fused_into,
    load_profile,
    profile_path,
    save_profile,
)
from hexscope.engine.device.trace_events import slices_from_session, trace_document
from hexscope.engine.errors import EngineError
from hexscope.engine.events import LogLine

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow

#: Heat bins by share of the total: (lower bound, legend text, colour), hottest first.
HEAT = ((0.20, "≥ 20%", QColor(215, 48, 39)), (0.05, "5–20%", QColor(252, 141, 89)),
        (0.01, "1–5%", QColor(254, 224, 144)), (0.0, "under 1%", QColor(145, 191, 219)))
FUSED = QColor(190, 190, 190)


def heat_colors(values: dict[int, float]) -> dict[int, tuple[QColor, float]]:
    """Each node's colour and share of the total (an engine-free rule of the overlay)."""
    total = sum(values.values()) or 1.0
    out = {}
    for node_id, value in values.items():
        share = value / total
        color = next(c for lower, _t, c in HEAT if share >= lower)
        out[node_id] = (color, share)
    return out


class DeviceActions(QObject):
    """See the module docstring."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.profile: Profile | None = None
        self.coloured_by = ""             # "", "cycles" or "time"
        self._build_actions()
        # the window names the new graph's file only after it says the graph was replaced
        window.graph_replaced.connect(lambda: QTimer.singleShot(0, self, self._graph_opened))
        window.results_changed.connect(self._on_results)

    def _build_actions(self) -> None:
        w = self.w
        self.open_dump = QAction("Open &device dump…", w)
        self.open_dump.setToolTip("Compare this graph with hexagon_nn's own dump "
                                  "(<prefix>_graph.yaml and its .dat files)")
        self.open_dump.triggered.connect(lambda: self.open_device_dump())
        file_menu = next((a.menu() for a in w.menuBar().actions() if a.text() == "&File"), None)
        if file_menu is not None:
            quit_action = file_menu.actions()[-1]
            file_menu.insertAction(quit_action, self.open_dump)
            file_menu.insertSeparator(quit_action)
        self.menu = w.menuBar().addMenu("&Timing")
        help_action = next((a for a in w.menuBar().actions() if a.text() == "&Help"), None)
        if help_action is not None:            # before Help, as menus go
            w.menuBar().insertMenu(help_action, self.menu)
        self.import_profile = self.menu.addAction("&Import device profile…")
        self.import_profile.setToolTip("graph_app --perfdump output, the TFLite delegate's "
                                       "op-profiling table, or a .cycles.json")
        self.import_profile.triggered.connect(lambda: self.import_device_profile())
        self.menu.addSeparator()
        self.by_cycles = self.menu.addAction("Colour canvas by device &cycles")
        self.by_time = self.menu.addAction("Colour canvas by simulator &time")
        for action, kind in ((self.by_cycles, "cycles"), (self.by_time, "time")):
            action.setCheckable(True)
            action.toggled.connect(lambda on, k=kind: self.colour_by(k if on else ""))
        self.menu.addSeparator()
        self.export = self.menu.addAction("&Export trace…")
        self.export.setToolTip("The last run as Chrome trace-event JSON (Perfetto, "
                               "chrome://tracing)")
        self.export.triggered.connect(lambda: self.export_trace())
        self._update_actions()

    def _update_actions(self) -> None:
        self.by_cycles.setEnabled(bool(self._cycles()[0]))

    def _on_results(self) -> None:
        self._update_actions()
        self._recolour()

    def _cycles(self) -> tuple[dict[int, int], str]:
        """The device cycles to show, and where from: a connected device's own (this run),
        else the imported profile's."""
        from hexscope.app.backend_actions import device_counters

        live, unit = device_counters(self.w.session)
        if live and unit == "cycles":
            return live, self.w.session.backend.name  # type: ignore[union-attr]
        if self.profile is not None:
            return {k: n.cycles for k, n in self.profile.nodes.items()}, self.profile.source
        return {}, ""

    def _log(self, level: int, text: str) -> None:
        self.w.log_panel.append(LogLine(level, text))

    def _message(self, text: str, ms: int = 8000) -> None:
        self.w.statusBar().showMessage(text, ms)

    # the device dump ------------------------------------------------------------------------
    def open_device_dump(self, path: str | None = None) -> None:
        """Compare with the dump at ``path`` (asked when None) in the Compare panel."""
        compare = getattr(self.w, "compare", None)
        if compare is None:
            return
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self.w, "Open a hexagon_nn device dump", compare.device_dump,
                "hexagon_nn graph dumps (*_graph.yaml);;All files (*)")
            if not path:
                return
        compare.device_dump = path
        compare.panel.set_target_text("device", f"Device dump: {os.path.basename(path)} "
                                      "(pick again to change)")
        compare.compare("device")

    # the profile ----------------------------------------------------------------------------
    def import_device_profile(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self.w, "Import a device profile", "",
                "Device profiles (*.txt *.log *.cycles.json);;All files (*)")
            if not path:
                return False
        try:
            if path.endswith(".json"):
                profile = load_profile(path)
            else:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = parse_profile(handle.read(), os.path.basename(path))
                if not text.kind:
                    raise EngineError("; ".join(text.problems))
                profile = attach(self.w.graph, text, os.path.basename(path))
        except (OSError, EngineError) as exc:
            self._log(0, f"cannot import {path}: {exc}")
            self._message(f"Cannot import the profile: {exc}")
            return False
        for problem in profile.problems:
            self._log(1, problem)
        if profile.unmatched:
            self._log(1, f"{len(profile.unmatched)} profile row(s) name no node of this "
                         f"graph: {', '.join(profile.unmatched)}")
        graph_path = self.w.files.path
        if graph_path and not path.endswith(".json"):
            try:
                save_profile(profile, profile_path(graph_path))
            except OSError as exc:
                self._log(1, f"cannot keep the profile beside the graph: {exc}")
        self.set_profile(profile)
        self._message(f"{len(profile.nodes)} node(s), {profile.total:,} device cycles from "
                      f"{profile.source}")
        return True

    def set_profile(self, profile: Profile | None) -> None:
        self.profile = profile
        cycles = {k: n.cycles for k, n in profile.nodes.items()} if profile else {}
        self.w.timing.set_imported_cycles(cycles, profile.source if profile else "")
        self._update_actions()
        if profile is not None and profile.nodes and not self.coloured_by:
            self.by_cycles.setChecked(True)
        else:
            self._recolour()

    def _graph_opened(self) -> None:
        path = self.w.files.path
        stored = profile_path(path) if path else None
        profile = None
        if stored is not None and stored.is_file():
            try:
                profile = load_profile(stored)
            except ProfileError as exc:
                self._log(1, str(exc))
        self.by_cycles.setChecked(False)
        self.by_time.setChecked(False)
        self.set_profile(profile)

    # the overlay ----------------------------------------------------------------------------
    def colour_by(self, kind: str) -> None:
        self.coloured_by = kind
        for action, k in ((self.by_cycles, "cycles"), (self.by_time, "time")):
            if k != kind and action.isChecked():
                action.blockSignals(True)
                action.setChecked(False)
                action.blockSignals(False)
        self._recolour()

    def _values(self) -> tuple[dict[int, float], str]:
        if self.coloured_by == "cycles":
            cycles, _source = self._cycles()
            return {k: float(v) for k, v in cycles.items()}, "cycles"
        session = self.w.session
        if self.coloured_by == "time" and session is not None and not self.w.controller.busy:
            return dict(session.times), "s"
        return {}, ""

    def _absorbed(self) -> dict[int, tuple[int, ...]]:
        """Surviving node -> the authored nodes fused into it (the session's prepare, else
        the profile's record of it)."""
        session = self.w.session
        if session is not None:
            return fused_into(session.prepared)
        if self.profile is None:
            return {}
        return {n.node_id: n.absorbed for n in self.profile.nodes.values() if n.absorbed}

    def _recolour(self) -> None:
        if not self.coloured_by:
            if getattr(self, "_painted", False):
                self._painted = False
                self.w.set_overlay(None)
                for node_id in self.w.graph.order:
                    self.w.scene.set_look(node_id, overlay_note="")
            return
        values, unit = self._values()
        heat = heat_colors(values)
        colors = {k: c for k, (c, _s) in heat.items()}
        notes = {}
        what = "device cycles" if unit == "cycles" else "simulator time"
        for node_id, (_c, share) in heat.items():
            value = values[node_id]
            amount = f"{int(value):,} cycles" if unit == "cycles" else f"{value * 1e3:.3f} ms"
            notes[node_id] = f"<i>{what}</i><br>{amount} ({100 * share:.1f}% of the total)"
        if unit == "cycles":
            for survivor, parts in self._absorbed().items():
                if survivor not in notes:
                    continue
                names = ", ".join(f"0x{a:x}" for a in parts)
                notes[survivor] += (f"<br>fused: reports for {names} (the device reports a "
                                    "fused chain under this id)")
                for a in parts:
                    colors.setdefault(a, FUSED)
                    notes[a] = (f"<i>{what}</i><br>fused into 0x{survivor:x}: its cycles are "
                                "counted there")
            if self.profile is not None and self._cycles()[1] == self.profile.source:
                for node in self.profile.nodes.values():
                    if node.note and node.node_id in notes:
                        notes[node.node_id] += f"<br>{html.escape(node.note)}"
        legend = [(f"{text} of {what}", c) for _l, text, c in HEAT]
        if any(c == FUSED for c in colors.values()):
            legend.append(("fused (counted on the surviving node)", FUSED))
        self._painted = True
        self.w.set_overlay(colors, legend)
        for node_id in self.w.graph.order:
            self.w.scene.set_look(node_id, overlay_note=notes.get(node_id, ""))

    # the trace ------------------------------------------------------------------------------
    def export_trace(self, path: str | None = None) -> bool:
        session = self.w.session
        if session is None or not session.executor.trace:
            self._message("Nothing to export: run the graph first (F5)")
            return False
        if self.w.controller.busy:
            self._message("The graph is running: export the trace once it pauses")
            return False
        if path is None:
            base = self.w.files.path or "graph"
            path, _ = QFileDialog.getSaveFileName(
                self.w, "Export the run as a trace", f"{os.path.splitext(base)[0]}.trace.json",
                "Chrome trace-event JSON (*.json)")
            if not path:
                return False
        cycles = {k: n.cycles for k, n in self.profile.nodes.items()} if self.profile else {}
        run = slices_from_session(session, cycles, self.profile.source if self.profile else "",
                                  "this run")
        doc = trace_document([run], self.w.files.name(), session.backend.name)
        from hexscope.engine.io.atomic import atomic_path

        try:
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(doc))
        except OSError as exc:
            self._message(f"Cannot write {path}: {exc.strerror or exc}")
            return False
        self._message(f"Trace of {len(run.nodes)} node(s) written to {path}: open it in "
                      "Perfetto (ui.perfetto.dev) or chrome://tracing")
        return True


def install_device_actions(window: MainWindow) -> DeviceActions:
    actions = DeviceActions(window)
    window.device = actions  # type: ignore[attr-defined]
    return actions
