"""Compiled per-row loops of QuantizedSoftmax_8 (the float ``_ref`` form, and the HVX fixed
point the device's form and QuantizedSoftmax_8_d32 share), L2Normalize_8 and
QuantizedMean_8's epilogue (numba, built once per process by :func:`compiled.compile_once`).

Each loop takes the same float32 / integer steps, in the same order, as the numpy form in
its op module (which stays the fallback and the reference: the tests run both and compare
bytes). numpy needed a dozen passes and temporaries per call for these ops, each a few
microseconds on the small tensors they see (a 1001-class softmax, a 1280-deep norm); one
compiled pass removes that cost (bench/README.md, delegate_ops.py).

numba evaluates float32 * float32 in float32 and does not contract a multiply and an add
into one fused step unless asked (no fastmath here), as the oracle build of the C does not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from hexscope.engine.ops.kernels import compiled


class Loops(NamedTuple):
    softmax_rows: Callable[..., Any]
    l2_rows: Callable[..., Any]
    mean_requant: Callable[..., Any]
    softmax_hvx_rows: Callable[..., Any]
    sum_hw: Callable[..., Any]


def _build() -> Loops:
    from hexscope.engine.ops.kernels.normalize_defs import (
        l2_rows,
        mean_requant,
        softmax_hvx_rows,
        softmax_rows,
        sum_hw,
    )

    return Loops(softmax_rows, l2_rows, mean_requant, softmax_hvx_rows, sum_hw)


loops = compiled.compile_once(_build)

__all__ = ["Loops", "loops"]
