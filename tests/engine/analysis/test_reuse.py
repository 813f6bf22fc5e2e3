"""What the float-reference analyses keep between calls (it never goes stale) and what they
skip (it changes no result)."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace

import numpy as np
import pytest

from hexscope.engine import Session
from hexscope.engine.analysis import float_run
from hexscope.engine.analysis.compare import compare_reference, compare_traces, run_trace
from hexscope.engine.analysis.float_run import float_values
from hexscope.engine.analysis.metrics import error_metrics
from hexscope.engine.analysis.reuse import forget, same_inputs
from hexscope.engine.ops.reference import ranged, ranges_unused
from hexscope.engine.tensor import Tensor
from support.compare_graphs import chain, chain_input


def _metrics(comparison) -> list[tuple]:
    return [(d.node_id, d.index, d.metrics) for d in comparison.outputs]


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


def test_a_stepped_run_reuses_the_float_run_and_ends_as_a_fresh_analysis():
    session = Session(chain())
    x = chain_input()
    session.set_inputs([x])
    session.step()
    session.step()
    part = compare_reference(session, "accumulated")
    vals, _ = float_values(session)
    assert {d.node_id for d in part.outputs} == {0x100, 0x101}
    session.run()
    assert float_values(session)[0] is vals       # made once for the whole stepped run
    whole = compare_reference(session, "accumulated")
    fresh_session = Session(chain())
    fresh_session.execute([x])
    assert _metrics(whole) == _metrics(compare_reference(fresh_session, "accumulated"))


def test_same_inputs_compares_data_not_objects():
    a = Tensor.from_array(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    assert same_inputs((a,), (a.copy(),))
    changed = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    changed[0, 0, 1, 2] = -1
    assert not same_inputs((a,), (Tensor.from_array(changed),))
    assert not same_inputs((a,), (Tensor.from_array(np.arange(6, dtype=np.float32)),))
    assert not same_inputs((a,), ())


def test_ranged_leaves_the_range_out_only_when_asked():
    y = np.array([[-2.0, 3.5]], np.float32)
    _, lo, hi = ranged(y)
    assert (lo.item(), hi.item()) == (-2.0, 3.5)
    with ranges_unused():
        out, lo, hi = ranged(y)
    assert out is y and lo is None and hi is None
    assert ranged(y)[1] is not None                  # the flag ends with the block


def _spy_references(monkeypatch) -> list:
    """What every float reference of the analyses returns, in call order."""
    seen: list = []
    original = float_run.call_reference

    def spy(*args):
        result = original(*args)
        seen.append(result)
        return result

    monkeypatch.setattr(float_run, "call_reference", spy)
    return seen


def test_the_isolated_analysis_gives_the_same_results_without_the_ranges(monkeypatch):
    session = Session(chain())
    session.execute([chain_input()])
    skipping = _metrics(compare_reference(session, "isolated"))
    seen = _spy_references(monkeypatch)
    monkeypatch.setattr(float_run, "ranges_unused", nullcontext)
    forget(session.prepared)                         # nothing kept from the first analysis
    assert _metrics(compare_reference(session, "isolated")) == skipping
    # without the flag the references did take their ranges (so the flag saved them)
    assert any(isinstance(r[1], np.ndarray) for r in seen if len(r) == 3)


@pytest.mark.parametrize("mode", ["isolated", "accumulated", "trace"])
def test_the_values_shown_are_made_again_and_are_those_compared(mode):
    session = Session(chain())
    session.execute([chain_input()])
    if mode == "trace":
        pinned = run_trace(session, [chain_input()], "pinned")
        comparison = compare_traces(pinned, run_trace(session, [chain_input(seed=3)]), 0.5)
    else:
        comparison = compare_reference(session, mode, 0.5)
    shown = [d for d in comparison.outputs if d.metrics is not None]
    assert len(shown) >= 4
    for d in shown:
        a, b = d.values()
        assert a.shape == b.shape == d.shape
        # the same numbers the metrics were taken from (a float reference also judges by
        # excess error, which never counts more elements than the plain error does)
        plain = error_metrics(a, b, d.metrics.lsb, 0.5)
        assert replace(d.metrics, excess_lsb=None, by_excess=False,
                       beyond=plain.beyond) == plain
        assert d.metrics.beyond <= plain.beyond
    # nothing kept: each call makes the arrays anew (isolated: its reference too)
    assert shown[-1].values()[1] is not shown[-1].values()[1]


def _counting(monkeypatch) -> list[int]:
    calls: list[int] = []
    original = float_run.call_reference

    def spy(spec, node, *rest):
        calls.append(node.node_id)
        return original(spec, node, *rest)

    monkeypatch.setattr(float_run, "call_reference", spy)
    return calls


def test_a_node_compared_from_the_same_tensors_is_not_compared_again(monkeypatch):
    session = Session(chain())
    x = chain_input()
    session.execute([x])
    first = compare_reference(session, "isolated")
    calls = _counting(monkeypatch)
    again = compare_reference(session, "isolated")
    assert not calls and len(again.outputs) == len(first.outputs)
    assert all(p is q for p, q in zip(again.outputs, first.outputs, strict=True))
    other = compare_reference(session, "isolated", tolerance_lsb=0.25)   # another verdict
    assert calls and all(p is not q for p, q in zip(other.outputs, first.outputs,
                                                    strict=True))
    calls.clear()
    session.execute([x])                                  # a new run: new tensors
    rerun = compare_reference(session, "isolated", tolerance_lsb=0.25)
    assert calls == list(session.plan)
    assert _metrics(rerun) == _metrics(other)


def test_a_step_compares_only_the_node_it_ran(monkeypatch):
    session = Session(chain())
    session.set_inputs([chain_input()])
    for _ in range(3):
        session.step()
    compare_reference(session, "isolated")
    calls = _counting(monkeypatch)
    session.step()
    stepped = compare_reference(session, "isolated")
    assert calls == [session.plan[3]]
    fresh_session = Session(chain())
    fresh_session.set_inputs([chain_input()])
    for _ in range(4):
        fresh_session.step()
    assert _metrics(stepped) == _metrics(compare_reference(fresh_session, "isolated"))


def test_the_accumulated_comparison_of_a_new_run_is_made_again():
    session = Session(chain())
    x = chain_input()
    session.execute([x])
    first = compare_reference(session, "accumulated")
    assert all(p is q for p, q in zip(compare_reference(session, "accumulated").outputs,
                                      first.outputs, strict=True))
    session.execute([x])
    again = compare_reference(session, "accumulated")
    assert all(p is not q for p, q in zip(again.outputs, first.outputs, strict=True))
    assert _metrics(again) == _metrics(first)


def test_the_isolated_analysis_reads_requantize_sums_in_place(monkeypatch):
    # within ranges_unused() a requantize's reference is its input's sums (Reals), read by
    # the comparison's own pass: the same metrics as from the float64 values, and the
    # values shown are still arrays
    from hexscope.engine.ops import reference
    from hexscope.engine.ops.reference import Reals
    from support.large_graph import input_tensor, residual_graph

    session = Session(residual_graph(60))
    session.execute([input_tensor()])
    seen = _spy_references(monkeypatch)
    deferred = compare_reference(session, "isolated")
    assert any(r and isinstance(r[0], Reals) for r in seen)
    monkeypatch.setattr(reference, "real_or_deferred",
                        lambda t, mn, mx: reference.real(t, mn, mx))
    import hexscope.engine.ops.quant.requantize as requantize

    monkeypatch.setattr(requantize, "real_or_deferred",
                        lambda t, mn, mx: reference.real(t, mn, mx))
    seen.clear()
    forget(session.prepared)
    assert _metrics(compare_reference(session, "isolated")) == _metrics(deferred)
    assert not any(r and isinstance(r[0], Reals) for r in seen)
    requantizes = [d for d in deferred.outputs if d.op == "QuantizeDownAndShrinkRange_32to8"]
    assert len(requantizes) >= 4
    for d in requantizes:
        a, b = d.values()
        assert a.dtype == np.float64 and a.shape == b.shape == d.shape
        assert (a[d.metrics.worst_index], b[d.metrics.worst_index]) == (
            d.metrics.worst_a, d.metrics.worst_b)


@pytest.mark.parametrize("y", [np.array([[-2.0, 3.5]], np.float32),
                               np.array([np.nan, -np.inf, 1.5, -0.25], np.float32),
                               np.array([np.nan, np.inf], np.float32),
                               np.zeros((0, 3), np.float64)])
def test_a_deferred_range_is_the_range_ranged_makes(y):
    from hexscope.engine.analysis.float_run import _DeferredWord
    from hexscope.engine.ops.reference import DeferredBound, ranges_deferred

    _, lo, hi = ranged(y.copy())
    with ranges_deferred():
        out, d_lo, d_hi = ranged(y.copy())
    assert isinstance(d_lo, DeferredBound) and d_lo.bounds.words is None   # nothing taken
    assert not out.flags.writeable
    assert d_lo.word().tobytes() == lo.tobytes() and d_hi.word().tobytes() == hi.tobytes()
    t = _DeferredWord.of(d_hi)         # as a consumer sees it
    assert t.shape == (1, 1, 1, 1) and t.has_data
    assert t.array.tobytes() == hi.tobytes() and t.scalar_value() == float(hi.item())


def test_the_float_run_takes_no_range_nobody_reads(monkeypatch):
    # the chain's consumers read their float inputs as they are: every range output of the
    # float run stays untaken, and the comparison is the one made with the ranges taken
    from hexscope.engine.ops.reference import DeferredBound

    session = Session(chain())
    session.execute([chain_input()])
    deferred = compare_reference(session, "accumulated")
    vals, _ = float_values(session)
    bounds = [v for v in vals.values() if isinstance(v, DeferredBound)]
    assert len(bounds) >= 4 and all(b.bounds.words is None for b in bounds)
    monkeypatch.setattr(float_run, "ranges_deferred", nullcontext)
    forget(session.prepared)
    assert _metrics(compare_reference(session, "accumulated")) == _metrics(deferred)
    vals, _ = float_values(session)
    assert not any(isinstance(v, DeferredBound) for v in vals.values())
