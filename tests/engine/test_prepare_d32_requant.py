"""Prepare's d32 conversion of QuantizedAdd_8p8to8 and Requantize_8to8 (nnlib prepare.c
``depth32_replacement_op``, :1708-1740 and :1789-1796) on delegate-shaped graphs: between
d32 Supernodes they run in d32, with no Convert_from_d32 / Convert_to_d32 pair between."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare

SN = "Supernode_8x8p32to8"
SHAPE = (1, 5, 5, 40)


def _consts(g: Graph) -> None:
    for nid, v in ((0x11, -1.0), (0x12, 1.0), (0x13, -2.0), (0x14, 2.0), (0x18, -6.0),
                   (0x19, 6.0), (0x1C, -4.0), (0x1D, 4.0 * 127 / 128), (0x1E, -np.inf),
                   (0x1F, np.inf)):
        g.append_const_node(nid, np.array([v], np.float32))
    rng = np.random.default_rng(3)
    g.append_const_node(0x15, rng.integers(0, 256, (3, 3, 40, 40), dtype=np.uint8))
    g.append_const_node(0x16, shape=(1, 1, 1, 1))
    g.append_const_node(0x17, np.arange(40, dtype=np.int32).reshape(1, 1, 1, 40) * 50)


def _sn(g: Graph, nid: int, src: int) -> None:
    """A delegate CONV_2D: its input range is its producer's range outputs (or the graph's)."""
    lo, hi = ((src, 1), (src, 2)) if src != 0x10 else ((0x11, 0), (0x12, 0))
    g.append_node(nid, SN, inputs=[(src, 0), (0x15, 0), lo, hi, (0x13, 0), (0x14, 0),
                                   (0x16, 0), (0x17, 0), (0x13, 0), (0x14, 0), (0x18, 0),
                                   (0x19, 0)],
                  padding="SAME", outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])


def _requant(g: Graph, nid: int, src: int) -> None:
    """The delegate's QUANTIZE: to the range [-4, 4 * 127/128] (R1-exact)."""
    lo, hi = ((src, 1), (src, 2)) if src != 0x10 else ((0x11, 0), (0x12, 0))
    g.append_node(nid, "Requantize_8to8",
                  inputs=[(src, 0), lo, hi, (0x1C, 0), (0x1D, 0)],
                  outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])


def chain() -> Graph:
    """INPUT → Supernode 0x40 → Requantize_8to8 0x60 → Supernode 0x41 → OUTPUT."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(SHAPE, 1)])
    _consts(g)
    _sn(g, 0x40, 0x10)
    _requant(g, 0x60, 0x40)
    _sn(g, 0x41, 0x60)
    g.append_node(0x50, "OUTPUT", inputs=[(0x41, 0)])
    return g


def residual() -> Graph:
    """INPUT → Supernodes 0x40, 0x41 → Add 0x70 → Requantize_8to8 0x60 → Supernode 0x42."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(SHAPE, 1)])
    _consts(g)
    _sn(g, 0x40, 0x10)
    _sn(g, 0x41, 0x40)
    g.append_node(0x70, "QuantizedAdd_8p8to8",
                  inputs=[(0x40, 0), (0x41, 0), (0x40, 1), (0x40, 2), (0x41, 1), (0x41, 2),
                          (0x1E, 0), (0x1F, 0)],
                  outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])
    _requant(g, 0x60, 0x70)
    _sn(g, 0x42, 0x60)
    g.append_node(0x50, "OUTPUT", inputs=[(0x42, 0)])
    return g


def _ops(p) -> list[str]:
    return [p.nodes[i].op for i in p.plan]


def _x() -> np.ndarray:
    return (np.arange(int(np.prod(SHAPE))) * 37 % 256).astype(np.uint8).reshape(SHAPE)


def test_a_requantize_between_supernodes_runs_in_d32_with_no_conversions_between():
    p = prepare(chain())
    # before: Supernode_d32 → Convert_from_d32 → Requantize_8to8 → Convert_to_d32 → Supernode
    assert _ops(p) == ["INPUT", "Convert_to_d32", "Supernode_8x8p32to8_d32",
                       "Requantize_8to8_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32",
                       "OUTPUT"]
    assert p.nodes[0x60].inputs[0] == (0x40, 0) and p.nodes[0x41].inputs[0] == (0x60, 0)
    assert p.nodes[0x41].inputs[2:4] == ((0x60, 1), (0x60, 2))     # its range as authored
    why = p.rewrite_of(0x60).reason
    assert "becomes Requantize_8to8_d32" in why and "the d32 output of 0x40" in why
    assert "to 0x41 directly" in why


def test_an_add_of_two_supernodes_and_its_requantize_run_in_d32():
    p = prepare(residual())
    assert _ops(p) == ["INPUT", "Convert_to_d32", "Supernode_8x8p32to8_d32",
                       "Supernode_8x8p32to8_d32", "QuantizedAdd_8p8to8_d32",
                       "Requantize_8to8_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32",
                       "OUTPUT"]
    assert p.nodes[0x70].inputs[:2] == ((0x40, 0), (0x41, 0))
    assert p.nodes[0x60].inputs[0] == (0x70, 0) and p.nodes[0x42].inputs[0] == (0x60, 0)
    assert not [n for n in p.nodes.values() if n.op == "Convert_to_d32"
                and p.nodes[n.inputs[0][0]].op == "Convert_from_d32"]
    # the Supernode's rewrite says it now reads the requantize's d32 output itself
    assert "then its input is the d32 output of 0x60 itself" in p.rewrite_of(0x42).reason


@pytest.mark.parametrize("build", [chain, residual])
def test_the_rewritten_graphs_run_as_the_flat_forms_do(build):
    """Requantize_8to8_d32's codes are the flat op's (a gain >= 0); the Supernode after it
    reads the requantized padding where it read the converter's, within a code."""
    (d32,) = Session(build()).execute([_x()])
    assert d32.shape == SHAPE
    assert np.abs(d32.array.astype(int) - _reference_run(build).astype(int)).max() <= 1


def _reference_run(build) -> np.ndarray:
    """The same graph with the two conversions left out (the previous prepare)."""
    from hexscope.engine.prepare import d32_forms
    saved = dict(d32_forms.SIMULATED)
    for name in ("QuantizedAdd_8p8to8", "Requantize_8to8"):
        del d32_forms.SIMULATED[name]
    try:
        (y,) = Session(build()).execute([_x()])
    finally:
        d32_forms.SIMULATED.clear()
        d32_forms.SIMULATED.update(saved)
    return y.array


def test_flat_inputs_of_equal_dims_stay_flat_and_different_dims_convert():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef(SHAPE, 1), OutputDef((1, 1, 1, 40), 1)])
    _consts(g)
    g.append_node(0x70, "QuantizedAdd_8p8to8",
                  inputs=[(0x10, 0), (0x10, 0), (0x11, 0), (0x12, 0), (0x11, 0), (0x12, 0)],
                  outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])
    g.append_node(0x71, "QuantizedAdd_8p8to8",
                  inputs=[(0x10, 0), (0x10, 1), (0x11, 0), (0x12, 0), (0x11, 0), (0x12, 0)],
                  outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])
    _requant(g, 0x60, 0x10)
    for k, src in enumerate((0x70, 0x71, 0x60)):
        g.append_node(0x50 + k, "OUTPUT", inputs=[(src, 0)])
    p = prepare(g)
    # equal dims, no d32 input: -1 (stays flat); a Requantize_8to8 of flat data stays flat
    assert p.nodes[0x70].op == "QuantizedAdd_8p8to8" and p.nodes[0x60].op == "Requantize_8to8"
    # check_dims_equal fails: converted, and the d32 add broadcasts the 1x1x1x40 input
    assert p.nodes[0x71].op == "QuantizedAdd_8p8to8_d32"
    x = _x()
    b = (np.arange(40) * 6).astype(np.uint8).reshape(1, 1, 1, 40)
    s = Session(g)
    flat, bcast, _ = s.execute([x, b])
    lo = float(s.output(0x71, 1).array.reshape(-1)[0])
    hi = float(s.output(0x71, 2).array.reshape(-1)[0])
    real = (x.astype(np.float64) + np.broadcast_to(b, SHAPE)) * 2 / 255 - 2   # both [-1, 1]
    got = lo + bcast.array.astype(np.float64) * (hi - lo) / 255
    assert np.abs(got - real).max() <= (hi - lo) / 255
    assert flat.shape == SHAPE
