"""Sensitivity: a node given a deliberately bad range comes first (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.errors import InputError
from hexscope.engine.ranges import Method, calibrate
from hexscope.engine.ranges.apply import apply_ranges
from hexscope.engine.ranges.sensitivity import sensitivity
from support.range_graphs import REQUANT, data_set, four_patterns

SETS = data_set(3)


def _mis_ranged(node_id: int = REQUANT, factor: float = 40.0):
    """The four-pattern graph with calibrated ranges, one of them ``factor`` times too wide
    (40x: the data use about 6 of the 256 codes)."""
    g = four_patterns()
    apply_ranges(g, calibrate(g, SETS, Method.parse("minmax")).ranges)
    for port in (3, 4):
        src = g.node(node_id).inputs[port][0]
        g.set_const(src, g.node(src).const.array * np.float32(factor))
    return g


def test_sensitivity_puts_the_mis_ranged_node_first():
    ranking = sensitivity(_mis_ranged(), [s.tensors for s in SETS])
    first = ranking.nodes[0]
    assert first.node_id == REQUANT and first.rank == 1
    assert first.drop > 0.5 * ranking.baseline          # most of the error is its own
    assert all(n.drop < first.drop for n in ranking.nodes[1:])
    assert [n.rank for n in ranking.nodes] == list(range(1, len(ranking.nodes) + 1))


def test_well_ranged_graph_has_no_such_outlier():
    ranking = sensitivity(_mis_ranged(factor=1.0), [s.tensors for s in SETS])
    bad = sensitivity(_mis_ranged(), [s.tensors for s in SETS])
    assert ranking.baseline < 0.5 * bad.baseline


def test_sensitivity_report_lists_every_ranked_node():
    ranking = sensitivity(four_patterns(), [s.tensors for s in SETS])
    doc = ranking.report("g.hexgraph")
    assert doc["format"] == "hexscope-sensitivity" and doc["runs"] == 3
    assert [n["node"] for n in doc["nodes"]] == [f"0x{n.node_id:x}" for n in ranking.nodes]
    assert doc["nodes"][0]["share"] == pytest.approx(ranking.nodes[0].drop / ranking.baseline)


def test_sensitivity_needs_input_sets():
    with pytest.raises(InputError, match="at least one input set"):
        sensitivity(four_patterns(), [])


def test_an_output_of_codes_and_range_is_compared_in_real_units():
    # OUTPUT reads the Supernode's codes, min and max (as the InceptionV3-shaped graph's
    # does): the range words are not outputs to compare, and codes are read as reals
    g = four_patterns()
    g.remove_node(0x60)
    g.remove_node(0x50)
    g.append_node(0x61, "OUTPUT", inputs=[(0x40, 0), (0x40, 1), (0x40, 2)])
    codes = sensitivity(g, [s.tensors for s in SETS])
    reals = sensitivity(four_patterns(), [s.tensors for s in SETS])
    # (Dequantize rounds its products half up: within a few per cent of the error)
    assert codes.quantized == pytest.approx(reals.quantized, rel=0.05)
    assert [n.node_id for n in codes.nodes] == [n.node_id for n in reals.nodes]
