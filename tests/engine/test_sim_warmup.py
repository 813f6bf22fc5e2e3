"""The GEMM kernel compiles when a graph with a convolution is prepared, not inside the first
convolution's timed run (the Timing table showed the compile as that node's time)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from hexscope.engine.ops.kernels import igemm
from hexscope.engine.prepare import prepare
from support.supernode_graphs import chain_graph

SCRIPT = textwrap.dedent("""
    import numpy as np
    from hexscope.engine import Graph, Session
    from hexscope.engine.ops.kernels import igemm
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    if len(__import__("sys").argv) > 2:
        g = Graph.load(__import__("sys").argv[2])
    elif "conv" in __import__("sys").argv:
        for i, v in ((0x11, 0.0), (0x12, 1.0)):
            g.append_const_node(i, np.array([v], np.float32))
        g.append_const_node(0x13, np.ones((1, 1, 4, 4), np.uint8))
        g.append_const_node(0x14, shape=(1, 1, 1, 1))
        g.append_node(0x20, "QuantizedConv2d_8x8to32",
                      inputs=[(0x10, 0), (0x13, 0), (0x11, 0), (0x12, 0), (0x11, 0), (0x12, 0),
                              (0x14, 0)], outputs=3, padding="SAME")
    else:
        g.append_node(0x20, "Nop", inputs=[(0x10, 0)], outputs=1)
    if len(__import__("sys").argv) <= 2:
        g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    s = Session(g)
    from hexscope.engine.ops.kernels import compiled
    print("compiled at prepare:", bool(igemm._COMPILED))
    print("numba kernels at prepare:", bool(compiled._KERNELS))
""")


@pytest.mark.skipif(not igemm.available(), reason="the integer GEMM kernel does not run here")
@pytest.mark.parametrize("kind, compiled", [("conv", True), ("nop", False)])
def test_the_kernel_compiles_at_prepare_only_for_graphs_that_use_it(kind, compiled):
    out = subprocess.run([sys.executable, "-c", SCRIPT, kind], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"compiled at prepare: {compiled}" in out.stdout
    assert "numba kernels at prepare: False" in out.stdout      # no op here needs them


@pytest.mark.skipif(not igemm.available(), reason="the integer GEMM kernel does not run here")
def test_the_kernel_compiles_at_prepare_for_a_graph_whose_convolution_becomes_a_supernode(
        tmp_path):
    """The Supernode's kernel computes its sums with the convolution's GEMM: its first run
    took 0.4 s of compile on graphinit_med-style files before prepare knew it."""
    graph = chain_graph()
    # (then prepare's d32 form of it: the input Supernode)
    assert "InputSupernode_8x8p8to8_outd32" in {n.op for n in prepare(graph).nodes.values()}
    path = tmp_path / "chain.hexgraph"
    graph.save(path)
    out = subprocess.run([sys.executable, "-c", SCRIPT, "file", str(path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "compiled at prepare: True" in out.stdout
    # its output step is a numba kernel (engine/ops/kernels/compiled.py), loaded at prepare too
    assert "numba kernels at prepare: True" in out.stdout
