"""Backend menu, selector and status: the simulator or a connected DSP (dsp://HOST:PORT).

The selector and the status indicator sit in the status bar: it says which
backend runs the graph, the device's hexagon_nn version, and whether the connection is up.
A dropped connection fails the run that was under way (its outputs stay) and turns the
indicator red; Reconnect (or the next run) connects again without restarting the app.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QComboBox, QLabel

from hexscope.engine.backends.remote import TOKEN_ENV, ConnectionStatus
from hexscope.widgets.connection_dialog import ConnectionDialog

if TYPE_CHECKING:
    from hexscope.app.main_window import MainWindow
    from hexscope.engine.session import Session

SIM_TEXT, DSP_TEXT = "Simulator", "Connected DSP…"
COUNTER_UNITS = {0: "cycles", 1: "agent ns"}


def device_counters(session: Session | None) -> tuple[dict[int, int], str]:
    """The device's per-node counters of the last run and their unit; ({}, "") off device."""
    backend = getattr(session, "backend", None)
    if backend is None or not getattr(backend, "runs_graph", False):
        return {}, ""
    kind = getattr(backend, "counter_kind", 0)
    return dict(getattr(backend, "counters", {})), COUNTER_UNITS.get(kind, "counter")


def device_note(session: Session | None, node_id: int) -> str:
    """What the outputs panel says of a node a device ran: the device ran the graph."""
    counters, unit = device_counters(session)
    if not unit or session is None:
        return ""
    backend = session.backend
    target = getattr(backend, "last_target", None)
    upto = f" up to 0x{target:x}" if target is not None else ""
    counter = counters.get(node_id)
    text = f"the device ran the graph{upto} (not one node) and returned this output"
    return text + (f" · device: {counter:,} {unit}" if counter is not None else "")


class BackendActions:
    def __init__(self, window: MainWindow) -> None:
        self.w = window
        self.address = str(window.settings.value("backend/address", "127.0.0.1:5599"))
        self.token = os.environ.get(TOKEN_ENV, "")
        self.spec = "sim"
        self.status: ConnectionStatus | None = None
        self._build()
        window.controller.backend_status.connect(self._on_status)
        window.controller.idle.connect(self._on_idle)
        self._show(None)

    def _build(self) -> None:
        w = self.w
        menu = w.menuBar().addMenu("&Backend")
        group = QActionGroup(w)
        self.sim_action = QAction(SIM_TEXT, w, checkable=True, checked=True)
        self.sim_action.setToolTip("Run on Hexscope's simulated HVX, node by node")
        self.dsp_action = QAction(DSP_TEXT, w, checkable=True)
        self.dsp_action.setToolTip("Run on a device agent (dsp://HOST:PORT): the device runs "
                                   "whole graphs and returns the outputs asked for")
        self.reconnect_action = QAction("&Reconnect", w, enabled=False)
        for act in (self.sim_action, self.dsp_action):
            group.addAction(act)
            menu.addAction(act)
        menu.addSeparator()
        menu.addAction(self.reconnect_action)
        self.sim_action.triggered.connect(self.use_simulator)
        self.dsp_action.triggered.connect(self.choose_dsp)
        self.reconnect_action.triggered.connect(self.reconnect)
        self.selector = QComboBox()
        self.selector.setObjectName("backend-selector")
        self.selector.setToolTip("Where the graph runs")
        self.selector.addItems([SIM_TEXT, DSP_TEXT])
        self.selector.activated.connect(self._on_selector)
        self.indicator = QLabel()
        self.indicator.setObjectName("backend-status")
        self.indicator.setTextFormat(Qt.TextFormat.RichText)
        # in the status bar, always in view (the toolbars overflow on a 1280-pixel screen)
        w.statusBar().addPermanentWidget(self.indicator)
        w.statusBar().addPermanentWidget(self.selector)

    # choosing ------------------------------------------------------------------------------
    def _on_selector(self, index: int) -> None:
        if index == 0:
            self.use_simulator()
        else:
            self.choose_dsp()

    def use_simulator(self) -> None:
        if self.spec != "sim":
            self.spec = "sim"
            self.w.controller.set_backend("sim")
        self._sync_choice()

    def choose_dsp(self) -> bool:
        """Ask for the agent's address and token, then connect (on the worker)."""
        dialog = ConnectionDialog(self.address, self.token, self.w)
        if not dialog.exec():
            self._sync_choice()
            return False
        self.connect_to(dialog.address(), dialog.token.text())
        return True

    def connect_to(self, spec: str, token: str = "") -> None:
        self.spec = spec
        self.address = spec.removeprefix("dsp://")
        self.token = token
        self.w.settings.set_value("backend/address", self.address)   # not the token
        self._show(ConnectionStatus(False, self.address, message="connecting…"))
        self.w.controller.set_backend(spec, token or None)
        self._sync_choice()

    def reconnect(self) -> None:
        if self.spec != "sim":
            self._show(ConnectionStatus(False, self.address, message="connecting…"))
            self.w.controller.reconnect()

    def _sync_choice(self) -> None:
        remote = self.spec != "sim"
        self.selector.setCurrentIndex(1 if remote else 0)
        self.sim_action.setChecked(not remote)
        self.dsp_action.setChecked(remote)
        self.reconnect_action.setEnabled(remote)

    # status --------------------------------------------------------------------------------
    def _on_status(self, status: ConnectionStatus | None) -> None:
        self._show(status)
        if status is None or status.connected:
            # the connection the problems complained about is made (or no longer wanted):
            # its failures are answered and leave the Problems list
            address = status.address.removeprefix("dsp://") if status else None
            answered = [text for text in self.w.run_errors if "dsp://" in text and (
                address is None or address in text)]
            if answered:
                self.w.run_errors[:] = [t for t in self.w.run_errors if t not in answered]
                self.w.show_problems()
        if status is not None and not status.connected and status.message:
            self.w.statusBar().showMessage(f"{status.address}: {status.message}", 15000)

    def _show(self, status: ConnectionStatus | None) -> None:
        self.status = status
        if status is None:
            self.indicator.setText("<span style='color:#777'>●</span> Simulator")
            self.indicator.setToolTip("The graph runs on Hexscope's simulated HVX")
            return
        if status.connected:
            color, state = "#1b8a2f", "connected"
            version = f" · hexagon_nn {status.version_text}"
        else:
            color, state = "#c62828", status.message or "not connected"
            version = ""
        self.indicator.setText(f"<span style='color:{color}'>●</span> DSP "
                               f"{status.address}{version} · {state[:60]}")
        tip = [f"dsp://{status.address.removeprefix('dsp://')}",
               f"hexagon_nn {status.version_text}", status.description, status.message]
        self.indicator.setToolTip("\n".join(t for t in tip if t))

    def _on_idle(self, kind: str) -> None:
        session = self.w.session
        if kind not in ("step", "run", "run_to") or not device_counters(session)[1]:
            return
        backend = session.backend                       # type: ignore[union-attr]
        target = getattr(backend, "last_target", None)
        if target is not None and getattr(backend, "problem", None) is None:
            text = (f"the device ran the graph up to 0x{target:x} (device run "
                    f"{backend.remote_runs}); Hexscope shows what it returned node by node")
            current = self.w.statusBar().currentMessage() if kind == "step" else ""
            self.w.statusBar().showMessage(f"{current} · {text}" if current else
                                           text[0].upper() + text[1:], 15000)
