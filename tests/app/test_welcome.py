"""The welcome page a new user starts on: examples, recent files, New / Open / Import C, keys."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QPushButton

from hexscope.widgets.welcome_page import bundled_examples

EXAMPLES = Path(__file__).parents[2] / "resources" / "examples"


def _button(page, text: str) -> QPushButton:
    return next(b for b in page.findChildren(QPushButton) if b.text() == text)


def test_every_bundled_example_is_listed_with_what_it_shows(qtbot, window):
    window.show_welcome()
    page = window.welcome
    listed = [page.examples.item(k).text() for k in range(page.examples.count())]
    files = sorted(p.name for p in EXAMPLES.glob("*.hexgraph"))
    assert [text.split(" — ")[0] for text in listed] == files
    assert all(" — " in text for text in listed)           # each has its line
    assert len(bundled_examples()) == len(files)
    from PySide6.QtWidgets import QLabel
    texts = {label.text() for label in page.findChildren(QLabel)}
    for key in ("F5", "F10", "F9", "Ctrl+F10", "Shift+F5"):
        assert f"<b>{key}</b>" in texts


def test_double_clicking_an_example_opens_it_on_the_canvas(qtbot, window):
    window.show_welcome()
    page = window.welcome
    assert window.central.currentWidget() is page
    item = page.examples.item(0)
    page.examples.itemDoubleClicked.emit(item)
    assert window.files.path == str(EXAMPLES / sorted(p.name for p in
                                                       EXAMPLES.glob("*.hexgraph"))[0])
    assert window.central.currentWidget() is window.canvas and len(window.graph) > 0
    window.show_welcome()                                  # now it is a recent file
    assert window.welcome.recent.item(0).text() == window.files.path


def test_new_and_import_c_buttons(qtbot, window, monkeypatch):
    window.show_welcome()
    _button(window.welcome, "New graph").click()
    assert window.central.currentWidget() is window.canvas and len(window.graph) == 0
    window.show_welcome()
    asked: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda parent, title, folder, filters: asked.append(filters) or ("", ""))
    _button(window.welcome, "Import hexagon_nn C…").click()
    assert asked and "*.c" in asked[0] and "*.hexgraph" not in asked[0]
    assert window.central.currentWidget() is window.welcome   # cancelled: still there


def test_f5_on_the_welcome_page_does_not_run_the_hidden_graph(qtbot, shown, graph_file):
    from PySide6.QtCore import Qt

    assert shown.files.open_graph(graph_file)
    shown.help.welcome.trigger()                 # Help ▸ Welcome page, the graph behind it
    assert shown.central.currentWidget() is shown.welcome
    started: list[object] = []
    shown.controller.node_started.connect(started.append)
    shown.welcome.setFocus()
    for key in (Qt.Key.Key_F5, Qt.Key.Key_F10):
        qtbot.keyClick(shown.welcome, key)
    qtbot.wait(300)
    assert not started and shown.session is None and not shown.controller.busy
    assert "welcome page" in shown.statusBar().currentMessage()
