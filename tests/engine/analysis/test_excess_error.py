"""Excess error against a float reference (issue 32 item 3; graph spec §4.10, Close_d32).

``e = |t - r| - |roundf(r) - r|``, r the reference in codes (unclamped), t the output code:
how much worse the output is than the ideal rounding. The examples are the spec's.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.app import cli
from hexscope.engine.analysis.metrics import code_metrics, excess_error

EXAMPLES = Path(__file__).parents[3] / "resources" / "examples"


def test_the_spec_s_example_r_13_4():
    # r = 13.4: t = 13 is the ideal rounding (e = 0), t = 14 is 0.2 worse (§4.10)
    worst, beyond = excess_error(np.array([13.4]), np.array([13]), 1.0, 0.0, 0.1)
    assert worst == pytest.approx(0.0, abs=1e-12) and beyond == 0
    worst, beyond = excess_error(np.array([13.4]), np.array([14]), 1.0, 0.0, 0.1)
    assert worst == pytest.approx(0.2) and beyond == 1


def test_roundf_rounds_halves_away_from_zero():
    # r = 2.5: roundf gives 3, so t = 3 is ideal and t = 2 as well (|2 - 2.5| = 0.5 = |3 - 2.5|)
    assert excess_error(np.array([2.5]), np.array([3]), 1.0, 0.0, 0.0)[0] == 0.0
    assert excess_error(np.array([2.5]), np.array([2]), 1.0, 0.0, 0.0)[0] == 0.0
    # a miss by one whole code is an excess of 1, not beyond a tolerance of 1
    assert excess_error(np.array([2.5]), np.array([4]), 1.0, 0.0, 1.0) == (1.0, 0)


def test_the_reference_is_read_in_codes_of_the_output_range_and_not_clamped():
    # range [-1, 1] in 255 steps: 3.0 lies far above the top code 255 (a saturated range)
    step = 2.0 / 255.0
    worst, beyond = excess_error(np.array([3.0]), np.array([255]), step, -1.0, 1.0)
    assert worst == pytest.approx((3.0 + 1.0) / step - 255.0, rel=1e-9) and beyond == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-50, 300, allow_nan=False), min_size=1, max_size=40),
       st.integers(-3, 3))
def test_excess_is_never_larger_than_the_plain_error_nor_below_it_less_half(reals, miss):
    r = np.array(reals)
    t = np.clip(np.copysign(np.floor(np.abs(r) + 0.5), r) + miss, 0, 255)
    worst, _ = excess_error(r, t, 1.0, 0.0, 0.0)
    plain = float(np.max(np.abs(t - r)))
    assert worst <= plain + 1e-9
    assert worst >= plain - 0.5 - 1e-9


def test_code_metrics_judge_by_excess_only_when_asked():
    a = np.array([13.4, 20.45], np.float32)
    codes = np.array([12, 20], np.uint8)           # 13.4 -> 12 misses the ideal 13 by one
    plain = code_metrics(a, codes, 1.0, 0.0, 1.0, 1.0)
    judged = code_metrics(a, codes, 1.0, 0.0, 1.0, 1.0, excess=True)
    assert plain.beyond == 1 and not plain.by_excess
    assert judged.by_excess and judged.beyond == 0
    assert judged.excess_lsb == pytest.approx(1.0)
    assert math.isclose(judged.max_lsb, plain.max_lsb)


@pytest.mark.parametrize("name, verdict", [
    ("classic_quantized", 0), ("d32_pipeline", 0), ("fill_padding_demo", 0),
    ("float_lookup", 0), ("padding_demo", 0), ("saturating_range", 1)])
def test_healthy_examples_pass_the_float_reference_and_the_broken_one_fails(
        name, verdict, capsys):
    # issue 32 items 2 and 3: d32 outputs were all flagged ("the reference has shape
    # (1, 6, 7, 40), the output (1, 6, 7, 40)"), and a healthy Supernode failed at 1.245 LSB
    code = cli.main(["compare", str(EXAMPLES / f"{name}.hexgraph"), "--reference", "float"])
    out = capsys.readouterr().out
    assert code == verdict, out
    assert "the reference has shape" not in out
