"""Prepare's fully-connected fusion (nnlib prepare.c try_make_supernode_flavored with
ReplaceMatMult_Supernode and matmult_extrachecks): the TFLite delegate's FULLY_CONNECTED chain
becomes one SuperFC_8x8p32to8."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph, Session
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare

CHAIN = (0x20, 0x21, 0x22)


def fc_graph(k: int = 32, n: int = 32, tail: str = "relu", requant: str = "Requantize_32to8",
             w_range: tuple[float, float] = (-0.5, 1.5)) -> Graph:
    """INPUT 0x10 [1,1,2,k] → MatMul 0x20 → BiasAdd_32p32to32 0x21 → ``requant`` 0x22
    [→ Relu / ReluX 0x23] → OUTPUT 0x30, with Consts as the delegate adds them."""
    rng = np.random.default_rng(3)
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 1, 2, k), 1)])
    g.append_const_node(0x11, np.array([0.0], np.float32))
    g.append_const_node(0x12, np.array([6.0], np.float32))
    g.append_const_node(0x13, np.array([-1.0], np.float32))
    g.append_const_node(0x14, np.array([1.0], np.float32))
    g.append_const_node(0x15, rng.integers(0, 129, (1, 1, k, n), dtype=np.uint8))  # around 64
    g.append_const_node(0x16, rng.integers(-2**20, 2**20, (1, 1, 1, n)).astype(np.int32))
    g.append_const_node(0x17, np.array([-8.0], np.float32))
    g.append_const_node(0x18, np.array([8.0], np.float32))
    g.append_const_node(0x19, np.array([w_range[0]], np.float32))
    g.append_const_node(0x1A, np.array([w_range[1]], np.float32))
    out32 = [OutputDef((1, 1, 2, n), 4), OutputDef(), OutputDef()]
    out8 = [OutputDef((1, 1, 2, n), 1), OutputDef(), OutputDef()]
    g.append_node(0x20, "QuantizedMatMul_8x8to32",
                  inputs=[(0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x19, 0), (0x1A, 0)],
                  outputs=out32)
    g.append_node(0x21, "QuantizedBiasAdd_32p32to32",
                  inputs=[(0x20, 0), (0x16, 0), (0x20, 1), (0x20, 2), (0x13, 0), (0x14, 0)],
                  outputs=out32)
    extra = [(0x17, 0), (0x18, 0)] if requant == "Requantize_32to8" else []
    g.append_node(0x22, requant, inputs=[(0x21, 0), (0x21, 1), (0x21, 2), *extra],
                  outputs=out8)
    last = 0x22
    if tail != "none":
        op = "QuantizedRelu_8" if tail == "relu" else "QuantizedReluX_8"
        g.append_node(0x23, op, inputs=[(0x22, 0), (0x22, 1), (0x22, 2)]
                      + ([(0x12, 0)] if tail == "relux" else []), outputs=out8)
        last = 0x23
    g.append_node(0x30, "OUTPUT", inputs=[(last, 0)])
    return g


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
