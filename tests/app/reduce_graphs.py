"""Graph files for the reduction tests of the app and the command line."""

from __future__ import annotations

from pathlib import Path

from hexscope.engine.plugins import load_plugin, unload_plugin
from support.large_graph import residual_graph

TRAP_PLUGIN = Path(__file__).resolve().parents[1] / "engine" / "reduce" / "trap_plugin.py"


def trapped_file(folder: Path, nodes: int, at: float = 0.8) -> tuple[Path, int]:
    """A residual graph saved in ``folder`` whose relu at fraction ``at`` is TrapRelu_8."""
    specs = load_plugin(TRAP_PLUGIN)
    try:
        graph = residual_graph(nodes)
        relus = [n.node_id for n in graph if n.op == "QuantizedRelu_8"]
        trap = relus[int(len(relus) * at)]
        graph.set_op(trap, "TrapRelu_8")
        path = folder / f"trap{nodes}.hexgraph"
        graph.save(path)
    finally:
        unload_plugin(specs)
    return path, trap
