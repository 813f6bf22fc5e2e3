"""Prepare's d32 conversion of QuantizedAdd_8p8to8 and Requantize_8to8 (nnlib prepare.c
``depth32_replacement_op``, :1708-1740 and :1789-1796) on delegate-shaped graphs: between
d32 Supernodes they run in d32, with no Convert_from_d32 / Convert_to_d32 pair between."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare
from support.delegate_d32_graphs import SHAPE, append_consts, append_requantize, chain, residual


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
    append_consts(g)
    g.append_node(0x70, "QuantizedAdd_8p8to8",
                  inputs=[(0x10, 0), (0x10, 0), (0x11, 0), (0x12, 0), (0x11, 0), (0x12, 0)],
                  outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])
    g.append_node(0x71, "QuantizedAdd_8p8to8",
                  inputs=[(0x10, 0), (0x10, 1), (0x11, 0), (0x12, 0), (0x11, 0), (0x12, 0)],
                  outputs=[OutputDef(SHAPE, 1), OutputDef(), OutputDef()])
    append_requantize(g, 0x60, 0x10)
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
