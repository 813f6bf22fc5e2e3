"""Delegate-shaped graphs of Supernode_8x8p32to8 with QuantizedAdd_8p8to8 and
Requantize_8to8 between them, which prepare turns into d32 forms."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph
from hexscope.engine.nodes import OutputDef

SN = "Supernode_8x8p32to8"
SHAPE = (1, 5, 5, 40)


def append_consts(g: Graph) -> None:
    """The ranges, filter, stride and bias the chains' nodes share."""
    for nid, v in ((0x11, -1.0), (0x12, 1.0), (0x13, -2.0), (0x14, 2.0), (0x18, -6.0),
                   (0x19, 6.0), (0x1C, -4.0), (0x1D, 4.0 * 127 / 128), (0x1E, -np.inf),
                   (0x1F, np.inf)):
        g.append_const_node(nid, np.array([v], np.float32))
    rng = np.random.default_rng(3)
    g.append_const_node(0x15, rng.integers(0, 256, (3, 3, 40, 40), dtype=np.uint8))
    g.append_const_node(0x16, shape=(1, 1, 1, 1))
    g.append_const_node(0x17, np.arange(40, dtype=np.int32).reshape(1, 1, 1, 40) * 50)


def append_supernode(g: Graph, nid: int, src: int) -> None:
    """A delegate CONV_2D: its input range is its producer's range outputs (or the graph's)."""
    lo, hi = ((src, 1), (src, 2)) if src != 0x10 else ((0x11, 0), (0x12, 0))
    g.append_node(nid, SN, inputs=[(src, 0), (0x15, 0), lo, hi, (0x13, 0), (0x14, 0),
                                   (0x16, 0), (0x17, 0), (0x13, 0), (0x14, 0), (0x18, 0),
                                   (0x19, 0)],
                  padding="SAME", outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])


def append_requantize(g: Graph, nid: int, src: int) -> None:
    """The delegate's QUANTIZE: to the range [-4, 4 * 127/128] (R1-exact)."""
    lo, hi = ((src, 1), (src, 2)) if src != 0x10 else ((0x11, 0), (0x12, 0))
    g.append_node(nid, "Requantize_8to8",
                  inputs=[(src, 0), lo, hi, (0x1C, 0), (0x1D, 0)],
                  outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])


def chain() -> Graph:
    """INPUT → Supernode 0x40 → Requantize_8to8 0x60 → Supernode 0x41 → OUTPUT."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(SHAPE, 1)])
    append_consts(g)
    append_supernode(g, 0x40, 0x10)
    append_requantize(g, 0x60, 0x40)
    append_supernode(g, 0x41, 0x60)
    g.append_node(0x50, "OUTPUT", inputs=[(0x41, 0)])
    return g


def residual() -> Graph:
    """INPUT → Supernodes 0x40, 0x41 → Add 0x70 → Requantize_8to8 0x60 → Supernode 0x42."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(SHAPE, 1)])
    append_consts(g)
    append_supernode(g, 0x40, 0x10)
    append_supernode(g, 0x41, 0x40)
    g.append_node(0x70, "QuantizedAdd_8p8to8",
                  inputs=[(0x40, 0), (0x41, 0), (0x40, 1), (0x40, 2), (0x41, 1), (0x41, 2),
                          (0x1E, 0), (0x1F, 0)],
                  outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])
    append_requantize(g, 0x60, 0x70)
    append_supernode(g, 0x42, 0x60)
    g.append_node(0x50, "OUTPUT", inputs=[(0x42, 0)])
    return g
