"""What the client makes of a device's taps, which carry no type and no d32 padding."""

from __future__ import annotations

import numpy as np

from hexscope.engine.d32 import default_padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.graph_wire import guess_d32_padding, tensor_of
from hexscope.engine.tensor import Tensor


def _size(shape, pad) -> int:
    b, h, w, d = shape
    return b * (h + pad[0] + pad[1]) * (w + pad[2] + pad[3]) * (d + pad[4] + pad[5])


def test_the_default_d32_padding_when_the_bytes_fit_it():
    shape = (1, 12, 13, 20)
    pad = default_padding(shape)
    assert guess_d32_padding(shape, _size(shape, pad), DType.QUINT8) == pad
    # more bytes than the geometry: the tail of the allocation, the padding stays
    assert guess_d32_padding(shape, _size(shape, pad) + 4096 + 1, DType.QUINT8) == pad


def test_a_wider_right_padding_is_found_from_the_byte_count():
    shape = (1, 6, 7, 40)
    pad = default_padding(shape)._replace(w_after=9)
    assert guess_d32_padding(shape, _size(shape, pad), DType.QUINT8) == pad


def test_bytes_that_fit_no_d32_geometry_give_none():
    assert guess_d32_padding((1, 6, 7, 40), 100, DType.QUINT8) is None


def test_an_untyped_tap_takes_the_declared_type_then_the_inherited_one():
    conv = REGISTRY.get("QuantizedConv2d_8x8to32")
    tap = p.Tap(5, 0, p.WireTensor((1, 1, 1, 2), bytes(8), p.UNKNOWN, p.UNKNOWN))
    assert tensor_of(tap, conv, 0, None, 3).dtype is DType.QINT32       # declared
    nop = REGISTRY.get("Nop")
    carried = Tensor.from_array(np.zeros((1, 1, 1, 8), np.uint8), DType.QUINT8)
    assert tensor_of(tap, nop, 0, carried, 1).dtype is DType.QUINT8     # carried through
    assert tensor_of(tap, nop, 0, None, 1).dtype is DType.UINT8         # nothing known


def test_a_d32_port_makes_a_d32_tensor_with_the_inferred_padding():
    spec = REGISTRY.get("Convert_to_d32")
    shape = (1, 4, 4, 8)
    pad = default_padding(shape)
    tap = p.Tap(7, 0, p.WireTensor(shape, bytes(_size(shape, pad)), p.UNKNOWN, p.UNKNOWN))
    t = tensor_of(tap, spec, 0, None, 1)
    assert (t.layout, t.padding, t.dtype) == (Layout.D32, pad, DType.QUINT8)
