"""The metrics' fast path: fewer passes, the same answers as the direct formulas."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.analysis.metrics import error_metrics


@pytest.mark.parametrize("tolerance", [0.0, 0.5, 1.0, 3.0, 50.0])
def test_the_count_beyond_the_tolerance_matches_a_direct_count(rng, tolerance):
    a = rng.normal(size=4000).astype(np.float32)
    b = (a + rng.normal(scale=0.02, size=4000)).astype(np.float32)
    lsb = 0.01
    m = error_metrics(a, b, lsb, tolerance)
    expected = int(np.count_nonzero(np.abs(a - b) > tolerance * lsb))
    assert m.beyond == expected
    assert (expected == 0) == (tolerance == 50.0)


@pytest.mark.parametrize("types", [(np.float32, np.float32), (np.float32, np.float64),
                                   (np.float64, np.float32), (np.float64, np.float64)])
@pytest.mark.parametrize("seed", range(4))
def test_the_worst_element_is_the_first_largest_error_and_inputs_stay_as_they_were(
        types, seed):
    rng = np.random.default_rng(seed)
    # few distinct values: ties between +e and -e errors, and among equal errors, are common
    a = rng.integers(-3, 4, 500).astype(types[0])
    b = rng.integers(-3, 4, 500).astype(types[1])
    a_before, b_before = a.copy(), b.copy()
    for tolerance in (-1.0, 0.0, 2.0, 9.0):
        m = error_metrics(a, b, 1.0, tolerance)
        err = np.abs(a.astype(np.float64) - b.astype(np.float64))
        assert m.worst_index == (int(np.argmax(err)),)
        assert m.max_abs == float(err.max()) and (m.worst_a, m.worst_b) == (
            float(a[m.worst_index]), float(b[m.worst_index]))
        assert m.beyond == int(np.count_nonzero(err > tolerance))
    assert np.array_equal(a, a_before) and np.array_equal(b, b_before)


@pytest.fixture(params=["compiled", "numpy"])
def kernels(request, monkeypatch):
    """Each test below runs on the compiled pass and on the numpy path."""
    if request.param == "numpy":
        monkeypatch.setenv("HEXSCOPE_KERNELS", "numpy")
    else:
        monkeypatch.delenv("HEXSCOPE_KERNELS", raising=False)
    return request.param


def _direct(a: np.ndarray, b: np.ndarray, limit: float) -> dict:
    """The definitions, in float64 on the caller's values (an independent reference)."""
    a64, b64 = a.astype(np.float64).reshape(-1), b.astype(np.float64).reshape(-1)
    d = a64 - b64
    err = np.abs(d)
    return {"max": float(err.max()), "worst": int(np.argmax(err)),
            "rms": float(np.sqrt(np.mean(d * d))),
            "cos": float(a64 @ b64 / np.sqrt((a64 @ a64) * (b64 @ b64))),
            "beyond": int(np.count_nonzero(err > limit))}


@pytest.mark.parametrize("n", [1, 15, 16, 17, 4095, 4096, 4097, 8209, 20000])
def test_the_pass_matches_the_definitions_at_every_length(kernels, n):
    # lengths around the 16 lanes and the 4096-element blocks of the compiled pass; the
    # worst element placed in the tail, the first block and a middle one
    rng = np.random.default_rng(n)
    a = rng.normal(size=n).astype(np.float32)
    for where in {0, n // 2, n - 1}:
        b = (a + rng.normal(scale=0.01, size=n)).astype(np.float32)
        b[where] = a[where] + 1.0
        m = error_metrics(a, b, 0.01, 2.0)
        want = _direct(a, b, 0.02)
        assert m.worst_index == (where,) == (want["worst"],)
        assert m.max_abs == pytest.approx(want["max"], rel=1e-6)
        assert m.beyond == want["beyond"]
        assert m.rms_abs == pytest.approx(want["rms"], rel=1e-5)
        assert m.cosine == pytest.approx(want["cos"], rel=1e-6)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32])
def test_codes_give_the_metrics_of_their_values_bit_for_bit(kernels, dtype):
    # code_metrics reads the codes as real() does (float32 steps for quint8, float64 for
    # qint32) without making the values: every field equal to error_metrics on the values
    from hexscope.engine.analysis.metrics import code_metrics
    from hexscope.engine.dtypes import DType
    from hexscope.engine.ops.reference import real
    from hexscope.engine.tensor import Tensor

    rng = np.random.default_rng(3)
    hi = 255 if dtype == np.uint8 else 2 ** 20
    codes = rng.integers(0, hi, (1, 37, 29, 11)).astype(dtype)
    lo_r, hi_r = -1.7, 2.3
    kind = DType.QUINT8 if dtype == np.uint8 else DType.QINT32
    t = Tensor.from_array(codes, kind)
    mn, mx = (Tensor.from_array(np.array([[[[v]]]], np.float32), DType.FLOAT32)
              for v in (lo_r, hi_r))
    vals = real(t, mn, mx)
    ref = (vals + rng.normal(scale=0.02, size=vals.shape)).astype(np.float32)
    lo, hi_ = float(np.float32(lo_r)), float(np.float32(hi_r))
    if dtype == np.uint8:
        scale, offset = (hi_ - lo) / 255.0, lo
    else:
        scale, offset = (hi_ - lo) / 2.0 ** 32, 0.0
    lsb = 0.016
    for tol in (0.0, 1.0, 3.0):
        assert code_metrics(ref, codes, scale, offset, lsb, tol) == \
            error_metrics(ref, vals, lsb, tol)


def test_the_compiled_pass_and_numpy_agree(monkeypatch):
    rng = np.random.default_rng(5)
    a = rng.normal(size=(3, 50, 41)).astype(np.float32)
    b = np.round(a * 20).astype(np.float32) / 20
    b[1, 7, 3] = a[1, 7, 3] - 0.5
    on = error_metrics(a, b, 0.05, 0.6)
    monkeypatch.setenv("HEXSCOPE_KERNELS", "numpy")
    off = error_metrics(a, b, 0.05, 0.6)
    assert (on.worst_index, on.max_abs, on.beyond, on.worst_a, on.worst_b) == \
        (off.worst_index, off.max_abs, off.beyond, off.worst_a, off.worst_b) == \
        ((1, 7, 3), float(np.float32(a[1, 7, 3]) - np.float32(b[1, 7, 3])), on.beyond,
         float(a[1, 7, 3]), float(b[1, 7, 3]))
    assert on.beyond == int(np.count_nonzero(np.abs(a.astype(np.float64) - b) > 0.03))
    for field in ("rms_abs", "cosine", "sqnr_db"):
        assert getattr(on, field) == pytest.approx(getattr(off, field), rel=1e-6)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_value_takes_the_defined_path(kernels, bad):
    a = np.linspace(-1, 1, 5000, dtype=np.float32)
    b = a.copy()
    b[4321] = bad
    m = error_metrics(a, b, 0.01, 1.0)
    assert (m.nonfinite, m.worst_index, m.max_abs, m.sqnr_db) == (1, (4321,), np.inf, -np.inf)


@pytest.mark.parametrize("seed", range(3))
def test_sums_read_in_the_pass_give_the_metrics_of_their_values_bit_for_bit(kernels, seed):
    # a requantize's reference given as its qint32 sums (reference.Reals): the metrics
    # read them as real() does (float64 sums * scale) in the same pass, every field equal
    # to error_metrics on the values, worst element and NaN-free ties included
    from hexscope.engine.analysis.metrics import code_metrics
    from hexscope.engine.ops.reference import read_codes

    rng = np.random.default_rng(seed)
    sums = rng.integers(-2 ** 31, 2 ** 31, (1, 23, 19, 7), dtype=np.int64).astype(np.int32)
    sums[0, 0, :3, 0] = [-2 ** 31, 2 ** 31 - 1, 0]
    a_scale = 9.5 / 2.0 ** 32
    values = read_codes(sums, a_scale, None, np.float64)
    lo, hi = float(np.float32(values.min())), float(np.float32(values.max()))
    scale = (hi - lo) / 255.0
    codes = np.clip(np.round((values - lo) / scale) + rng.integers(-1, 2, sums.shape),
                    0, 255).astype(np.uint8)
    for tol in (0.0, 0.5, 1.0, 3.0):
        got = code_metrics(sums, codes, scale, lo, scale, tol, a_scale)
        assert got == code_metrics(values, codes, scale, lo, scale, tol)
        assert got.worst_a == float(values[got.worst_index])
        if tol == 0.0:
            assert got.beyond > 0                   # the +-1 codes added are seen


def test_sums_read_with_a_scale_must_be_int32():
    from hexscope.engine.analysis.metrics import code_metrics

    with pytest.raises(ValueError, match="int32"):
        code_metrics(np.zeros(3, np.int64), np.zeros(3, np.uint8), 1.0, 0.0, 1.0, 1.0, 0.5)


def _read_only(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


def test_the_warm_up_compiles_every_pair_a_comparison_passes():
    # the first Compare after install compiled six more forms of the pass (35 s under load):
    # a const's tensor is read-only, and the warm-up had compiled writeable arrays only
    from hexscope.engine.analysis import metrics_pass
    from hexscope.engine.analysis.metrics import code_metrics
    from hexscope.engine.ops.kernels.warm import WARMERS

    pytest.importorskip("numba")
    WARMERS["hexscope.engine.analysis.metrics_pass"]()
    before = metrics_pass.compiled_forms()
    assert before >= 15
    rng = np.random.default_rng(0)
    values = [rng.normal(size=64).astype(t) for t in metrics_pass.VALUE_TYPES]
    codes = [rng.integers(0, 100, 64).astype(t) for t in metrics_pass.CODE_TYPES]
    for form in (np.array, _read_only):
        for a in values:
            for b in values:
                error_metrics(form(a), form(b), 0.1, 1.0)
            for c in codes:
                code_metrics(form(a), form(c), 0.05, 3.0, 0.05, 1.0)
                code_metrics(form(a), _read_only(c), 0.05, None, 0.05, 1.0)
        for c in codes:
            code_metrics(form(codes[-1]), c, 0.05, 3.0, 0.05, 1.0, a_scale=0.05)
    assert metrics_pass.compiled_forms() == before
