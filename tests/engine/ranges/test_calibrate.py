"""Calibration over a data set: the three methods against hand-computed ranges (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.batch.records import InputSet
from hexscope.engine.errors import InputError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.quant import QuantRange
from hexscope.engine.ranges import Method, calibrate
from hexscope.engine.tensor import Tensor
from support.range_graphs import QUANTIZE, data_set, four_patterns


def _identity_graph() -> Graph:
    g = Graph()
    g.append_node(1, "INPUT", outputs=[OutputDef((1, 1, 1, 8), 4)])
    g.append_node(2, "OUTPUT", inputs=[(1, 0)])
    return g


def _sets(rows: list[list[float]]) -> list[InputSet]:
    return [InputSet(f"s{k}", [Tensor.from_array(np.array(r, np.float32).reshape(1, 1, 1, 8))])
            for k, r in enumerate(rows)]


# run k holds -k-1 ... k+1: run minima -1..-4, maxima 1..4
ROWS = [[-(k + 1), 0, 0, 0, 0, 0, 0, k + 1] for k in range(4)]


def test_method_parse_accepts_the_three_methods_and_refuses_the_rest():
    assert str(Method.parse("minmax")) == "minmax"
    assert Method.parse("percentile:99.9") == Method("percentile", 99.9)
    assert Method.parse("per-run-percentile:95").kind == "per-run-percentile"
    for bad in ("max", "percentile", "percentile:40", "percentile:x", "minmax:3"):
        with pytest.raises(InputError, match="method"):
            Method.parse(bad)


def test_calibrate_minmax_is_the_extremes_over_all_runs_with_zero_on_the_grid():
    cal = calibrate(_identity_graph(), _sets(ROWS), Method.parse("minmax"))
    e = cal.ranges.encodings[(1, 0)]
    assert e.observed == (-4.0, 4.0)
    assert e.min <= -4.0 and e.max >= 4.0 and QuantRange(e.min, e.max).zero_exact


def test_calibrate_per_run_percentile_takes_the_percentile_of_each_runs_extremes():
    # TensorFlow's freeze_requantization_ranges: maxima 1,2,3,4 -> 75th percentile 3.25
    cal = calibrate(_identity_graph(), _sets(ROWS), Method.parse("per-run-percentile:75"))
    assert cal.ranges.encodings[(1, 0)].observed == pytest.approx((-3.25, 3.25))


def test_calibrate_percentile_is_within_the_sketchs_accuracy_of_the_exact_order_statistic():
    values = np.arange(1, 801, dtype=np.float32)       # 100 runs of 8 values: 1..800
    rows = values.reshape(100, 8).tolist()
    cal = calibrate(_identity_graph(), _sets(rows), Method.parse("percentile:90"))
    lo, hi = cal.ranges.encodings[(1, 0)].observed
    exact = values[int(np.floor(0.9 * (values.size - 1)))]    # x[floor(q (n - 1))]
    assert hi == pytest.approx(exact, rel=0.011)
    assert lo == pytest.approx(values[int(np.floor(0.1 * (values.size - 1)))], rel=0.011)


def test_calibrate_reads_quantized_outputs_with_each_runs_own_range():
    # the Supernode after the dynamic requantize picks its range per run: the calibrated
    # extremes are the real extremes of the dequantized outputs, run by run
    g, sets = four_patterns(), data_set(3)
    cal = calibrate(g, sets, Method.parse("minmax"))
    s = Session(g)
    lows, highs = [], []
    for input_set in sets:
        s.reset_state()                    # a batch starts each set from prepare's state
        s.execute(input_set.tensors)
        out = s.executor.trace[0x40].outputs
        reals = QuantRange(float(out[1].array.ravel()[0]),
                           float(out[2].array.ravel()[0])).dequantize(out[0].array)
        lows.append(reals.min())
        highs.append(reals.max())
    assert cal.ranges.encodings[(0x40, 0)].observed == pytest.approx((min(lows), max(highs)))
    assert (QUANTIZE, 0) in cal.ranges.encodings and (0x25, 0) in cal.ranges.encodings
    assert cal.ranges.tensors[(0x25, 0)]["op"] == "QuantizedRelu_8"   # the authored node
