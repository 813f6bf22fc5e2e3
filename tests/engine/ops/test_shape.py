"""Flatten and QuantizedFlatten (graph spec §4.14-§4.15)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.errors import GraphError, KernelError
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


def kernel(name: str, *inputs: Tensor):
    return REGISTRY.get(name).kernel(KernelContext(node_id=1, op=name), *inputs)


def test_flatten_shape_is_1_1_1_n_with_same_bytes_and_type():
    arr = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    (y,) = kernel("Flatten", Tensor.from_array(arr))
    assert y.shape == (1, 1, 1, 120)
    assert y.dtype == Tensor.from_array(arr).dtype
    assert np.array_equal(y.buffer, arr.reshape(-1).view(np.uint8))


def test_flatten_accepts_and_ignores_a_second_input():
    x = Tensor.from_array(np.ones((2, 2), np.float32))
    (a,) = kernel("Flatten", x)
    (b,) = kernel("Flatten", x, Tensor.from_array(np.array([9, 9], np.int32)))
    assert a.same_as(b)


def test_flatten_rejects_d32_input():
    x = Tensor.from_array(np.ones((1, 1, 1, 3), np.uint8)).to_d32()
    with pytest.raises(KernelError, match="d32"):
        kernel("Flatten", x)


def test_quantized_flatten_passes_min_and_max_through():
    x = Tensor.from_array(np.arange(6, dtype=np.uint8).reshape(1, 2, 3))
    lo, hi = Tensor.scalar(-1.5), Tensor.scalar(2.5)
    y, y_min, y_max = kernel("QuantizedFlatten", x, lo, hi)
    assert y.shape == (1, 1, 1, 6) and list(y.array.reshape(-1)) == list(range(6))
    assert y_min.scalar_value() == -1.5 and y_max.scalar_value() == 2.5


@settings(max_examples=30, deadline=None)
@given(st.tuples(*[st.integers(1, 4)] * 4))
def test_flatten_equals_numpy_ravel(shape):
    arr = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    (y,) = kernel("Flatten", Tensor.from_array(arr))
    assert np.array_equal(y.array.reshape(-1), arr.ravel())
    assert y.shape == (1, 1, 1, arr.size)


def test_flatten_port_counts_are_validated():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x20, "Flatten", inputs=[(0x10, 0), (0x10, 0), (0x10, 0)], outputs=1)
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    with pytest.raises(GraphError, match="1 to 2"):
        Session(g)


def test_flatten_in_a_session():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x20, "Flatten", inputs=[(0x10, 0)], outputs=1)
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    (out,) = Session(g).execute([np.ones((2, 3), np.float32)])
    assert out.shape == (1, 1, 1, 6)
