"""Gather_f / Gather_int32 / Gather_8 (graph spec §4.25, seed examples)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.errors import KernelError, NodeError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.shape.gather import apparent_rank, gather_plan
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


def it(values) -> Tensor:
    return Tensor.from_array(np.asarray(values, np.int32))


def gather(name: str, *inputs: Tensor, padding: Padding = Padding.NA):
    ctx = KernelContext(node_id=1, op=name, padding=padding)
    return REGISTRY.get(name).kernel(ctx, *inputs)


# The seed's examples (index shape, table shape, index_dim, index_rank) -> output shape.
SEED_EXAMPLES = [
    ((1, 1, 1, 6), (1, 32, 5, 9), -1, -1, (1, 6, 5, 9)),
    ((1, 1, 4, 7), (1, 32, 5, 9), -1, -1, (4, 7, 5, 9)),
    ((2, 5, 5, 12), (1, 1, 1, 256), -1, -1, (2, 5, 5, 12)),
    ((1, 1, 4, 20), (1, 5, 64, 12), 2, -1, (5, 4, 20, 12)),
    ((1, 1, 1, 8), (1, 5, 64, 12), 2, -1, (1, 5, 8, 12)),
    ((1, 1, 1, 1), (1, 5, 64, 12), 2, -1, (1, 1, 5, 12)),
    ((1, 1, 1, 8), (1, 5, 64, 12), 2, 2, (5, 1, 8, 12)),
]


@pytest.mark.parametrize("index, table, dim, rank, expected", SEED_EXAMPLES)
def test_gather_shape_rule_seed_examples(index, table, dim, rank, expected):
    assert gather_plan(index, table, dim, rank).out_shape == expected


def test_apparent_rank():
    assert [apparent_rank(s) for s in [(2, 1, 1, 1), (1, 3, 1, 1), (1, 1, 2, 1), (1, 1, 1, 5),
                                       (1, 1, 1, 1)]] == [4, 3, 2, 1, 0]


def test_gather_f_hand_vector_rows():
    table = Tensor.from_array(np.array([[10, 11], [20, 21], [30, 31]], np.float32))
    (y,) = gather("Gather_f", it([2, 0, 2]), table)
    assert y.shape == (1, 1, 3, 2)
    assert y.reshape(-1).tolist() == [30, 31, 10, 11, 30, 31]


def test_gather_index_dim_selects_inner_dimension():
    table = np.arange(2 * 3 * 2, dtype=np.int32).reshape(1, 2, 3, 2)
    (y,) = gather("Gather_int32", it([1]), Tensor.from_array(table), it([2]))
    # a single index has rank 0; table rank 3 -> output rank 2: table[0, :, 1, :]
    assert y.shape == (1, 1, 2, 2)
    assert np.array_equal(y.reshape(2, 2), table[0, :, 1, :])


def test_gather_8_copies_min_and_max():
    table = Tensor.from_array(np.array([5, 6, 7], np.uint8))
    y, lo, hi = gather("Gather_8", it([2, 1]), table, Tensor.scalar(-1.0), Tensor.scalar(3.0))
    assert y.reshape(-1).tolist() == [7, 6]
    assert (lo.scalar_value(), hi.scalar_value()) == (-1.0, 3.0)


def test_gather_same_padding_rejects_out_of_range_index():
    table = Tensor.from_array(np.array([1.0, 2.0, 3.0], np.float32))
    with pytest.raises(KernelError, match="out-of-range value 5 found at offset 1; table size "
                                          "is 3"):
        gather("Gather_f", it([0, 5, -1]), table, padding=Padding.SAME)


@pytest.mark.parametrize("padding", [p for p in Padding if p is not Padding.SAME])
def test_gather_other_paddings_clip(padding):
    table = Tensor.from_array(np.array([1.0, 2.0, 3.0], np.float32))
    (y,) = gather("Gather_f", it([-4, 1, 9]), table, padding=padding)
    assert y.reshape(-1).tolist() == [1.0, 2.0, 3.0]


def test_gather_table_dim_of_size_1_is_allowed():
    table = Tensor.from_array(np.array([[4.0, 5.0]], np.float32).reshape(1, 1, 1, 2))
    (y,) = gather("Gather_f", it([0, 3]), table, it([2]))
    assert y.reshape(-1).tolist() == [4.0, 5.0, 4.0, 5.0]


def test_gather_errors():
    with pytest.raises(KernelError, match="improper rank 1 given for apparent rank=2"):
        gather_plan((1, 1, 2, 3), (1, 1, 1, 5), -1, 1)
    with pytest.raises(KernelError, match="improper rank 5"):
        gather_plan((1, 1, 1, 3), (1, 1, 1, 5), -1, 5)
    with pytest.raises(KernelError, match="dimension_index = 4 : must be -1 ...3"):
        gather_plan((1, 1, 1, 3), (1, 1, 1, 5), 4, -1)
    with pytest.raises(KernelError, match="index_rank = 3, table_rank = 3; output_rank = 5"):
        gather_plan((1, 2, 2, 2), (1, 4, 4, 4), -1, -1)


def _reference(idx, table, dim, rank, out_shape):
    """Straightforward loop of §4.25's semantics, clipping indices."""
    trank = max(1, apparent_rank(table.shape))
    d = 4 - trank if dim < 0 else dim
    trank = max(trank, 4 - d)
    irank = apparent_rank(idx.shape) if rank < 0 else rank
    n_idx = int(np.prod(idx.shape[4 - irank:]))
    flat_idx = idx.reshape(-1)[:n_idx]
    rows = []
    for o in itertools.product(*(range(n) for n in table.shape[4 - trank:d])):
        for j in range(n_idx):
            k = min(max(int(flat_idx[j]), 0), table.shape[d] - 1)
            lead = (0,) * (4 - trank) + o + (k,)
            rows.append(table[lead].reshape(-1))
    return np.concatenate(rows).reshape(out_shape)


@settings(max_examples=40, deadline=None)
@given(st.tuples(*[st.integers(1, 3)] * 4), st.tuples(*[st.integers(1, 3)] * 4),
       st.integers(-1, 3), st.integers(0, 999))
def test_gather_matches_reference(index_shape, table_shape, dim, seed):
    rng = np.random.default_rng(seed)
    try:
        plan = gather_plan(index_shape, table_shape, dim, -1)
    except KernelError:
        return
    table = rng.standard_normal(table_shape).astype(np.float32)
    idx = rng.integers(-2, table_shape[plan.index_dim] + 2, index_shape).astype(np.int32)
    (y,) = gather("Gather_f", it(idx), Tensor.from_array(table), it([dim]), padding=Padding.VALID)
    np.testing.assert_array_equal(y, _reference(idx, table, dim, -1, plan.out_shape))


def test_gather_padding_comes_from_the_node_in_a_session():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, np.array([1.0, 2.0], np.float32))
    g.append_node(0x20, "Gather_f", inputs=[(0x10, 0), (0x1, 0)], outputs=1, padding="SAME")
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    with pytest.raises(NodeError, match="out-of-range value 2 found at offset 0"):
        Session(g).execute([np.array([2], np.int32)])


# Zero-size dimensions: the simulator's choice (graph spec §4.25 does not reject them).
GATHER_DTYPES = [("Gather_f", np.float32), ("Gather_int32", np.int32), ("Gather_8", np.uint8)]


def gather_sized(name: str, dtype, index_shape, table_shape, padding: Padding = Padding.NA):
    index = it(np.zeros(index_shape, np.int32))
    table = Tensor.from_array(np.ones(table_shape, dtype))
    ranges = (Tensor.scalar(-1.5), Tensor.scalar(2.5)) if name == "Gather_8" else ()
    return gather(name, index, table, *ranges, padding=padding)


@pytest.mark.parametrize("name, dtype", GATHER_DTYPES)
def test_gather_rejects_index_tensor_emptied_outside_its_rank(name, dtype):
    """§4.25/§1.1: indices (1,1,1,0) have apparent rank 0, so nidx = 1 but none are stored."""
    with pytest.raises(KernelError) as err:
        gather_sized(name, dtype, (1, 1, 1, 0), (1, 1, 5, 4))
    assert str(err.value) == (
        "the index tensor int32 1x1x1x0 is too small: it holds 0 indices, but with index rank "
        "0 the lookup reads 1 (the empty dimension lies outside the rank); the device would "
        "read outside its buffer")


@pytest.mark.parametrize("name, dtype", GATHER_DTYPES)
def test_gather_rejects_table_emptied_outside_its_rank(name, dtype):
    """§4.25/§1.1: table (1,1,0,4) has apparent rank 1, so TabN = 4 but it stores nothing."""
    kind = {"Gather_f": "float32", "Gather_int32": "int32", "Gather_8": "quint8"}[name]
    with pytest.raises(KernelError) as err:
        gather_sized(name, dtype, (1, 1, 1, 1), (1, 1, 0, 4), padding=Padding.SAME)
    assert str(err.value) == (
        f"the table {kind} 1x1x0x4 is too small: it holds 0 elements, but the lookup on "
        "index_dim 3 reads it as outer x TabN x inner = 1 x 4 x 1 = 4 (the empty dimension "
        "lies outside the table rank); the device would read outside its buffer")


@pytest.mark.parametrize("padding", [Padding.NA, Padding.VALID, Padding.MIRROR_REFLECT])
@pytest.mark.parametrize("name, dtype", GATHER_DTYPES)
def test_gather_rejects_clipping_into_a_table_without_rows(name, dtype, padding):
    """§4.25: TabN = 0 clips every index to [0, TabN - 1] = -1; SAME keeps its range error."""
    kind = {"Gather_f": "float32", "Gather_int32": "int32", "Gather_8": "quint8"}[name]
    with pytest.raises(KernelError) as err:
        gather_sized(name, dtype, (1, 1, 1, 1), (1, 1, 1, 0), padding=padding)
    assert str(err.value) == (
        f"the table {kind} 1x1x1x0 has no rows on index_dim 3 (TabN = 0), so padding "
        f"{padding.name} clips every index to -1; the device would read outside its buffer")
    with pytest.raises(KernelError, match=r"^out-of-range value 0 found at offset 0; table "
                                          r"size is 0$"):
        gather_sized(name, dtype, (1, 1, 1, 1), (1, 1, 1, 0), padding=Padding.SAME)


@pytest.mark.parametrize("name, dtype", GATHER_DTYPES)
def test_gather_with_no_indices_into_an_empty_table_gives_an_empty_output(name, dtype):
    """§4.25: indices (1,1,2,0) give nidx = 0, so table (1,1,0,4) is never read."""
    outputs = gather_sized(name, dtype, (1, 1, 2, 0), (1, 1, 0, 4))
    assert outputs[0].shape == (1, 1, 2, 0)
    assert outputs[0].dtype == dtype
    if name == "Gather_8":
        assert (outputs[1].scalar_value(), outputs[2].scalar_value()) == (-1.5, 2.5)
