"""What the float-reference analyses keep between calls, and that it never goes stale."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.analysis.compare import compare_reference
from hexscope.engine.analysis.float_run import float_values
from hexscope.engine.analysis.metrics import error_metrics
from hexscope.engine.analysis.reuse import cache_for, forget, same_inputs
from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.reference import dequantized_once, real
from hexscope.engine.tensor import Tensor
from support.compare_graphs import chain, chain_input


def _u8(codes: np.ndarray) -> Tensor:
    return Tensor.from_array(codes, DType.QUINT8)


def _range(lo: float, hi: float) -> tuple[Tensor, Tensor]:
    return Tensor.scalar(lo), Tensor.scalar(hi)


def _metrics(comparison) -> list[tuple]:
    return [(d.node_id, d.index, d.metrics) for d in comparison.outputs]


def test_real_is_shared_and_read_only_under_dequantized_once(rng):
    t = _u8(rng.integers(0, 256, (1, 3, 3, 4), dtype=np.uint8)).readonly()
    mn, mx = _range(-1.5, 2.0)
    plain = real(t, mn, mx)
    assert real(t, mn, mx) is not plain and plain.flags.writeable
    with dequantized_once({}) as memo:
        first = real(t, mn, mx)
        assert real(t, mn, mx) is first and not first.flags.writeable
        assert real(t, *_range(-1.0, 2.0)) is not first      # another range: another read
        assert real(t, mn, mx, np.float64) is not first      # another precision too
    assert np.array_equal(first, plain) and len(memo) == 3
    assert real(t, mn, mx) is not first                      # the memo ended with the block


def test_real_does_not_share_a_tensor_that_can_still_change(rng):
    t = _u8(rng.integers(0, 256, (1, 2, 2, 4), dtype=np.uint8))    # writable buffer
    mn, mx = _range(0.0, 1.0)
    with dequantized_once({}) as memo:
        assert real(t, mn, mx) is not real(t, mn, mx)
    assert not memo


def test_the_float_run_is_reused_for_the_same_inputs_only():
    session = Session(chain())
    x = chain_input()
    session.execute([x])
    vals, _ = float_values(session)
    assert all(not v.flags.writeable for v in vals.values() if isinstance(v, np.ndarray))
    session.execute([x.copy()])                  # the same data in new tensors
    assert float_values(session)[0] is vals
    session.execute([chain_input(seed=5)])
    other, _ = float_values(session)
    assert other is not vals
    kept = _metrics(compare_reference(session, "accumulated"))
    forget(session.prepared)
    assert _metrics(compare_reference(session, "accumulated")) == kept


def test_an_edit_that_changes_the_run_makes_a_new_float_run():
    g = chain()
    session = Session(g)
    x = chain_input()
    session.execute([x])
    before = float_values(session)[0]
    g.set_const(0x106, None, shape=(1, 1, 1, 1))   # a 1x1 pool window: a new float run
    session.execute([x])
    after = compare_reference(session, "accumulated")
    assert float_values(session)[0] is not before
    fresh_session = Session(g)
    fresh_session.execute([x])
    assert _metrics(after) == _metrics(compare_reference(fresh_session, "accumulated"))
    (pool,) = [d for d in after.outputs if d.node_id == 0x107]
    assert pool.shape == (1, 4, 4, 8)


def _conv_graph(rng) -> Graph:
    g = Graph()
    word = OutputDef((1, 1, 1, 1), 4)
    g.append_node(0x1, "INPUT", outputs=[OutputDef((1, 5, 5, 3), 1)])
    g.append_const_node(0x10, rng.integers(0, 256, (3, 3, 3, 4), dtype=np.uint8))
    g.replace_node(g.node(0x10).with_(const=_u8(
        rng.integers(0, 256, (3, 3, 3, 4), dtype=np.uint8)).readonly()))
    for i, v in enumerate((-1.0, 1.0, -0.5, 0.7)):
        g.append_const_node(0x12 + i, np.array([v], np.float32))
    g.append_const_node(0x16, shape=(1, 1, 1, 1))
    g.append_node(0x20, "QuantizedConv2d_8x8to32",
                  inputs=[(0x1, 0), (0x10, 0), (0x12, 0), (0x13, 0), (0x14, 0), (0x15, 0),
                          (0x16, 0)], outputs=[OutputDef((1, 5, 5, 4), 4), word, word],
                  padding="SAME")
    g.append_node(0x21, "OUTPUT", inputs=[(0x20, 0)])
    return g


@pytest.mark.parametrize("mode", ["isolated", "accumulated"])
def test_only_the_consts_read_as_reals_are_kept_between_analyses(rng, mode):
    session = Session(_conv_graph(rng))
    session.execute([_u8(rng.integers(0, 256, (1, 5, 5, 3), dtype=np.uint8))])
    forget(session.prepared)
    first = _metrics(compare_reference(session, mode))
    cache = cache_for(session.prepared)
    kept = [t for t, _ in cache.consts.values()]
    assert kept and all(id(t) in cache.const_ids for t in kept)
    filt = session.prepared.nodes[0x10].const
    assert any(t is filt for t in kept)
    assert _metrics(compare_reference(session, mode)) == first


def test_same_inputs_compares_data_not_objects():
    a = Tensor.from_array(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    assert same_inputs((a,), (a.copy(),))
    changed = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    changed[0, 0, 1, 2] = -1
    assert not same_inputs((a,), (Tensor.from_array(changed),))
    assert not same_inputs((a,), (Tensor.from_array(np.arange(6, dtype=np.float32)),))
    assert not same_inputs((a,), ())


@pytest.mark.parametrize("tolerance", [0.0, 0.5, 1.0, 3.0, 50.0])
def test_the_count_beyond_the_tolerance_matches_a_direct_count(rng, tolerance):
    a = rng.normal(size=4000).astype(np.float32)
    b = (a + rng.normal(scale=0.02, size=4000)).astype(np.float32)
    lsb = 0.01
    m = error_metrics(a, b, lsb, tolerance)
    expected = int(np.count_nonzero(np.abs(a - b) > tolerance * lsb))
    assert m.beyond == expected
    assert (expected == 0) == (tolerance == 50.0)
