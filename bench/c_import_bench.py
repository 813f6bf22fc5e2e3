"""Import speed of a large hexagon_nn graph-init C file (issue 6: tens of MB of weights
must import in seconds).

Generates, in a temporary folder, a graph-init file of about 50 MB (quint8 weights, float32
and int32 arrays, written by Hexscope's exporter in hexagon_nn's own layout), then times
``import_c`` on it and checks the bytes came back. Run:

    .venv/bin/python bench/c_import_bench.py [--mb 50]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from hexscope.engine.graph import Graph
from hexscope.engine.io.c_export import export_c
from hexscope.engine.io.c_import import import_c
from hexscope.engine.nodes import OutputDef


def make_graph(megabytes: float, rng: np.random.Generator) -> Graph:
    # Text per value: quint8 ~3.7 chars, float32 (exact double decimal) ~20, int32 ~11.
    n_u8 = int(megabytes * 0.6e6 / 3.7)
    n_f32 = int(megabytes * 0.3e6 / 20)
    n_i32 = int(megabytes * 0.1e6 / 11)
    g = Graph()
    g.append_node(0x1000, "INPUT", outputs=[OutputDef((1, 8, 8, 3), 4)])
    g.append_const_node(0x1001, rng.integers(0, 256, (1, 1, 1, n_u8), dtype=np.uint8),
                        label="weights")
    g.append_const_node(0x1002, rng.standard_normal((1, 1, 1, n_f32)).astype(np.float32))
    g.append_const_node(0x1003, rng.integers(-2**31, 2**31, (1, 1, 1, n_i32), dtype=np.int32))
    g.append_node(0x1004, "Nop", inputs=[(0x1000, 0)], outputs=[OutputDef((1, 8, 8, 3), 4)])
    g.append_node(0x1005, "OUTPUT", inputs=[(0x1004, 0)])
    return g


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="target file size in MB")
    args = parser.parse_args()
    graph = make_graph(args.mb, np.random.default_rng(0))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big_graphinit.c"
        start = time.perf_counter()
        export_c(graph, path)
        export_s = time.perf_counter() - start
        size_mb = path.stat().st_size / 1e6
        start = time.perf_counter()
        back = import_c(path)
        import_s = time.perf_counter() - start
    for node in graph:
        if node.const is not None:
            assert node.const.same_as(back.node(node.node_id).const), hex(node.node_id)
    values = sum(n.const.elements for n in graph if n.const is not None)
    print(f"file: {size_mb:.1f} MB, {values:,} const values")
    print(f"export: {export_s:.2f} s")
    print(f"import: {import_s:.2f} s ({size_mb / import_s:.0f} MB/s), bytes identical")


if __name__ == "__main__":
    main()
