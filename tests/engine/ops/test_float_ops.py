"""Float ops (graph spec §4.20-§4.24): hand vectors, shape rules, errors, references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

F = np.float32


def kernel(name: str, *inputs: Tensor, padding: Padding = Padding.NA) -> np.ndarray:
    ctx = KernelContext(node_id=1, op=name, padding=padding)
    (y,) = REGISTRY.get(name).kernel(ctx, *inputs)
    return y


def ft(values) -> Tensor:
    return Tensor.from_array(np.asarray(values, F))


def it(values) -> Tensor:
    return Tensor.from_array(np.asarray(values, np.int32))


# -- Min_f / Max_f (§4.20) ----------------------------------------------------------------
def test_min_max_reduce_everything_by_default():
    x = ft([[3, -2], [7, 1]])
    assert kernel("Min_f", x).shape == (1, 1, 1, 1) and kernel("Min_f", x).item() == -2
    assert kernel("Max_f", x).item() == 7


def test_min_max_shape_rule_spec_example():
    x = ft(np.zeros((2, 5, 7, 32)))
    axes = it([1, 2])
    assert kernel("Max_f", x, axes).shape == (2, 1, 1, 32)
    assert kernel("Max_f", x, axes, padding=Padding.VALID).shape == (1, 1, 2, 32)


def test_min_true_rank_shifts_axes():
    x = ft(np.arange(6).reshape(1, 1, 2, 3))
    # true rank 2: axis 1 is dimension 4 - 2 + 1 = 3 (depth)
    assert kernel("Min_f", x, it([1]), it([2])).reshape(-1).tolist() == [0, 3]


def test_min_negative_axis_reduces_everything_and_out_of_range_is_ignored():
    x = ft(np.arange(6).reshape(1, 1, 2, 3))
    assert kernel("Min_f", x, it([0, -1])).shape == (1, 1, 1, 1)
    same = kernel("Min_f", x, it([5]))
    assert same.shape == (1, 1, 2, 3) and np.array_equal(same, x.array)


def test_min_max_all_nan_group_gives_identity():
    x = ft([[np.nan, np.nan], [1, np.nan]])
    # reduce depth (axis 3): row [nan, nan] has no number, row [1, nan] gives 1
    assert kernel("Min_f", x, it([3])).reshape(-1).tolist() == [np.inf, 1.0]
    assert kernel("Max_f", x, it([3])).reshape(-1).tolist() == [-np.inf, 1.0]


def test_min_reduction_of_size_1_copies_nan():
    x = ft([[np.nan, 2.0]])             # (1,1,1,2): reducing H (size 1) is a copy
    y = kernel("Min_f", x, it([1]))
    assert np.isnan(y[0, 0, 0, 0]) and y[0, 0, 0, 1] == 2.0


def test_min_axis_input_must_hold_data():
    with pytest.raises(KernelError, match="shape-only"):
        kernel("Min_f", ft([1.0, 2.0]), Tensor.shape_only((1, 1, 1, 1)))


def _minmax_reference(arr: np.ndarray, axes: list[int], valid: bool, is_min: bool):
    reduced = {0, 1, 2, 3} if any(a < 0 for a in axes) else {a for a in axes if 0 <= a <= 3}
    out_keep = tuple(1 if i in reduced else n for i, n in enumerate(arr.shape))
    out = np.empty(out_keep, F)
    size = int(np.prod([arr.shape[i] for i in reduced]))
    for pos in itertools.product(*(range(n) for n in out_keep)):
        group = [arr[tuple(p if i not in reduced else q[i] for i, p in enumerate(pos))]
                 for q in itertools.product(*(range(n) for n in arr.shape))
                 if all(q[i] == pos[i] for i in range(4) if i not in reduced)]
        if size == 1:
            out[pos] = group[0]
            continue
        acc = F(np.inf) if is_min else F(-np.inf)
        for v in group:
            if not np.isnan(v) and (v < acc if is_min else v > acc):
                acc = v
        out[pos] = acc
    if valid:
        kept = [n for i, n in enumerate(arr.shape) if i not in reduced]
        out = out.reshape([1] * (4 - len(kept)) + kept)
    return out


@settings(max_examples=30, deadline=None)
@given(st.tuples(*[st.integers(1, 3)] * 4), st.lists(st.integers(-1, 4), min_size=1, max_size=3),
       st.booleans(), st.booleans(), st.integers(0, 2**31))
def test_min_max_match_reference(shape, axes, valid, is_min, seed):
    rng = np.random.default_rng(seed)
    arr = rng.standard_normal(shape).astype(F)
    arr[rng.random(shape) < 0.2] = np.nan
    got = kernel("Min_f" if is_min else "Max_f", ft(arr), it(axes),
                 padding=Padding.VALID if valid else Padding.NA)
    np.testing.assert_array_equal(got, _minmax_reference(arr, axes, valid, is_min))


# -- Softmax_f (§4.21) --------------------------------------------------------------------
def test_softmax_hand_vectors():
    assert kernel("Softmax_f", ft([[1, 1, 1, 1]])).reshape(-1).tolist() == [0.25] * 4
    y = kernel("Softmax_f", ft([0.0, np.log(3.0)]))          # e = [1/3, 1] -> [1/4, 3/4]
    np.testing.assert_allclose(y.reshape(-1), [0.25, 0.75], rtol=1e-6)
    y = kernel("Softmax_f", ft([0.0, np.log(3.0)]), ft([2.0]))  # beta 2: [1/10, 9/10]
    np.testing.assert_allclose(y.reshape(-1), [0.1, 0.9], rtol=1e-6)


def test_softmax_works_per_depth_vector_of_any_shape():
    x = np.array([[[[0, 0], [5, 5]], [[1, 2], [2, 1]]]], F)
    y = kernel("Softmax_f", ft(x))
    assert y.shape == (1, 2, 2, 2)
    np.testing.assert_allclose(y.sum(axis=3), np.ones((1, 2, 2)), rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-20, 20, width=32), min_size=1, max_size=8),
       st.floats(0.125, 3, width=32))
def test_softmax_matches_sequential_reference(values, beta):
    x = np.array(values, F)
    top = x[0]
    for v in x[1:]:
        top = v if v > top else top
    e = [np.exp(F(F(beta) * F(v - top))) for v in x]
    total = F(0)
    for v in e:
        total = F(total + v)
    expected = np.array([F(v * F(F(1) / total)) for v in e], F)
    np.testing.assert_allclose(kernel("Softmax_f", ft(x), ft([beta])).reshape(-1), expected,
                               rtol=2e-7)


# -- LRN_f (§4.22) ------------------------------------------------------------------------
def lrn(x, window_shape=(1, 1, 1, 1), n=1.0, bias=1.0, alpha=1.0, beta=0.5):
    window = Tensor.from_array(np.full(window_shape, n, F))
    return kernel("LRN_f", ft(x), window, ft([bias]), ft([alpha]), ft([beta]))


def test_lrn_single_element_hand_vector():
    assert lrn([2.0]).item() == pytest.approx(2 / np.sqrt(5), rel=1e-6)       # 2*(1+4)^-0.5
    assert lrn([2.0], n=2.0).item() == pytest.approx(2 / np.sqrt(3), rel=1e-6)  # alpha/N


def test_lrn_depth_window_and_even_extent():
    x = [1.0, 2.0, 3.0]
    # window depth 3: element 1 sums 1+4+9 = 14 -> 2 * (1 + 14)^-0.5
    assert lrn(x, (1, 1, 1, 3))[0, 0, 0, 1] == pytest.approx(2 / np.sqrt(15), rel=1e-6)
    # an even extent 2 acts as 1
    np.testing.assert_array_equal(lrn(x, (1, 1, 1, 2)), lrn(x, (1, 1, 1, 1)))


def test_lrn_zero_input_gives_zero():
    assert lrn([0.0, 5.0], (1, 1, 1, 3))[0, 0, 0, 0] == 0.0


@pytest.mark.parametrize("kwargs, message", [
    ({"n": 0.5}, "invalid window size"),
    ({"bias": -1.0}, "bias-value"),
    ({"alpha": -1.0}, "alpha-value"),
    ({"alpha": 0.0, "bias": 0.0}, "both 0"),
    ({"beta": -0.5}, "beta-value"),
    ({"window_shape": (2, 1, 1, 1)}, "LRN by batches"),
])
def test_lrn_parameter_checks(kwargs, message):
    with pytest.raises(KernelError, match=message):
        lrn([1.0], **kwargs)


def test_lrn_window_must_hold_data():
    with pytest.raises(KernelError, match="input 1 not const"):
        kernel("LRN_f", ft([1.0]), Tensor.shape_only((1, 1, 1, 3)), ft([1]), ft([1]), ft([1]))


@settings(max_examples=20, deadline=None)
@given(st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 4)),
       st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4)), st.integers(0, 999))
def test_lrn_matches_loop_reference(shape, window, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(F)
    b, h, w, d = shape
    rh, rw, rd = ((n - 1) // 2 for n in window)
    scale = F(F(0.5) / F(2.0))
    expected = np.empty_like(x)
    for bb, hh, ww, dd in itertools.product(range(b), range(h), range(w), range(d)):
        s = F(0)
        for y in range(hh - rh, hh + rh + 1):
            for z in range(ww - rw, ww + rw + 1):
                for c in range(dd - rd, dd + rd + 1):
                    if 0 <= y < h and 0 <= z < w and 0 <= c < d:
                        s = F(s + F(x[bb, y, z, c] * x[bb, y, z, c]))
        t = F(F(1.5) + F(s * scale))
        expected[bb, hh, ww, dd] = F(np.exp(F(np.log(t) * F(-0.75))) * x[bb, hh, ww, dd])
    got = lrn(x, (1, *window), n=2.0, bias=1.5, alpha=0.5, beta=0.75)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


# -- Tanh_f / Sigmoid_f (§4.23) -----------------------------------------------------------
def test_sigmoid_is_the_true_logistic_not_the_seed_formula():
    y = kernel("Sigmoid_f", ft([0.0, 2.0, -2.0])).reshape(-1)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-np.array([0.0, 2.0, -2.0]))), rtol=1e-6)
    assert abs(y[1] - (1 + np.tanh(2.0)) / 2) > 0.1


def test_tanh_hand_vector():
    np.testing.assert_allclose(kernel("Tanh_f", ft([0.0, 1.0])).reshape(-1), [0, np.tanh(1)],
                               rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-30, 30, width=32), min_size=1, max_size=10))
def test_sigmoid_matches_logistic(values):
    x = np.array(values, np.float64)
    np.testing.assert_allclose(kernel("Sigmoid_f", ft(x)).reshape(-1), 1 / (1 + np.exp(-x)),
                               rtol=1e-5, atol=1e-7)


# -- Concat_f / ConcatV2_f (§4.24) --------------------------------------------------------
def test_concat_f_axis_first_and_v2_axis_last():
    a, b = ft([[1, 2]]), ft([[3]])
    assert kernel("Concat_f", it([3]), a, b).reshape(-1).tolist() == [1, 2, 3]
    assert kernel("ConcatV2_f", a, b, it([3])).reshape(-1).tolist() == [1, 2, 3]


def test_concat_keeps_nan_payload_bits():
    word = np.array([0x7FC00123], np.uint32).view(F)
    y = kernel("Concat_f", it([0]), ft(word), ft([1.0]))
    assert y.view(np.uint32).reshape(-1)[0] == 0x7FC00123


def test_concat_errors():
    with pytest.raises(KernelError, match="bad concat dim: 4"):
        kernel("Concat_f", it([4]), ft([1.0]), ft([2.0]))
    with pytest.raises(KernelError, match="mismatch on tensor dim 2, concat on 3"):
        kernel("Concat_f", it([3]), ft([[1.0], [2.0]]), ft([[1.0]]))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.lists(st.integers(1, 3), min_size=1, max_size=4),
       st.integers(0, 999))
def test_concat_matches_numpy(axis, sizes, seed):
    rng = np.random.default_rng(seed)
    base = [2, 1, 3, 2]
    parts = []
    for n in sizes:
        shape = list(base)
        shape[axis] = n
        parts.append(rng.standard_normal(shape).astype(F))
    got = kernel("ConcatV2_f", *[ft(p) for p in parts], it([axis]))
    np.testing.assert_array_equal(got, np.concatenate(parts, axis=axis))


@pytest.mark.parametrize("name", ["Softmax_f", "Tanh_f", "Sigmoid_f", "LRN_f"])
def test_float_ops_say_they_are_exact_up_to_the_maths_library(name):
    """op_softmax_f.c / op_tanh_f.c / op_sigmoid_f.c / op_lrn_f.c call expf, logf and tanhf;
    the oracle shows the simulator bit exact with glibc's versions, 1-3 ulp off with numpy's
    (Sigmoid up to 8,192 near 0), so the docs must say so."""
    from hexscope.engine.ops.registry import REGISTRY

    doc = REGISTRY.get(name).kernel.__doc__
    assert "exact up to the maths library" in doc and "1 to 3 ulp" in doc
    assert ("8,192 ulp" in doc) is (name == "Sigmoid_f")
