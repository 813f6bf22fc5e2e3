"""The sliced work of one event-loop pass shares one budget (widgets/event_turns.py): at
10,000 nodes a reopen ran a tile band, a looks slice and the loader's disposal back to back
in one pass, an 80-120 ms gap (issue 32)."""

from __future__ import annotations

import time

from PySide6.QtCore import QAbstractEventDispatcher, QEventLoop, QTimer

from hexscope.widgets import event_turns
from hexscope.widgets.event_turns import FORCE_PASSES, GONE_PASSES, PASS_BUDGET_S, Turns


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _turns() -> tuple[Turns, _Clock]:
    clock = _Clock()
    turns = Turns(clock)
    turns._hooked = True          # passes come from the test, not from Qt's dispatcher
    return turns, clock


def test_a_slice_runs_while_the_pass_has_room_and_waits_once_it_is_spent():
    turns, clock = _turns()
    turns.new_pass()
    assert turns.may_run("tiles")
    clock.now += 2 * PASS_BUDGET_S             # the tiles' band took the budget
    assert not turns.may_run("looks")
    assert not turns.may_run("minimap")
    turns.new_pass()
    assert not turns.may_run("minimap")        # first come, first served: looks is first
    assert turns.may_run("looks")
    clock.now += 2 * PASS_BUDGET_S             # looks took the budget
    assert not turns.may_run("minimap")
    turns.new_pass()
    assert not turns.may_run("tiles")          # a newcomer queues behind the waiting one
    assert turns.may_run("minimap")
    assert turns.may_run("tiles") and turns.waiting == 0    # minimap was quick


def test_a_waiting_slice_runs_after_force_passes_though_every_pass_is_spent():
    turns, clock = _turns()
    turns.new_pass()
    clock.now += 1.0
    assert not turns.may_run("tiles")
    for _ in range(FORCE_PASSES - 1):
        turns.new_pass()
        clock.now += 1.0                       # a paint takes the whole budget each pass
        assert not turns.may_run("tiles")
    turns.new_pass()
    clock.now += 1.0
    assert turns.may_run("tiles")


def test_a_slice_that_stopped_asking_does_not_hold_the_others_back():
    turns, clock = _turns()
    turns.new_pass()
    clock.now += 1.0
    assert not turns.may_run("closed view")    # waits, then its timer is stopped
    assert not turns.may_run("looks")
    for _ in range(GONE_PASSES - 1):
        turns.new_pass()                       # the pass has room: only the order holds
        assert not turns.may_run("looks")
    turns.new_pass()
    assert turns.may_run("looks") and turns.waiting == 0


def test_slices_longer_than_the_budget_run_one_per_pass_in_the_event_loop(qtbot):
    """Three views' zero-interval timers, each slice longer than the budget: without the
    gate all three ran in every pass (Qt fires all due timers in one pass), with it one."""
    dispatcher = QAbstractEventDispatcher.instance()
    passes: list[list[str]] = [[]]
    began = lambda: passes.append([])  # noqa: E731
    dispatcher.aboutToBlock.connect(began)
    timers = []
    done = {"a": 0, "b": 0, "c": 0}

    def slice_of(name: str) -> None:
        end = time.perf_counter() + 2 * PASS_BUDGET_S
        while time.perf_counter() < end:
            pass
        passes[-1].append(name)
        done[name] += 1
        if done[name] < 4:
            timers_by_name[name].start()

    timers_by_name = {}
    for name in done:
        timer = QTimer(singleShot=True, interval=0)
        timer.timeout.connect(event_turns.gated(timer, lambda n=name: slice_of(n)))
        timers_by_name[name] = timer
        timers.append(timer)
    try:
        for timer in timers:
            timer.start()
        loop = QEventLoop()
        QTimer.singleShot(3000, loop.quit)
        watcher = QTimer(interval=5)
        watcher.timeout.connect(lambda: loop.quit() if all(v == 4 for v in done.values())
                                else None)
        watcher.start()
        loop.exec()
        watcher.stop()
    finally:
        dispatcher.aboutToBlock.disconnect(began)
    assert all(v == 4 for v in done.values())           # every slice ran, none starved
    assert max(len(p) for p in passes) == 1
