"""Prepare's fully-connected fusion (nnlib prepare.c try_make_supernode_flavored with
ReplaceMatMult_Supernode and matmult_extrachecks): the TFLite delegate's FULLY_CONNECTED chain
becomes one SuperFC_8x8p32to8."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Session
from hexscope.engine.prepare import prepare
from support.fc_graphs import CHAIN, fc_graph


def test_the_chain_becomes_one_superfc_under_the_relus_id_in_the_matmuls_place():
    p = prepare(fc_graph())
    fc = p.nodes[0x23]
    assert fc.op == "SuperFC_8x8p32to8"
    assert all(i not in p.nodes for i in CHAIN)
    assert fc.inputs[:9] == ((0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x19, 0), (0x1A, 0),
                             (0x16, 0), (0x13, 0), (0x14, 0))
    zero = fc.inputs[9][0]
    assert float(p.nodes[zero].const.array.reshape(-1)[0]) == 0.0 and zero >= 0xFFFFFFF0
    assert fc.inputs[10] == (0x18, 0)            # the Requantize_32to8's requested max
    assert p.plan == (0x10, 0x23, 0x30)
    kinds = {r.node_id: (r.kind, r.into) for r in p.rewrites}
    assert kinds == {0x20: ("fused", 0x23), 0x21: ("fused", 0x23), 0x22: ("fused", 0x23),
                     0x23: ("replaced", None)}
    assert "SuperFC_8x8p32to8" in p.rewrite_of(0x23).reason


def test_output_ranges_from_a_shrinking_requantize_and_a_relux():
    p = prepare(fc_graph(tail="none", requant="QuantizeDownAndShrinkRange_32to8"))
    fc = p.nodes[0x22]
    lo, hi = (float(p.nodes[fc.inputs[k][0]].const.array.reshape(-1)[0]) for k in (9, 10))
    assert (fc.op, lo, hi) == ("SuperFC_8x8p32to8", -np.inf, np.inf)
    fc = prepare(fc_graph(tail="relux")).nodes[0x23]
    assert fc.inputs[10] == (0x12, 0)


def test_depths_the_device_cannot_take_are_not_fused():
    for k, n in ((24, 32), (32, 16), (32, 40)):       # K % 16, N >= 32, N % 16
        p = prepare(fc_graph(k=k, n=n))
        assert p.nodes[0x20].op == "QuantizedMatMul_8x8to32", (k, n)


def test_as_authored_nothing_is_fused():
    p = prepare(fc_graph(), fusions=False)
    assert all(i in p.nodes for i in CHAIN)


def test_superfc_and_matmul_may_disagree_on_the_zero_code():
    # SuperFC (superfc_execute_ref) takes the weights' zero code by rule ZB
    # (get_qu8_level_size_zero), the MatMul by rule ZA (quantize_uint8): on [-1, 1] they are
    # 127 and 128, so the fused graph differs from the chain there, as on the device
    from hexscope.engine.hexmath import level_size_zero, quantize_uint8
    assert level_size_zero(-1.0, 1.0)[0] == 127 and quantize_uint8(0.0, -1.0, 1.0) == 128
    assert level_size_zero(-0.5, 1.5)[0] == quantize_uint8(0.0, -0.5, 1.5) == 64


def _reals(session: Session, node_id: int) -> np.ndarray:
    y, mn, mx = session.result(node_id).outputs
    lo, hi = float(mn.array.reshape(-1)[0]), float(mx.array.reshape(-1)[0])
    return lo + y.array.astype(float) * (hi - lo) / 255


def test_the_fused_run_gives_the_chains_values_within_a_step():
    # the chain requantizes into [-8, 8] and then applies the Relu; SuperFC goes straight to
    # [0, 8]: the same reals within one step of each range (16/255 + 8/255)
    x = np.random.default_rng(5).integers(0, 256, (1, 1, 2, 32), dtype=np.uint8)
    fused, chain = Session(fc_graph()), Session(fc_graph(), fusions=False)
    fused.execute([x])
    chain.execute([x])
    a, b = _reals(fused, 0x23), _reals(chain, 0x23)
    assert a.shape == b.shape == (1, 1, 2, 32)
    assert np.abs(a - b).max() <= 24 / 255 + 1e-6
    assert (a > 0).any() and (a == 0).any()
