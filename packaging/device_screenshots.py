"""Screenshot of the cycles overlay (issue 30): resources/screenshots/cycles_overlay.png.

    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/device_screenshots.py

Copies the classic_quantized example to a temporary folder, writes a --perfdump text for its
prepared nodes (made-up cycles: no device is at hand; a Supernode costs most, as on the
device), imports it as Timing ▸ Import device profile… does, runs the graph twice (the first
run compiles kernels) and colours the canvas by device cycles. It also writes the run's trace
(Timing ▸ Export trace…) next to the screenshot as trace.json, for a trace viewer:
resources/screenshots/trace_viewer.png is that file in speedscope (npm's ``speedscope``
package, its dist/release/index.html served over a local http server and opened in Debian's
chromium with ``--use-angle=swiftshader``), chromium's own chrome://tracing being gone.
"""

# ruff: noqa: UP031  (the perfdump lines use graph_perfdump's own printf format)
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from screenshots import OUT, ROOT, settle, shown_window, wait_idle  # noqa: E402

from hexscope.engine import Graph  # noqa: E402
from hexscope.engine.prepare import prepare  # noqa: E402

LINE = "node,0x%x,%s,%s,executions,%d,cycles,%d,%f %%,cum_cycles,%d,%f %%\n"


def perfdump(graph: Graph) -> str:
    prepared = prepare(graph)
    rows = []
    for node_id in prepared.plan:
        op = prepared.nodes[node_id].op
        cycles = (2_400_000 if "Supernode" in op else 380_000 if "Pool" in op
                  else 3_000 if op in ("INPUT", "OUTPUT") else 21_000) + node_id % 7 * 1111
        rows.append((node_id, prepared.nodes[node_id].label or "?", op, cycles))
    rows.sort(key=lambda r: r[3])
    total, cum = sum(r[3] for r in rows), 0
    out = ["Perf dump follows:\n", "Total %d nodes.\n" % len(rows),
           "Total %d cycles.\n" % total]
    for node_id, name, op, cycles in rows:
        cum += cycles
        out.append(LINE % (node_id, name, op, 1, cycles, 100 * cycles / total, cum,
                           100 * cum / total))
    return "".join(out)


def main() -> int:
    folder = Path(tempfile.mkdtemp())
    graph_path = folder / "classic_quantized.hexgraph"
    shutil.copy(ROOT / "resources" / "examples" / "classic_quantized.hexgraph", graph_path)
    (folder / "perf.txt").write_text(perfdump(Graph.load(graph_path)))
    window = shown_window()
    settle()
    if not window.files.open_graph(str(graph_path)):
        print("could not open", graph_path, file=sys.stderr)
        return 1
    settle()
    window.device.import_device_profile(str(folder / "perf.txt"))
    wait_idle(window, "run")
    wait_idle(window, "restart")
    wait_idle(window, "run")
    window.timing_dock.raise_()
    window.canvas.zoom_to_fit()
    settle(800)
    OUT.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(OUT / "cycles_overlay.png"))
    window.device.export_trace(str(folder / "trace.json"))
    print("wrote", OUT / "cycles_overlay.png", "and", folder / "trace.json")
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    window.close()
    window.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
