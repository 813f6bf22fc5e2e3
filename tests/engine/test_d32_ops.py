"""The d32 forms by name and the conversions prepare puts around them (engine/d32_ops.py)."""

from __future__ import annotations

from hexscope.engine.d32_ops import conversion_owner, flat_form, is_d32_form, logical_source
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.prepare import prepare
from support.supernode_graphs import chain_graph


def test_the_d32_forms_name_the_flat_op_they_stand_for():
    assert flat_form("InputSupernode_8x8p8to8_outd32") == "Supernode_8x8p8to8"
    assert flat_form("InputSupernode_8x8p32to8_outd32") == "Supernode_8x8p32to8"
    assert flat_form("Supernode_8x8p32to8_d32") == "Supernode_8x8p32to8"
    assert flat_form("DepthwiseSupernode_8x8p8to8_d32") == "DepthwiseSupernode_8x8p8to8"
    assert flat_form("QuantizedAdd_8p8to8_d32") == "QuantizedAdd_8p8to8"
    for op in ("Convert_to_d32", "Convert_from_d32", "Supernode_8x8p8to8", "INPUT"):
        assert flat_form(op) == op and not is_d32_form(op)
    # every registered Supernode form maps to a registered flat op
    forms = ("Supernode_8x8p8to8_d32", "Supernode_8x8p32to8_d32",
             "InputSupernode_8x8p8to8_outd32", "InputSupernode_8x8p32to8_outd32",
             "DepthwiseSupernode_8x8p8to8_d32", "DepthwiseSupernode_8x8p32to8_d32")
    assert all(op in REGISTRY and flat_form(op) in REGISTRY for op in forms)


def test_conversions_are_looked_through_to_the_d32_node():
    p = prepare(chain_graph("relu"))
    sn = p.nodes[0x24]
    assert is_d32_form(sn.op)
    (after,) = [i for i in p.plan if p.nodes[i].op == "Convert_from_d32"]
    out = p.nodes[0x30]                                     # the OUTPUT
    assert out.inputs[0] == (after, 0)
    assert logical_source(p.nodes, out.inputs[0]) == (0x24, 0)
    assert logical_source(p.nodes, (0x24, 1)) == (0x24, 1)
    assert conversion_owner(p.nodes, after) == 0x24
    assert conversion_owner(p.nodes, 0x24) == 0x24 and conversion_owner(p.nodes, 0x10) == 0x10


def test_a_convert_to_d32_belongs_to_the_d32_node_reading_it():
    p = prepare(chain_graph("relu", filt=(1, 1, 8, 16)))     # depth 8: the d32-input form
    assert p.nodes[0x24].op == "Supernode_8x8p8to8_d32"
    (before,) = [i for i in p.plan if p.nodes[i].op == "Convert_to_d32"]
    assert p.nodes[0x24].inputs[0] == (before, 0)
    assert conversion_owner(p.nodes, before) == 0x24
    assert logical_source(p.nodes, (before, 0)) == (0x10, 0)
