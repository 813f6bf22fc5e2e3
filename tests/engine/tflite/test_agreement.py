"""The figure per model as a distribution (engine/io/tflite/agreement.py; docs/tflite.md, *How
close is close*): Hexscope against TFLite next to TFLite against itself. Bounds are the
measured values (bench/tflite_agreement.py) with a small margin."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexscope.engine.io.tflite.agreement import Spread, agreement

pytest.importorskip("ai_edge_litert", reason="the 'tflite' extra is not installed")
DATA = Path(__file__).resolve().parents[2] / "data" / "tflite"


def _spreads(name: str) -> dict[str, dict[str, Spread | str]]:
    rows = agreement(DATA / f"{name}.tflite", [np.load(DATA / f"{name}.input.npy")])
    return {r.tensor: r.spreads for r in rows}


def test_a_spread_by_hand():
    # |d|: 70 zeros, 10 ones, 10 twos, 10 threes: the 95th and 99th percentiles are codes
    # (3, not between), the mean (10 + 20 + 30) / 100
    s = Spread.of(np.array([0, 0, 1, -3, 0, 0, 0, 0, 0, 2] * 10))
    assert (s.max, s.p99, s.p95, s.mean) == (3.0, 3.0, 3.0, pytest.approx(0.6))
    assert s.text() == "3 / 3 / 3 / 0.600"
    assert Spread.of(np.array([1, 0, 0, 0] * 25)).p95 == 1.0


def test_a_small_model_is_within_a_code_and_closer_than_tflite_to_itself():
    (s,) = _spreads("concat").values()
    hexscope, moved = s["hexscope"], s["tflite_pm1"]
    assert isinstance(hexscope, Spread) and isinstance(moved, Spread)
    # measured: 1 / 1 / 0 / 0.042, TFLite with its input moved by a code 2 / 1 / 1 / 0.250
    assert hexscope.max <= 1 and hexscope.p95 == 0 and hexscope.mean < 0.06
    assert moved.mean > 3 * hexscope.mean


def test_blazeface_is_within_the_spread_of_tflites_own_implementations():
    s = _spreads("blazeface")
    reg, cls = s["regressors"], s["classificators"]
    for side in ("hexscope", "tflite_pm1", "xnnpack", "reference"):
        assert isinstance(reg[side], Spread) and isinstance(cls[side], Spread), side
    # measured: regressors 37 / 9 / 5 / 1.370, classificators 28 / 25 / 15 / 2.488
    assert reg["hexscope"].max <= 40 and reg["hexscope"].p95 <= 6 \
        and reg["hexscope"].mean <= 1.5
    assert cls["hexscope"].max <= 31 and cls["hexscope"].p95 <= 16 \
        and cls["hexscope"].mean <= 2.7
    # TFLite's reference kernels against its optimized ones: 24 and 48 codes at most (integer
    # arithmetic both); "a few codes" is out of reach for anything that rounds otherwise
    assert reg["reference"].max >= 20 and cls["reference"].max >= 40
    # and Hexscope's mean is TFLite's own, within 10 %
    for out in (reg, cls):
        own = max(out[side].mean for side in ("tflite_pm1", "xnnpack", "reference"))
        assert out["hexscope"].mean <= 1.1 * own
