"""The dialog of Debug ▸ Reduce to the failing part…: the checks of ``hexscope reduce`` (the
node the run stops at, a Check, the float reference, another backend or graph, a command),
where candidates run, how to search and where the reduced graph goes, with defaults taken
from the window (its last run's failure, its connected device)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QWidget,
)

from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.reduce.job import CheckSpec
from hexscope.widgets.theme_colors import mark_error_text

#: the choices of the dialog: (CheckSpec kind, what the user reads)
CHOICES = (("node-error", "The node the run stops at raises again"),
           ("check-failed", "The Check/Close the run stops at fails again"),
           ("reference", "Diverges from the float reference"),
           ("backend-b", "Diverges from another backend"),
           ("against", "Diverges from another graph file"),
           ("command", "A command fails on it"))
SIM = "sim"
#: a check command's default time limit: a candidate that hangs counts as failing
COMMAND_TIMEOUT_S = 60.0


def default_command() -> str:
    """``hexscope run {}`` with this installation's hexscope and the plugin files this
    process loaded (the candidate's path is {})."""
    beside = Path(sys.executable).with_name("hexscope")
    exe = str(beside) if beside.is_file() else shutil.which("hexscope")
    argv = [exe] if exe else [sys.executable, "-m", "hexscope.app"]
    plugins = sorted({f for s in REGISTRY.specs() if s.user and s.source
                      and os.path.isfile(f := s.source.rsplit(":", 1)[0])})
    for path in plugins:
        argv += ["--plugin", path]
    return " ".join(shlex.quote(a) for a in argv) + " run {}"


@dataclass(frozen=True)
class ReduceDefaults:
    """What the window suggests: ``kind`` from its last run (the node it stopped at, a
    Check, or the float reference when it ran to the end), ``device`` the dsp:// address
    it is connected to ('' on the simulator)."""

    out: str
    kind: str = "node-error"
    device: str = ""


class ReduceDialog(QDialog):
    """What fails, where candidates run, how to search, and where the reduced graph goes."""

    def __init__(self, defaults: ReduceDefaults, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reduce to the failing part")
        self._defaults = defaults
        self._build_ui()
        self.kind.setCurrentIndex(max(self.kind.findData(defaults.kind), 0))
        self._on_kind()

    def _build_ui(self) -> None:
        form = self._form = QFormLayout(self)
        form.setSizeConstraint(QLayout.SizeConstraint.SetFixedSize)   # fits the shown rows
        self.kind = QComboBox()
        for key, text in CHOICES:
            self.kind.addItem(text, key)
        self.command = QLineEdit(default_command())
        self.command.setToolTip("Run on each candidate, saved as a .hexgraph with its inputs "
                                "beside it: {} is its path; a non-zero exit fails")
        self.regex = QLineEdit()
        self.regex.setPlaceholderText("(any non-zero exit fails)")
        self.timeout = QDoubleSpinBox(minimum=0.0, maximum=86400.0, decimals=1,
                                      value=COMMAND_TIMEOUT_S)
        self.timeout.setSpecialValueText("none")
        self.timeout.setSuffix(" s")
        self.hang_passes = QCheckBox("A candidate that times out passes (else it fails)")
        self.backend_b = QLineEdit(self._defaults.device)
        self.backend_b.setPlaceholderText("dsp://HOST:PORT")
        self.other = QLineEdit()
        self.other.setPlaceholderText("a .hexgraph with the same node ids")
        self.analysis = QComboBox()
        self.analysis.addItem("Isolated (each node on the reference inputs)", "isolated")
        self.analysis.addItem("Accumulated (the float graph end to end)", "accumulated")
        self.tolerance = QDoubleSpinBox(minimum=0.0, maximum=1e6, decimals=2, value=1.0)
        self.tolerance.setSuffix(" LSB")
        self.backend = QComboBox()
        self.backend.addItem("Simulator", SIM)
        if self._defaults.device:
            self.backend.addItem(f"The connected DSP ({self._defaults.device})",
                                 self._defaults.device)
        self.mode = QComboBox()
        self.mode.addItem("Bisect, then remove side branches", "bisect")
        self.mode.addItem("Linear: one unit at a time", "linear")
        self.out = QLineEdit(self._defaults.out)
        for line in (self.command, self.out):
            line.setMinimumWidth(460)          # a path or a command line reads whole
        self.problem = QLabel()
        mark_error_text(self.problem)
        self.problem.setWordWrap(True)
        form.addRow("Fails when", self.kind)
        form.addRow("Command", self.command)
        form.addRow("Fail regex", self.regex)
        form.addRow("Timeout", self.timeout)
        form.addRow("", self.hang_passes)
        form.addRow("Backend B", self.backend_b)
        self._other_row = self._with_browse(self.other, self._browse_other)
        form.addRow("Other graph", self._other_row)
        form.addRow("Float reference", self.analysis)
        form.addRow("Tolerance", self.tolerance)
        form.addRow("Run candidates on", self.backend)
        form.addRow("Search", self.mode)
        form.addRow("Reduced graph", self._with_browse(self.out, self._browse_out))
        form.addRow(self.problem)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Reduce")
        buttons.accepted.connect(self._check_and_accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.kind.currentIndexChanged.connect(self._on_kind)

    def _with_browse(self, line: QLineEdit, browse: object) -> QHBoxLayout:
        row = QHBoxLayout()
        button = QPushButton("…")
        button.clicked.connect(browse)
        row.addWidget(line)
        row.addWidget(button)
        return row

    def _on_kind(self) -> None:
        """Show the fields of the chosen check only, with the CLI's default tolerance."""
        key = self.kind.currentData()
        shown = {"command": (self.command, self.regex, self.timeout, self.hang_passes),
                 "backend-b": (self.backend_b, self.tolerance),
                 "against": (self.other, self.tolerance),
                 "reference": (self.analysis, self.tolerance)}.get(key, ())
        for field in (self.command, self.regex, self.timeout, self.hang_passes,
                      self.backend_b, self.other, self.analysis, self.tolerance):
            row = self._other_row if field is self.other else field
            self._form.setRowVisible(row, field in shown)
        self.tolerance.setValue(1.0 if key == "reference" else 0.0)
        self.problem.clear()
        self.problem.hide()

    def _browse_out(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Reduced graph", self.out.text(),
                                              "Hexscope graphs (*.hexgraph)")
        if path:
            self.out.setText(path)

    def _browse_other(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Other graph", self.other.text(),
                                              "Graphs (*.hexgraph *.c *.tflite)")
        if path:
            self.other.setText(path)

    def _check_and_accept(self) -> None:
        problem = self.problem_text()
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
        if not problem:
            self.accept()

    def problem_text(self) -> str:
        """Why the choices cannot start a reduction ('' when they can)."""
        key = self.kind.currentData()
        if key == "command" and not self.command.text().strip():
            return "Give the command to run on each candidate ({} is its path)."
        if key == "backend-b":
            b = self.backend_b.text().strip()
            if not b.startswith("dsp://") and b != SIM:
                return "Backend B is sim or dsp://HOST:PORT."
            if b == self.backend.currentData():
                return "Backend B is where candidates run already: choose another."
        if key == "against" and not os.path.isfile(self.other.text().strip()):
            return f"Other graph: no file {self.other.text().strip() or '(none given)'}."
        if not self.out.text().strip().endswith(".hexgraph"):
            return "The reduced graph is a .hexgraph file."
        return ""

    # what was chosen ------------------------------------------------------------------------
    def spec(self) -> CheckSpec:
        key = self.kind.currentData()
        tolerance = self.tolerance.value()
        if key == "command":
            return CheckSpec("command", command=self.command.text().strip(),
                             fail_regex=self.regex.text() or None,
                             timeout=self.timeout.value() or None,
                             timeout_fails=not self.hang_passes.isChecked())
        if key == "backend-b":
            return CheckSpec("backend-b", backend_b=self.backend_b.text().strip(),
                             tolerance=tolerance)
        if key == "reference":
            return CheckSpec("reference", analysis=self.analysis.currentData(),
                             tolerance=tolerance)
        if key == "against":
            return CheckSpec("against", tolerance=tolerance)
        return CheckSpec(key)

    @property
    def other_path(self) -> str:
        return self.other.text().strip()

    @property
    def search_mode(self) -> str:
        return str(self.mode.currentData())

    @property
    def run_on(self) -> str:
        return str(self.backend.currentData())
