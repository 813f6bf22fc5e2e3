"""Tensor basics: shapes padded to 4-D, dtypes, scalars, shape-only tensors (spec §1.1-1.3)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import DType, Layout, Tensor
from hexscope.engine.d32 import D32Geometry, D32Padding


def test_lower_rank_is_padded_on_the_left():
    t = Tensor.from_array(np.zeros((3, 5), np.float32))
    assert t.shape == (1, 1, 3, 5)
    assert t.dtype is DType.FLOAT32 and t.layout is Layout.FLAT
    assert t.nbytes == 60


def test_scalar_is_1111_and_reads_reinterpreted():
    t = Tensor.scalar(1.0, DType.FLOAT32)
    assert t.shape == (1, 1, 1, 1)
    # graph spec §1.1: a wrongly typed scalar is bit-reinterpreted
    assert t.scalar_value(int) == 0x3F800000
    assert Tensor.scalar(-1, DType.INT32).scalar_value(int) == -1


def test_shape_only_tensor_has_no_data():
    t = Tensor.shape_only((1, 2, 2, 1))
    assert not t.has_data
    with pytest.raises(ValueError, match="shape-only"):
        _ = t.array


def test_flat_offsets_are_depth_major():
    t = Tensor.from_array(np.zeros((2, 3, 4, 5), np.int32))
    # ((b*H + h)*W + w)*D + d, times 4 bytes
    assert t.offset(1, 2, 3, 4) == (((1 * 3 + 2) * 4 + 3) * 5 + 4) * 4


def test_too_small_buffer_is_rejected():
    with pytest.raises(ValueError, match="too small"):
        Tensor((1, 1, 1, 8), DType.FLOAT32, np.zeros(16, np.uint8))


def test_five_dimensions_are_rejected():
    with pytest.raises(ValueError, match="at most 4"):
        Tensor.from_array(np.zeros((1, 1, 1, 1, 2), np.uint8))


def test_readonly_tensor_cannot_be_written():
    t = Tensor.from_array(np.zeros(4, np.uint8)).readonly()
    with pytest.raises(ValueError):
        t.array[0, 0, 0, 0] = 1


def test_freeze_fitting_freezes_all_or_nothing() -> None:
    from hexscope.engine.tensor import freeze_fitting

    y = Tensor.from_array(np.zeros((1, 2, 2, 3), np.uint8), DType.QUINT8)
    lo = Tensor.from_array(np.zeros(1, np.float32))
    done = Tensor.from_array(np.ones(1, np.float32)).readonly()
    # the last one fails (past its capacity): nothing is frozen
    assert not freeze_fitting([y, lo, y], ((DType.QUINT8, 12), (None, None), (None, 11)))
    assert y.raw.flags.writeable and lo.raw.flags.writeable
    assert not freeze_fitting([y, lo.array], ((None, None), (None, None)))   # not a Tensor
    assert not freeze_fitting([lo], ((DType.QUINT8, None),))                # another type
    assert lo.raw.flags.writeable
    assert freeze_fitting([y, lo, done, Tensor.shape_only((1, 1, 1, 1))],
                          ((DType.QUINT8, 12), (DType.FLOAT32, 4), (None, None), (None, 0)))
    assert not y.raw.flags.writeable and not lo.raw.flags.writeable
    assert not done.raw.flags.writeable


def test_alike_shares_a_buffer_in_the_same_geometry_and_falls_back_to_the_checks() -> None:
    x = Tensor.from_array(np.arange(2 * 3 * 5, dtype=np.uint8).reshape(1, 2, 3, 5),
                          DType.QUINT8).to_d32()
    raw = np.zeros(x.raw.size, np.uint8)
    y = x.alike(raw, DType.QINT8)
    assert (y.shape, y.layout, y.padding, y.dtype) == (x.shape, x.layout, x.padding,
                                                       DType.QINT8)
    assert np.shares_memory(y.raw, raw) and y.raw is not raw and y.device_dtype is DType.QINT8
    assert y.same_as(Tensor(x.shape, DType.QINT8, raw, x.layout, x.padding))
    strided = np.zeros(2 * x.raw.size, np.uint8)[::2]      # not contiguous: copied, as made
    assert not np.shares_memory(x.alike(strided).raw, strided)
    with pytest.raises(ValueError, match="too small"):
        x.alike(raw[:-1])


def test_alike_checks_a_buffer_smaller_than_the_tensors_own_against_its_data_size() -> None:
    # the shortcut trusts a buffer as large as the tensor's allocation; one smaller (an
    # allocation with a tail) is measured against nbytes, and a wider type is refused
    pad = D32Padding(1, 1, 4, 3, 0, 27)
    x = Tensor((1, 2, 5, 5), DType.QUINT8, np.zeros(D32Geometry((1, 2, 5, 5), pad).elements
                                                    + 64, np.uint8), Layout.D32, pad)
    fits = np.arange(x.nbytes, dtype=np.uint8)
    y = x.alike(fits)
    assert np.shares_memory(y.raw, fits) and y.nbytes == fits.size
    with pytest.raises(ValueError, match="too small"):
        x.alike(fits[:-1])
    with pytest.raises(ValueError, match="too small"):
        x.alike(np.zeros(x.raw.size, np.uint8), DType.INT32)
    assert x.alike(np.zeros(x.raw.size, np.uint8), DType.QINT8).dtype is DType.QINT8
