"""ConnectionDialog: where the connected DSP's agent listens (HOST:PORT) and its token."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)


def parse_host_port(text: str) -> tuple[str, int] | None:
    """``HOST:PORT`` (a ``dsp://`` prefix is allowed; IPv6 in brackets), or None."""
    rest = text.strip().removeprefix("dsp://").rstrip("/")
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


class ConnectionDialog(QDialog):
    """Asks for the agent's address and token; ``address()`` is ``dsp://HOST:PORT``."""

    def __init__(self, address: str = "127.0.0.1:5599", token: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect to a DSP")
        self.setMinimumWidth(480)
        self.host_port = QLineEdit(address.removeprefix("dsp://"))
        self.host_port.setPlaceholderText("127.0.0.1:5599")
        self.token = QLineEdit(token)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText("empty: none, or $HEXSCOPE_AGENT_TOKEN")
        self.problem = QLabel()
        self.problem.setStyleSheet("color: #b00020")
        help_text = QLabel(
            "The device agent: <tt>hexscope-agent</tt> (the simulator, for development) or "
            "the on-device agent of <tt>packaging/dsp-agent</tt>, reached through "
            "<tt>adb forward tcp:5599 tcp:5599</tt>. The device runs whole graphs: a step "
            "runs the graph up to the next node and shows what it returned.")
        help_text.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Agent (host:port):", self.host_port)
        form.addRow("Token:", self.token)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Connect")
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(help_text)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.host_port.textChanged.connect(lambda _text: self.problem.clear())

    def address(self) -> str:
        parsed = parse_host_port(self.host_port.text())
        if parsed is None:
            return ""
        host, port = parsed
        return f"dsp://{'[' + host + ']' if ':' in host else host}:{port}"

    def _accept(self) -> None:
        if not self.address():
            self.problem.setText("Expected HOST:PORT, e.g. 127.0.0.1:5599")
            return
        self.accept()
