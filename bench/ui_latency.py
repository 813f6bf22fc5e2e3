"""How long the window stops answering during everyday actions on large graphs.

A watchdog timer on the GUI thread ticks every few milliseconds; the longest gap between two
ticks while an action runs (and for a short settling time after it, when the timers it
started fire) is how long the window could not answer a click or a repaint. The target is
under 100 ms for every action. The actions, through the window's own actions, in order:

open (File > Open of a .hexgraph), first run (F5), F5 after a const edit, step (after
Restart), undo (of the const edit), add from palette (a Nop, at the view's centre), delete
(of that node, selected), undo delete, toggle consts as nodes (on, then off), save (Save
As), import C (File > Import C of the same graph).

Run::

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/ui_latency.py [--sizes 1000 10000 20000]
        [--profile DIR | --stacks]

``--stacks`` only samples the GUI thread's stacks in its gaps (printed per action; the
sampler costs little, so the gaps are about as without it). ``--profile DIR`` writes a
cProfile of the GUI thread within each action's longest gap (``DIR/<size>-<action>.prof``,
its top functions printed) and samples the stacks too, to find what blocks the GUI thread
(the profiler slows Python code: the gaps measured with it are longer). Each size runs
in its own process (a fresh window and caches as a user's start), and the engine's
kernels are compiled beforehand so that no action pays for a first compilation.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ACTIONS = ("open", "first run", "F5 after a const edit", "step", "undo",
           "add from palette", "delete", "undo delete",
           "consts as nodes on", "consts as nodes off", "save", "import C")
TICK_MS = 4
SAMPLE_S = 0.002     # --profile: the GUI thread's stack is taken this often,
GAP_SAMPLED_S = 0.01     # once it has not ticked for this long
SETTLE_S = 0.6       # the timers an action starts (validation 120 ms, minimap 300 ms) fire


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 20000])
    parser.add_argument("--profile", help="write a cProfile of each action's longest gap here")
    parser.add_argument("--stacks", action="store_true",
                        help="only sample the GUI thread's stacks in its gaps (no cProfile)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)   # a child: one size
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.profile, args.stacks)), flush=True)
        return
    results = {}
    for n in args.sizes:
        cmd = [sys.executable, __file__, "--one", str(n)]
        if args.profile:
            cmd += ["--profile", args.profile]
        if args.stacks:
            cmd += ["--stacks"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                             env={**os.environ, "QT_QPA_PLATFORM":
                                  os.environ.get("QT_QPA_PLATFORM", "offscreen")})
        if out.returncode:
            sys.exit(f"{n} nodes failed:\n{out.stderr[-3000:]}")
        results[n] = json.loads(out.stdout.strip().splitlines()[-1])
    print(table(results))


def table(results: dict[int, dict[str, list[float]]]) -> str:
    sizes = list(results)
    nodes = [results[n]["nodes"][0] for n in sizes]
    lines = ["| action: longest gap, wall / GUI thread's CPU (whole action) | " +
             " | ".join(f"{int(k):,} nodes" for k in nodes) + " |",
             "|---|" + "---:|" * len(sizes)]
    for action in ACTIONS:
        cells = []
        for n in sizes:
            gap, total, cpu = results[n][action][:3]
            cells.append(f"{gap * 1e3:,.0f} / {cpu * 1e3:,.0f} ms ({_seconds(total)})")
        lines.append(f"| {action} | " + " | ".join(cells) + " |")
    lines.append("| start and quit (no graph) | " + " | ".join(
        _seconds(results[n]["start and quit"][0]) for n in sizes) + " |")
    lines += ["", "| action: the GUI thread's longest collection, young / full | " +
              " | ".join(f"{int(k):,} nodes" for k in nodes) + " |",
              "|---|" + "---:|" * len(sizes)]
    for action in ACTIONS:
        cells = [" / ".join(f"{s * 1e3:,.0f}" for s in results[n][action][3:5]) + " ms"
                 for n in sizes]
        lines.append(f"| {action} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _seconds(s: float) -> str:
    return f"{s:.2f} s" if s >= 1 else f"{s * 1e3:.0f} ms"


def measure(n: int, profile_dir: str | None, stacks: bool = False
            ) -> dict[str, list[float]]:
    start_quit = _start_and_quit()
    sys.path.insert(0, str(ROOT / "tests"))
    from hexscope.engine.io.c_export import export_c
    from hexscope.engine.nodes import OutputDef
    from support.large_graph import residual_graph

    tmp = Path(tempfile.mkdtemp(prefix="hexscope-ui-latency-"))
    graph = residual_graph(n)
    # A declared input shape, as a user gives it (Inspector > Shape), so that F5 runs.
    graph.set_outputs(0x10, [OutputDef(max_sizes=(1, 8, 8, 8), elementsize=4)])
    path, c_path = tmp / f"g{n}.hexgraph", tmp / f"g{n}.c"
    graph.save(path)
    export_c(graph, c_path, "bench")
    _warm_kernels(graph)
    os.environ["HOME"] = str(tmp)            # fresh settings, no autosave to restore
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from hexscope.app.main_window import MainWindow
    from hexscope.app.settings import AppSettings

    app = QApplication.instance() or QApplication([])
    # As app/gui.py does: the cyclic collector runs on the GUI thread only, on a timer.
    # Without it (the bench made its own window) a full collection ran on the session's
    # thread whenever its allocations crossed the threshold, 0.3-0.8 s at 10,000 nodes
    # with the GIL held: wall gaps of runs and steps that the app does not have.
    collector = _app_collector(app)
    _app_switch_interval()
    settings = AppSettings(QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
                           root=str(tmp / "data"))
    window = MainWindow(settings)
    if hasattr(window, "document_shown"):
        window.document_shown.connect(collector.freeze_soon)
    window.show()
    meter = GapMeter(app, sample=bool(profile_dir) or stacks, profile=bool(profile_dir))
    collections_meter = CollectionMeter()
    meter.settle(0.5)
    results: dict[str, list[float]] = {"nodes": [float(len(graph))],
                                       "start and quit": [start_quit]}
    for name, start, done in _steps(window, path, c_path, tmp):
        collections_meter.clear()
        gap, total, cpu = meter.action(start, done)
        if meter.worst_profile is not None and profile_dir:
            Path(profile_dir).mkdir(parents=True, exist_ok=True)
            where = Path(profile_dir) / f"{n}-{name.replace(' ', '_')}.prof"
            meter.worst_profile.dump_stats(where)
            _print_top(where)
        young, full = collections_meter.longest()
        results[name] = [gap, total, cpu, young, full]
        for stack, seconds in meter.blocked.most_common(6):
            print(f"    {seconds * 1e3:.0f} ms blocked in {stack}", file=sys.stderr)
        worst: collections.Counter[str] = collections.Counter()
        for stack, seconds in meter.worst_stacks:
            worst[stack] += seconds
        for stack, seconds in worst.most_common(8):
            print(f"    longest gap: {seconds * 1e3:.0f} ms in {stack}", file=sys.stderr)
        meter.blocked.clear()
        print(f"{name}: {gap * 1e3:.0f} ms gap ({cpu * 1e3:.0f} ms CPU), {total:.2f} s; "
              f"collections on the GUI thread: young {young * 1e3:.0f} ms, full "
              f"{full * 1e3:.0f} ms; status: {window.statusBar().currentMessage()!r}",
              file=sys.stderr, flush=True)
    window.files.discard_unsaved()
    window.close()
    return results


def _app_collector(app):
    """The collector app/gui.py makes (pyqtgraph's, on a commit before app/collector.py, so
    that the bench measures older commits as they ran)."""
    try:
        from hexscope.app.collector import GuiCollector
    except ImportError:
        from pyqtgraph.util.garbage_collector import GarbageCollector

        return GarbageCollector(interval=1.0)
    collector = GuiCollector(app)
    collector.freeze_soon()
    return collector


def _app_switch_interval() -> None:
    """The GIL switch interval app/gui.py sets (none on older commits); the environment's
    UI_LATENCY_SWITCH_S, if set, instead (to compare intervals)."""
    if os.environ.get("UI_LATENCY_SWITCH_S"):
        sys.setswitchinterval(float(os.environ["UI_LATENCY_SWITCH_S"]))
        return
    try:
        from hexscope.app.gil import favour_the_gui_thread
    except ImportError:
        return
    favour_the_gui_thread()


def _steps(window, path: Path, c_path: Path, tmp: Path):
    """(name, start, done) of each action, in the order a user might take them."""
    c = window.controller

    def idle() -> bool:
        return not c.busy

    def opened(old: object) -> Callable[[], bool]:
        return lambda: (window.graph is not old and bool(window.scene.items_by_id)
                        and not getattr(window.files, "loading", False))

    old = window.graph
    yield "open", lambda: window.files.open_graph(str(path)), opened(old)
    yield "first run", window.debug.actions["run"].trigger, idle
    filt = next(node for node in window.graph if node.is_const and node.const is not None
                and node.const.shape[-1] > 1 and len(node.const.shape) == 4)

    conv = next(dst for dst, _, _ in window.graph.consumers(filt.node_id))

    def edit_and_run() -> None:
        window.select_node(conv)         # the user selects the node to edit its filter
        array = filt.const.array.copy()
        array.flat[0] = 3
        window.edits.set_const(filt.node_id, array)
        window.debug.actions["run"].trigger()

    yield "F5 after a const edit", edit_and_run, idle

    def restart_and_step() -> None:
        window.debug.actions["restart"].trigger()
        window.debug.actions["step"].trigger()

    yield "step", restart_and_step, idle
    yield "undo", window.edits.undo.trigger, lambda: True
    # as the palette's double click and the Delete key do (the new node is selected)
    yield "add from palette", lambda: window.palette.op_activated.emit("Nop"), lambda: True
    yield "delete", window.edits.delete.trigger, lambda: True
    yield "undo delete", window.edits.undo.trigger, lambda: True
    yield "consts as nodes on", window.show_consts.trigger, lambda: True
    yield "consts as nodes off", window.show_consts.trigger, lambda: True
    yield "save", lambda: window.files.save_graph_as(str(tmp / "saved.hexgraph")), \
        lambda: True
    old = window.graph
    yield "import C", lambda: window.files.open_graph(str(c_path), c_only=True), opened(old)


class GapMeter:
    """The longest time between two ticks of a timer on the GUI thread; with ``sample``, a
    thread also records the GUI thread's stack every 2 ms while it has not ticked for
    10 ms (what blocks it), printed per action."""

    def __init__(self, app, sample: bool = False, profile: bool = True) -> None:
        from PySide6.QtCore import QTimer

        self.app = app
        self.last = time.perf_counter()
        self.worst = 0.0
        self.last_cpu = time.thread_time()
        self.worst_cpu = 0.0
        self.timer = QTimer(interval=TICK_MS)
        self.timer.timeout.connect(self._tick)
        self.timer.start()
        self.blocked: collections.Counter[str] = collections.Counter()   # seconds by stack
        # (stack, seconds) sampled in the gap going on, and in the action's longest gap
        self._gap_stacks: list[tuple[str, float]] = []
        self.worst_stacks: list[tuple[str, float]] = []
        self.sample = sample
        self.profile = profile
        self._profiling = False
        self._profile: cProfile.Profile | None = None
        self.worst_profile: cProfile.Profile | None = None
        if sample:
            gui = threading.get_ident()
            threading.Thread(target=self._sample, args=(gui,), daemon=True).start()

    def _sample(self, gui: int) -> None:
        # the sampler gets the GIL within ~1 ms (the app's own interval if shorter)
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.001))
        taken = time.perf_counter()
        while True:
            time.sleep(SAMPLE_S)
            now = time.perf_counter()
            weight, taken = now - taken, now
            if now - self.last > GAP_SAMPLED_S:
                frame = sys._current_frames().get(gui)
                stack = traceback.extract_stack(frame)[-16:] if frame else []
                where = [f"{Path(f.filename).stem}:{f.name}:{f.lineno}"
                         for f in reversed(stack)]
                self.blocked[" < ".join(where[:6])] += weight
                self._gap_stacks.append((" < ".join(where[:9]), weight))

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if self._profile is not None:
            self._profile.disable()
        if now - self.last > self.worst:
            self.worst_stacks = self._gap_stacks
            self.worst_profile = self._profile
        if self._profiling:          # a fresh profile per gap: the longest one is kept
            self._profile = cProfile.Profile()
            self._profile.enable()
        self._gap_stacks = []
        self.worst = max(self.worst, now - self.last)
        self.worst_cpu = max(self.worst_cpu, cpu - self.last_cpu)
        self.last, self.last_cpu = now, cpu

    def settle(self, seconds: float, until: Callable[[], bool] = lambda: True) -> None:
        from PySide6.QtCore import QEventLoop

        end = time.perf_counter() + seconds
        while time.perf_counter() < end or not until():
            self.app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)

    def action(self, start: Callable[[], object], done: Callable[[], bool]
               ) -> tuple[float, float, float]:
        """(longest gap, time until done, the GUI thread's longest CPU time between two
        ticks) of ``start`` run from the event loop."""
        from PySide6.QtCore import QTimer

        began: list[float] = []

        def run() -> None:
            began.append(time.perf_counter())
            start()

        self.worst_profile = None
        self._profiling = self.sample and self.profile
        self.last, self.worst = time.perf_counter(), 0.0
        self.last_cpu, self.worst_cpu = time.thread_time(), 0.0
        QTimer.singleShot(0, run)
        self.settle(0.0, lambda: bool(began) and done())
        total = time.perf_counter() - began[0]
        self.settle(SETTLE_S)
        self._profiling = False
        if self._profile is not None:
            self._profile.disable()
            self._profile = None
        return max(self.worst - TICK_MS / 1e3, 0.0), total, self.worst_cpu


def _print_top(path: Path, rows: int = 25) -> None:
    import io
    import pstats

    out = io.StringIO()
    pstats.Stats(str(path), stream=out).sort_stats("cumulative").print_stats(rows)
    print(out.getvalue().split("\n\n", 2)[-1], file=sys.stderr)


class CollectionMeter:
    """How long the cyclic collector's passes on the GUI thread take (gc.callbacks)."""

    def __init__(self) -> None:
        self.gui = threading.get_ident()
        self.passes: list[tuple[int, float]] = []      # (generation, seconds)
        self._began = 0.0
        self._walked = 0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if threading.get_ident() != self.gui:
            return
        if phase == "start":
            # gc.get_count(), not a count of gc.get_objects(): that list of every young
            # object was made inside the gap measured (100-250 ms of it at 20,000 nodes)
            self._walked = sum(gc.get_count()[:info["generation"] + 1])
            self._began = time.perf_counter()
        else:
            seconds = time.perf_counter() - self._began
            self.passes.append((info["generation"], seconds))
            if seconds > 0.02:
                print(f"    a generation {info['generation']} pass ({self._walked:,} new "
                      f"objects counted) took {seconds * 1e3:.0f} ms", file=sys.stderr)

    def clear(self) -> None:
        self.passes = []

    def longest(self) -> tuple[float, float]:
        """The longest young (generation 0 or 1) and full pass since :meth:`clear`."""
        young = [s for g, s in self.passes if g < 2]
        full = [s for g, s in self.passes if g == 2]
        return max(young, default=0.0), max(full, default=0.0)


def _warm_kernels(graph) -> None:
    """Compile (or load) the engine's kernels once, outside any measured action."""
    sys.path.insert(0, str(ROOT / "tests"))
    from hexscope.engine.session import Session
    from support.large_graph import input_tensor, residual_graph

    session = Session(residual_graph(60))
    try:
        session.execute([input_tensor()])
    finally:
        session.close()
    del graph


def _start_and_quit() -> float:
    """Seconds from starting ``hexscope gui`` to its exit, with the window shown."""
    env = {**os.environ, "HEXSCOPE_QUIT_AFTER_START": "1",
           "HOME": tempfile.mkdtemp(prefix="hexscope-start-")}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hexscope.app", "gui"], env=env,
                   capture_output=True, check=True)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
