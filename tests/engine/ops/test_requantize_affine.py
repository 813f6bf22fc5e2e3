"""Requantize_8to8's compiled affine step (requantize_fixed.requantize_u8_by_table): over
512 codes it gives what the lane arithmetic of nn_requantize_qu8_to_qu8_hvx gives
(requantize_u8_lanes, the op's reference and what the golden replays check), for every
gain path (op_requantize.c do_requantize_8to8_execute; quantized-ops spec, Requantize_8to8)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.quant.requantize_fixed import (
    requantize_u8_by_table,
    requantize_u8_lanes,
)

# gains on each path: below 1, CLOSE_ENUF to 1, above 1 up to 2^15, and negative
_GAINS = st.one_of(st.floats(0.0, 1.0), st.floats(0.99995, 1.00005), st.floats(1.0, 32767.0),
                   st.floats(-4.0, 0.0))


def _affine_calls(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    real = compiled.kernel

    def counting(name: str):  # type: ignore[no-untyped-def]
        found = real(name)
        if name != "affine_codes" or found is None:
            return found
        # count the passes over data (not the check of the 256 codes)
        return lambda codes, *rest: (calls.append(codes.size), found(codes, *rest))[1]

    monkeypatch.setattr(compiled, "kernel", counting)
    return calls


@settings(max_examples=300, deadline=None)
@given(gain=_GAINS, in_off=st.integers(0, 255), out_off=st.integers(0, 255),
       seed=st.integers(0, 2**16))
def test_affine_step_equals_the_lanes(gain: float, in_off: int, out_off: int,
                                      seed: int) -> None:
    codes = np.random.default_rng(seed).integers(0, 256, 777, dtype=np.uint8)
    codes[:256] = np.arange(256)
    g = np.float32(gain)
    assert np.array_equal(requantize_u8_by_table(codes, g, in_off, out_off),
                          requantize_u8_lanes(codes, g, in_off, out_off))


def test_non_negative_gains_take_the_affine_step(monkeypatch) -> None:
    if compiled.kernel("affine_codes") is None:
        return              # numba missing or off: the lookup runs (the test above holds)
    calls = _affine_calls(monkeypatch)
    codes = np.arange(1024, dtype=np.int64).astype(np.uint8)
    for gain, in_off, out_off in ((0.37, 12, 200), (1.00001, 3, 9), (3.5, 128, 0),
                                  (30000.0, 255, 255), (0.0, 0, 0)):
        g = np.float32(gain)
        assert np.array_equal(requantize_u8_by_table(codes, g, in_off, out_off),
                              requantize_u8_lanes(codes, g, in_off, out_off))
    assert calls.count(1024) == 5
    # a negative gain gives odd lanes their own factor: the table lookup runs
    requantize_u8_by_table(codes, np.float32(-0.5), 10, 20)
    assert calls.count(1024) == 5


def test_hand_computed_gain_two() -> None:
    # gain 2 (> 1): frac 0.5 -> gi 16384, shift 15 - 2 = 13, rnd 4096; in_off 10, out_off 5:
    # code 10 -> 5, 11 -> (16384 + 4096) >> 13 = 2 -> 7, 140 -> (130*16384 + 4096) >> 13 =
    # 260 -> 265 -> 255, 0 -> (-10*16384 + 4096) >> 13 = -20 -> -15 -> 0
    codes = np.tile(np.array([10, 11, 140, 0], np.uint8), 200)
    y = requantize_u8_by_table(codes, np.float32(2.0), 10, 5)
    assert list(y[:4]) == [5, 7, 255, 0]
