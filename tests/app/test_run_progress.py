"""hexscope run's progress: a bar with the rate and the time left on a terminal, one plain
line per run in a CI log."""

from __future__ import annotations

import io

from hexscope.app.cli_run import Progress
from hexscope.engine.batch.records import Outcome, RunRecord


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _drive(progress: Progress, total: int = 4) -> None:
    for k in range(total):
        progress(k, total, None, f"img{k}.png")
        progress(k + 1, total, RunRecord(f"img{k}.png", [], Outcome.PASSED, 0.01), f"img{k}.png")


def test_a_terminal_gets_a_bar_with_rate_and_time_left():
    out = _Terminal()
    _drive(Progress(out, quiet=False))
    text = out.getvalue()
    assert "4/4" in text and "run/s" in text and "<" in text     # rate, and elapsed<left
    assert "img3.png" in text and text.endswith("\n")
    assert "passed" not in text                                   # no per-run lines


def test_a_log_gets_one_line_per_run_and_quiet_gets_none():
    out = io.StringIO()
    _drive(Progress(out, quiet=False))
    assert out.getvalue().splitlines() == [
        f"run {k + 1}/4 img{k}.png: passed (0.010 s)" for k in range(4)]
    quiet = io.StringIO()
    _drive(Progress(quiet, quiet=True))
    assert quiet.getvalue() == ""
