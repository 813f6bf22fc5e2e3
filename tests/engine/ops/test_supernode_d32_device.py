"""The d32 Supernodes as nnlib's HVX/asm ops compute them (op_supernode_new.c,
op_dwise_snode_8bit.c, supernode_utils.h), where they differ from the flat ops' ``_ref``;
checked against nnlib's HVX build under qemu-hexagon (docs/oracle-hvx.md)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor

DW = "DepthwiseSupernode_8x8p32to8_d32"


def f(v: float) -> Tensor:
    return Tensor.from_array(np.array([v], np.float32))


def _dwise(pad: D32Padding, shape=(1, 5, 9, 32), filt=(2, 7), stride=2,
           out=(0.0, float("inf"))) -> tuple[Tensor, ...]:
    rng = np.random.default_rng(5)
    b, h, w, c = shape
    x = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8).to_d32(pad)
    wts = Tensor.from_array(rng.integers(0, 256, (*filt, c, 1), dtype=np.uint8), DType.QUINT8)
    bias = Tensor.from_array(np.zeros((1, 1, 1, c), np.int32), DType.QINT32)
    return (x, wts, f(-1.0), f(1.0), f(-1.0), f(1.0), Tensor.shape_only((1, stride, stride, 1)),
            bias, f(-1.0), f(1.0), f(out[0]), f(out[1]))


def _run(op: str, inputs: tuple[Tensor, ...], padding: Padding = Padding.SAME):
    ctx = KernelContext(1, op, padding=padding)
    return REGISTRY.get(op).kernel(ctx, *inputs)


def test_the_depthwise_output_left_pad_divides_as_c_does():
    # op_dwise_snode_8bit.c:410: out_left_pad = (in_left_pad - required_w_before) /
    # stride_width; 2 columns before, a 7-wide filter reaches 3: (2 - 3) / 2 is 0 in C
    # (Python's -1 // 2 is -1, which raised "d32 padding must not be negative")
    y, _, _ = _run(DW, _dwise(D32Padding(4, 4, 2, 1, 0, 0)))
    assert y.shape == (1, 3, 5, 32) and y.padding.w_before == 0
    assert y.padding.w_after == (-5) & 3


def test_a_depthwise_output_left_pad_below_zero_is_refused_with_a_message():
    # 1 column before, 3 needed, stride 1: out_left_pad -2 on the device, rows that overlap
    with pytest.raises(KernelError, match="output left padding would be -2"):
        _run(DW, _dwise(D32Padding(4, 4, 1, 2, 0, 0), filt=(3, 7), stride=1))
