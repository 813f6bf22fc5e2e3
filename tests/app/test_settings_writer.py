"""Settings reach their file from a thread of their own, never the GUI thread's fdatasync
(issue 32: a reopen's recent-files write held the window 108 ms), and none is lost."""

from __future__ import annotations

import threading

from PySide6.QtCore import QSettings

from hexscope.app.main_window import MainWindow
from hexscope.app.settings import AppSettings
from hexscope.app.settings_writer import SettingsWriter


class _Recording:
    """A settings object that notes the thread of each call."""

    def __init__(self, fail_first: bool = False) -> None:
        self.values: dict[str, object] = {}
        self.threads: set[int] = set()
        self.syncs = 0
        self._fail = fail_first

    def setValue(self, key: str, value: object) -> None:  # noqa: N802 - Qt's name
        self.threads.add(threading.get_ident())
        if self._fail:
            self._fail = False
            raise ValueError("cannot store")
        self.values[key] = value

    def sync(self) -> None:
        self.threads.add(threading.get_ident())
        self.syncs += 1


def test_writes_run_on_another_thread_and_are_all_in_after_a_flush():
    target = _Recording()
    writer = SettingsWriter(lambda: target)
    for k in range(50):
        writer.put(f"k{k % 7}", k)
    writer.flush()
    assert threading.get_ident() not in target.threads
    assert target.values == {f"k{k}": max(j for j in range(50) if j % 7 == k) for k in range(7)}
    assert 1 <= target.syncs <= 50


def test_a_write_that_fails_does_not_stop_the_ones_after_it():
    target = _Recording(fail_first=True)
    writer = SettingsWriter(lambda: target)
    writer.put("bad", object())
    writer.flush()
    writer.put("good", 1)
    writer.flush()
    assert target.values == {"good": 1}
    assert writer.failure == "ValueError: cannot store"


def test_nothing_written_starts_no_thread(tmp_path):
    before = {t.name for t in threading.enumerate()}
    settings = AppSettings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                           root=str(tmp_path))
    settings.recent_files()
    settings.theme()
    settings.flush()
    assert "hexscope-settings" not in {t.name for t in threading.enumerate()} - before


def test_the_gui_thread_never_sets_a_qsettings_value(tmp_path, monkeypatch):
    threads: list[int] = []
    original = QSettings.setValue

    def noting(self: QSettings, key: str, value: object) -> None:
        threads.append(threading.get_ident())
        original(self, key, value)

    monkeypatch.setattr(QSettings, "setValue", noting)
    path = str(tmp_path / "s.ini")
    settings = AppSettings(QSettings(path, QSettings.Format.IniFormat), root=str(tmp_path))
    settings.add_recent(str(tmp_path / "a.hexgraph"))
    settings.set_theme("dark")
    # what was set reads back at once, before the file has it
    assert settings.recent_files() == [str(tmp_path / "a.hexgraph")]
    assert settings.theme() == "dark"
    settings.flush()
    assert threads and threading.get_ident() not in threads
    again = QSettings(path, QSettings.Format.IniFormat)
    assert again.value("recent_files") in ([str(tmp_path / "a.hexgraph")],
                                            str(tmp_path / "a.hexgraph"))
    assert again.value("theme") == "dark"


def test_closing_the_window_leaves_its_layout_and_recent_files_in_the_file(qtbot, tmp_path):
    path = str(tmp_path / "s.ini")
    settings = AppSettings(QSettings(path, QSettings.Format.IniFormat), root=str(tmp_path))
    window = MainWindow(settings)
    qtbot.addWidget(window)
    settings.add_recent(str(tmp_path / "b.hexgraph"))
    window.undo_stack.setClean()
    assert window.close()
    again = AppSettings(QSettings(path, QSettings.Format.IniFormat), root=str(tmp_path))
    geometry, state = again.layout()
    assert geometry is not None and state is not None
    assert again.recent_files() == [str(tmp_path / "b.hexgraph")]
