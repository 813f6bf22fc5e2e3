"""A user's walk through the window under a real X server: the longest wall-clock gap of
the event loop per action, the GUI thread's own CPU in it, and the other threads' CPU in it.

The walk (as the lead's issue-32 check does it): Open, F10, F5, a const edit, F5 with Ctrl+Z
during the run, F5 again, Compare (isolated, against the float reference), add a Nop from the
palette, Delete, Ctrl+Z, consts as nodes on and off, Save As, reopen. A 10 ms timer ticks on
the GUI thread; per action the longest time between two ticks (wall clock) is how long the
window did not answer. Of that gap, the GUI thread's own CPU time, its time runnable without
a core (``/proc/self/task/TID/schedstat``'s run delay: other processes on a shared machine)
and the rest, "blocked": waiting for the GIL (or a lock) while another thread of the app
computes (issue 32, gil32). The CPU time of every other thread in the gap is printed too
(``/proc/self/task``, 10 ms ticks).

Run::

    DISPLAY=:72 QT_QPA_PLATFORM=xcb .venv/bin/python bench/ui_wall_gaps.py GRAPH 1280x800
        [--shots DIR] [--stacks] [--spy PY_SPY] [--proc] [--switch SECONDS] [--as-walk] [--gc]
        [--open-only ROUNDS]

``--as-walk`` makes the window as ``/work/walk.py`` does (``MainWindow`` alone: no collector
from ``app/gui.py``, whatever the window itself sets); by default the window is made as
``app/gui.py`` makes it (its collector, its switch interval). ``--switch`` sets Python's
switch interval after that (to compare intervals). ``--stacks`` samples every thread's
stack every 5 ms while the GUI thread has not ticked for 50 ms and prints the commonest per
action (the sampler is a Python thread too: it adds its own GIL requests, and it cannot
look while another thread holds the GIL in one long call). ``--spy PY_SPY`` records each
action with that ``py-spy`` binary from outside the process (``--gil --nonblocking``: only
the thread that holds the GIL, without pausing the process) and prints, for the longest
gap, who held the GIL in it and where, in ms: the thread and the call the GUI thread
waited for. (``faulthandler``'s watchdog, which also needs no GIL, crashed the process:
it reads the other threads' frames while they run.) ``--proc`` has a separate process
read every thread's state and system call from /proc every ~5 ms, and prints what the GUI
thread was doing in its longest gap (``S futex``: waiting for the GIL or a lock; ``D``: the
disk; ``S poll``: the event loop, or an X server's answer) and which threads ran in it.
``--gc`` prints each action's collections on the GUI thread by generation (how many, the
longest with its CPU time, in all; ``gc.callbacks``). ``--open-only ROUNDS`` opens the
graph, then reopens it ROUNDS times (nothing else). ``--shots DIR`` saves a screenshot of
the screen (``xwd``) after the main steps.
"""

from __future__ import annotations

import argparse
import collections
import copy
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

TICK_MS = 10
#: gaps longer than this count in each action's "gaps over" figures
LONG_GAP_S = 0.05
STACK_EVERY_S = 0.005
STACK_AFTER_S = 0.05
#: --spy: samples a second, and the seconds py-spy is given to attach before the action
SPY_RATE = 500
SPY_ATTACH_S = 0.5
#: --proc: the sampler process (no GIL of ours): each thread's state and system call
PROC_SAMPLER = """
import os, sys, time
pid, out = sys.argv[1], open(sys.argv[2], "w", buffering=1)
while os.path.exists(f"/proc/{pid}"):
    now = time.time()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                call = f.read().split()[0]
        except (OSError, IndexError):
            continue
        state = stat[stat.rindex(")") + 2]
        out.write(f"{now:.4f} {tid} {state} {call}\\n")
    time.sleep(0.004)
"""
#: x86-64 system call numbers --proc names
SYSCALLS = {"0": "read", "1": "write", "7": "poll", "74": "fsync", "75": "fdatasync",
            "87": "unlink", "202": "futex", "230": "clock_nanosleep", "232": "epoll_wait",
            "263": "unlinkat", "271": "ppoll", "281": "epoll_pwait", "82": "rename",
            "257": "openat", "3": "close", "35": "nanosleep", "9": "mmap", "11": "munmap",
            "10": "mprotect", "12": "brk", "28": "madvise", "23": "select", "270": "pselect6"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph")
    parser.add_argument("size", help="the window's size, WIDTHxHEIGHT")
    parser.add_argument("--shots", help="save screenshots (xwd of the display) here")
    parser.add_argument("--stacks", action="store_true", help="sample every thread in gaps")
    parser.add_argument("--proc", action="store_true",
                        help="the GUI thread's state and system call in each longest gap")
    parser.add_argument("--spy", metavar="PY_SPY",
                        help="a py-spy binary: who held the GIL in each action's longest gap")
    parser.add_argument("--switch", type=float, help="sys.setswitchinterval after the window")
    parser.add_argument("--qwait", action="store_true",
                        help="wait with processEvents and QTest.qWait, as walk.py does")
    parser.add_argument("--gc", action="store_true",
                        help="time the GUI thread's collections per action (gc.callbacks)")
    parser.add_argument("--as-walk", action="store_true",
                        help="make the window as /work/walk.py does (no app/gui.py set-up)")
    parser.add_argument("--open-only", type=int, metavar="ROUNDS",
                        help="only Open, then reopen the same file ROUNDS times (load32b)")
    args = parser.parse_args()
    Walk(args).run()


class ThreadClock:
    """CPU seconds of every thread of the process (Qt's threads too), by name and id, read
    from /proc/self/task (utime + stime, in clock ticks)."""

    TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")

    @classmethod
    def read(cls) -> dict[str, float]:
        out: dict[str, float] = {}
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            out[f"{name}#{task}"] = (int(fields[11]) + int(fields[12])) * cls.TICK_S
        return out


class Walk:
    def __init__(self, args: argparse.Namespace) -> None:
        from PySide6.QtCore import QSettings, QTimer
        from PySide6.QtWidgets import QApplication, QMessageBox

        from hexscope.app.main_window import MainWindow
        from hexscope.app.settings import AppSettings

        self.args = args
        self.app = QApplication.instance() or QApplication(sys.argv[:1])
        self.tmp = Path(tempfile.mkdtemp())
        settings = AppSettings(QSettings(str(self.tmp / "s.ini"), QSettings.Format.IniFormat),
                               root=str(self.tmp / "app"))
        collector = None
        if not args.as_walk:
            from hexscope.app.collector import GuiCollector
            from hexscope.app.gil import favour_the_gui_thread

            favour_the_gui_thread()
            collector = GuiCollector(self.app)
            collector.freeze_soon()
        self.window = MainWindow(settings)
        if collector is not None:
            self.window.document_shown.connect(collector.freeze_soon)
        QMessageBox.question = staticmethod(lambda *a, **k: QMessageBox.StandardButton.Discard)
        width, height = map(int, args.size.split("x"))
        self.window.resize(width, height)
        self.window.show()
        from hexscope.app.kernel_preload import start_preload

        start_preload()
        if args.switch is not None:
            sys.setswitchinterval(args.switch)
        self.gaps: list[tuple[float, float, dict[str, float], list[list[str]]]] = []
        self.gui_tid = threading.get_native_id()
        self.last = (time.perf_counter(), ThreadClock.read())
        self.last_gui_cpu = time.thread_time()
        self.last_delay = self._run_delay()
        self.stacks: list[list[str]] = []
        self.gui = threading.get_ident()
        self.timer = QTimer()
        self.timer.timeout.connect(self._tick)
        self.timer.start(TICK_MS)
        if args.stacks:
            threading.Thread(target=self._sample, daemon=True, name="wall-gaps-sampler").start()
        self.rows: list[tuple[str, float, float, float, str]] = []
        # --gc: (generation, seconds, CPU seconds: a pass without a core lasts longer)
        self.passes: list[tuple[int, float, float]] = []
        self._pass_began = (0.0, 0.0)
        if args.gc:
            gc.callbacks.append(self._on_pass)
        self.proc_out = self.tmp / "proc.txt"
        if args.proc:
            subprocess.Popen([sys.executable, "-c", PROC_SAMPLER, str(os.getpid()),
                              str(self.proc_out)])

    def _tick(self) -> None:
        now, clocks = time.perf_counter(), ThreadClock.read()
        then, old = self.last
        used = {name: cpu - old.get(name, 0.0) for name, cpu in clocks.items()}
        # the GUI thread's own clock (/proc counts in 10 ms ticks), and its time runnable
        # without a core (schedstat's run_delay: other processes' share of the gap)
        gui_cpu, delay = time.thread_time(), self._run_delay()
        self.gaps.append((now - then, gui_cpu - self.last_gui_cpu, used, self.stacks,
                          delay - self.last_delay, time.time()))
        self.last_gui_cpu, self.last_delay = gui_cpu, delay
        self.stacks = []
        self.last = (now, clocks)

    def _on_pass(self, phase: str, info: dict) -> None:
        if threading.get_ident() != self.gui:
            return
        if phase == "start":
            self._pass_began = (time.perf_counter(), time.thread_time())
        else:
            wall, cpu = self._pass_began
            self.passes.append((info["generation"], time.perf_counter() - wall,
                                time.thread_time() - cpu))

    def _run_delay(self) -> float:
        try:
            with open(f"/proc/self/task/{self.gui_tid}/schedstat") as f:
                return int(f.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return 0.0

    def _gui_name(self, clocks: dict[str, float]) -> str:
        return next((n for n in clocks if n.endswith(f"#{self.gui_tid}")), "")

    def _sample(self) -> None:
        names_here = threading.get_ident()
        while True:
            time.sleep(STACK_EVERY_S)
            if time.perf_counter() - self.last[0] < STACK_AFTER_S:
                continue
            names = {t.ident: t.name for t in threading.enumerate()}
            snap = []
            for ident, frame in sys._current_frames().items():
                if ident == names_here:
                    continue
                where = traceback.extract_stack(frame)[-4:]
                who = "GUI" if ident == self.gui else names.get(ident, str(ident))
                snap.append(f"{who}: " + " < ".join(
                    f"{Path(f.filename).stem}:{f.name}:{f.lineno}" for f in reversed(where)))
            self.stacks.append(snap)

    # -- the walk's steps ----------------------------------------------------------------

    def wait(self, seconds: float, until: Callable[[], bool] | None = None) -> None:
        """The event loop for ``seconds`` or until ``until()``: a loop that waits for events
        as the app's does (``--qwait``: ``processEvents`` and ``QTest.qWait`` as walk.py,
        which never waits in the event dispatcher)."""
        from PySide6.QtCore import QEventLoop, QTimer
        from PySide6.QtTest import QTest

        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            if self.args.qwait:
                self.app.processEvents()
                QTest.qWait(10)
            else:
                loop = QEventLoop()
                QTimer.singleShot(10, loop.quit)
                loop.exec()
            if until is not None and until():
                break

    def idle(self) -> bool:
        return not self.window.controller.busy

    def action(self, name: str, start: Callable[[], object], settle: float = 3.0,
               until: Callable[[], bool] | None = None) -> None:
        spy = self._start_spy()
        self.gaps.clear()
        self.passes.clear()
        self.stacks = []
        self.last = (time.perf_counter(), ThreadClock.read())
        self.last_gui_cpu = time.thread_time()
        self.last_delay = self._run_delay()
        t0 = time.perf_counter()
        start()
        self.wait(settle, until or self.idle)
        self.wait(0.3)
        total = time.perf_counter() - t0
        from hexscope.app import gil

        turn = getattr(gil, "installed", lambda: None)()
        gave = f"; computing threads gave way {turn.waited:.2f} s" if turn else ""
        if turn is not None:
            turn.waited = 0.0
        wall, gui_cpu, used, stacks, delay, ended = max(
            self.gaps or [(0.0, 0.0, {}, [], 0.0, 0.0)], key=lambda g: g[0])
        others = ", ".join(f"{n.split('#')[0]} {s * 1e3:.0f}" for n, s in
                           sorted(used.items(), key=lambda kv: -kv[1])
                           if s > 0.005 and n != self._gui_name(used))
        self.rows.append((name, wall, gui_cpu, total, others))
        # what is neither its CPU nor waiting for a core: blocked (the GIL, a lock), less the
        # timer's own period
        blocked = max(0.0, wall - gui_cpu - delay - TICK_MS / 1e3)
        # every gap over LONG_GAP_S: how many, and their blocked time in all (one longest
        # gap's blocked time is one sample of a noisy machine)
        long = [g for g in self.gaps if g[0] > LONG_GAP_S]
        long_blocked = sum(max(0.0, g[0] - g[1] - g[4] - TICK_MS / 1e3) for g in long)
        print(f"{name:32s} {total:6.2f} s  longest gap {wall * 1e3:5.0f} ms wall, GUI CPU "
              f"{gui_cpu * 1e3:4.0f} ms, no core {delay * 1e3:4.0f} ms, blocked "
              f"{blocked * 1e3:4.0f} ms; other threads' CPU in it (ms): {others or '-'}{gave}; "
              f"{len(long)} gaps over {LONG_GAP_S * 1e3:.0f} ms, blocked in them "
              f"{long_blocked * 1e3:.0f} ms", flush=True)
        if self.args.gc:
            print("     collections on the GUI thread: " + ("; ".join(
                f"generation {g}: {len(ts)}, longest {max(ts)[0] * 1e3:.0f} ms (CPU "
                f"{max(ts)[1] * 1e3:.0f}), in all {sum(t for t, _ in ts) * 1e3:.0f} ms"
                for g in range(3) if (ts := [(t, c) for gen, t, c in self.passes if gen == g]))
                or "none"), flush=True)
        if spy is not None:
            self._print_spy(spy, ended - wall, ended)
        if self.args.proc:
            self._print_proc(ended - wall, ended)
        if stacks:
            common: collections.Counter[str] = collections.Counter()
            for snap in stacks:
                common.update(snap)
            for line, count in common.most_common(10):
                print(f"     {count:3d} x {line}", flush=True)

    def _start_spy(self) -> tuple[subprocess.Popen, Path, float] | None:
        """py-spy recording this process (chrome trace: timed samples), or None."""
        if not self.args.spy:
            return None
        out = self.tmp / f"spy-{len(self.rows)}.json"
        proc = subprocess.Popen(
            [self.args.spy, "record", "--pid", str(os.getpid()), "--nonblocking", "--gil",
             "--threads", "--rate", str(SPY_RATE), "--format", "chrometrace",
             "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        began = time.time()
        self.wait(SPY_ATTACH_S)
        return proc, out, began

    def _print_spy(self, spy: tuple[subprocess.Popen, Path, float], start: float,
                   end: float) -> None:
        """Who held the GIL from ``start`` to ``end`` (time.time()), by thread and its
        innermost frames, in ms. py-spy's times count from its start (a few ms early)."""
        proc, out, began = spy
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
        try:
            events = json.loads(out.read_text())
        except (OSError, ValueError):
            print("     (py-spy wrote nothing: may it trace this process? ptrace_scope)")
            return
        lo, hi = (start - began) * 1e6, (end - began) * 1e6
        held: collections.Counter[str] = collections.Counter()
        # Begin/End events of nested frames (the first one is the thread), written when a
        # thread's sampled stack changes (its line, mostly: at each sample while it runs).
        # With --gil only the thread holding the GIL is sampled, so the thread with the
        # latest events holds it until another's come; its stack as they leave it is
        # where it was (a long call keeps the same stack: no events meanwhile).
        stacks: dict[int, list[dict]] = collections.defaultdict(list)
        events.sort(key=lambda e: e["ts"])          # stable: each thread's order kept
        for k, event in enumerate(events):
            stack = stacks[event["tid"]]
            if event["ph"] == "B":
                stack.append(event)
            elif stack:
                stack.pop()
            following = events[k + 1]["ts"] if k + 1 < len(events) else event["ts"]
            overlap = min(following, hi) - max(event["ts"], lo)
            if overlap <= 0 or len(stack) < 2:
                continue
            who = stack[0]["name"].split(": ", 1)[-1]
            where = " < ".join(f"{Path(f['args']['filename']).stem}:{f['name']}:"
                               f"{f['args']['line']}" for f in reversed(stack[-4:]))
            held[f"{who}: {where}"] += overlap / 1e3
        for line, ms in held.most_common(8):
            if ms >= 5:
                print(f"     GIL {ms:5.0f} ms: {line}", flush=True)

    def _print_proc(self, start: float, end: float) -> None:
        """The GUI thread's states and calls from ``start`` to ``end`` (--proc's samples),
        and the threads found running (R) then, by name."""
        names = {str(n.split("#")[1]): n.split("#")[0] for n in ThreadClock.read()}
        gui: collections.Counter[str] = collections.Counter()
        running: collections.Counter[str] = collections.Counter()
        try:
            lines = self.proc_out.read_text().splitlines()
        except OSError:
            return
        for line in lines:
            fields = line.split()
            if len(fields) != 4 or not start <= float(fields[0]) <= end:
                continue
            _, tid, state, call = fields
            if tid == str(self.gui_tid):
                gui[f"{state} {SYSCALLS.get(call, call)}"] += 1
            elif state == "R":
                running[names.get(tid, tid)] += 1
        print("     GUI thread (samples): " + ", ".join(f"{k} {v}" for k, v in
                                                      gui.most_common()) +
              "; others running: " + (", ".join(f"{k} {v}" for k, v in
                                                running.most_common(6)) or "-"), flush=True)

    def shot(self, name: str) -> None:
        if not self.args.shots:
            return
        self.wait(0.3)
        out = Path(self.args.shots)
        out.mkdir(parents=True, exist_ok=True)
        display = os.environ.get("DISPLAY", ":0")
        subprocess.run(["bash", "-c", f"xwd -root -silent -display {display} | "
                        f"convert xwd:- {out / (name + '.png')}"], check=False)

    def key(self, key, mods=None) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        self.window.activateWindow()
        self.window.canvas.setFocus()
        QTest.keyClick(self.window.canvas, key, mods or Qt.KeyboardModifier.NoModifier)

    def run(self) -> None:
        import numpy as np
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        from hexscope.engine import Graph, Session

        w = self.window
        self.wait(1.0)
        w.activateWindow()
        self.wait(0.5)
        print(f"switch interval {sys.getswitchinterval() * 1e3:.2f} ms; "
              f"{os.getloadavg()[0]:.2f} load", flush=True)

        def opened() -> bool:
            return len(w.scene.items_by_id) > 0 and self.idle()

        self.action("open", lambda: w.files.open_graph(self.args.graph), 60, opened)
        self.shot("1-open")
        if self.args.open_only:
            for k in range(self.args.open_only):
                self.action("reopen", lambda: w.files.open_graph(self.args.graph), 60, opened)
                self.shot(f"6-reopen-{k}")
            w.close()
            w.shutdown()
            print(f"{os.getloadavg()[0]:.2f} load at the end", flush=True)
            return
        self.action("step (F10)", lambda: self.key(Qt.Key.Key_F10), 120)
        self.action("run (F5)", lambda: self.key(Qt.Key.Key_F5), 240)
        self.shot("2-run")
        consts = [n for n in w.graph if n.is_const and n.const is not None
                  and n.const.has_data and n.const.array.size > 8]
        if consts:
            target = consts[0]
            arr = target.const.array.copy()
            arr.reshape(-1)[0] = arr.reshape(-1)[-1]
            self.action("const edit", lambda: w.edits.set_const(target.node_id, arr), 1)

            def f5_then_undo() -> None:
                self.key(Qt.Key.Key_F5)
                self.wait(0.05)
                self.key(Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)

            self.action("F5, Ctrl+Z during the run", f5_then_undo, 240)
            self.action("F5 again", lambda: self.key(Qt.Key.Key_F5), 240)
            saved = self.tmp / "after.hexgraph"
            w.graph.save(saved)
            fresh = Session(Graph.load(saved))
            fresh.set_inputs(w.session.inputs)
            states, _ = w.session._snapshot
            fresh.executor.states.update(copy.deepcopy(states))
            fresh.run()
            same = all(np.array_equal(a.array, b.array) for a, b in
                       zip(w.session.graph_outputs(), fresh.graph_outputs(), strict=True))
            print(f"outputs equal a fresh session's on the saved file: {same}", flush=True)
            # the walk's own check made ~340,000 objects on the GUI thread outside the event
            # loop: collected here, or the next action's first pass walks them (col32)
            del fresh, states
            gc.collect()
        self.shot("3-after-undo")
        panel = w.compare.panel
        panel.target.setCurrentIndex(panel.target.findData("isolated"))
        self.action("Compare (isolated)",
                    lambda: QTest.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton),
                    120, lambda: w.compare.running is None and self.idle())
        self.shot("4-compare")
        self.action("add Nop from palette", lambda: w.palette.op_activated.emit("Nop"), 2)
        self.action("Delete", lambda: self.key(Qt.Key.Key_Delete), 2)
        self.action("Ctrl+Z", lambda: self.key(Qt.Key.Key_Z,
                                               Qt.KeyboardModifier.ControlModifier), 2)
        self.action("consts as nodes on", w.show_consts.trigger, 60)
        self.shot("5-consts")
        self.action("consts as nodes off", w.show_consts.trigger, 60)
        path = self.tmp / "saved.hexgraph"
        self.action("Save As", lambda: w.files.save_graph_as(str(path)), 30)
        self.action("reopen", lambda: w.files.open_graph(str(path)), 60, opened)
        self.shot("6-reopen")
        w.undo_stack.setClean()
        w.close()
        w.shutdown()
        print(f"{os.getloadavg()[0]:.2f} load at the end", flush=True)


if __name__ == "__main__":
    main()
