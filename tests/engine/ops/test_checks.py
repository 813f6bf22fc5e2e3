"""Check and the Close family (graph spec §4.5-§4.8): hand vectors, log lines, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.errors import CheckFailed, NodeError
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.debug.cfmt import c_a, c_f
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

F = np.float32


def run(op_name: str, *inputs: Tensor, debug: int = 0) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    ctx = KernelContext(node_id=0x42, op=op_name, debug_level=debug,
                        log_sink=lambda level, text: lines.append((level, text)))
    REGISTRY.get(op_name).kernel(ctx, *inputs)
    return lines


def failing(op_name: str, *inputs: Tensor, debug: int = 0) -> tuple[str, list[str]]:
    lines: list[tuple[int, str]] = []
    ctx = KernelContext(node_id=0x42, op=op_name, debug_level=debug,
                        log_sink=lambda level, text: lines.append((level, text)))
    with pytest.raises(CheckFailed) as info:
        REGISTRY.get(op_name).kernel(ctx, *inputs)
    return str(info.value), [text for level, text in lines if level == 0]


def ft(values, shape=None) -> Tensor:
    arr = np.asarray(values, F)
    return Tensor.from_array(arr.reshape(shape) if shape else arr)


def scalar(v: float) -> Tensor:
    return Tensor.scalar(v)


# -- C formatting -------------------------------------------------------------------------
def test_cfmt_percent_a_matches_glibc_forms():
    assert c_a(4.375) == "0x1.18p+2"
    assert c_a(1.0) == "0x1p+0"
    assert c_a(-0.5) == "-0x1p-1"
    assert c_a(0.0) == "0x0p+0"
    assert c_a(F(0.1)) == "0x1.99999ap-4"   # float32 0.1 promoted to double


def test_cfmt_percent_f_prints_negative_nan_as_glibc():
    assert c_f(-np.float32("nan")) == "-nan"
    assert c_f(float("nan")) == "nan"
    assert c_f(-np.inf) == "-inf"
    assert c_f(F(1.5)) == "1.500000"


# -- Check (§4.5) -------------------------------------------------------------------------
def test_check_passes_on_identical_tensors():
    x = Tensor.from_array(np.arange(6, dtype=np.uint8).reshape(1, 2, 3))
    assert run("Check", x, x.copy()) == []


def test_check_reports_first_mismatching_field_in_library_order():
    a = Tensor.from_array(np.zeros((1, 2, 3, 4), np.uint8))
    b = Tensor.from_array(np.zeros((2, 2, 3, 5), np.uint8))
    message, lines = failing("Check", a, b)
    assert lines == ["check fail shape.batches 1 != 2 "]
    assert "shape.batches" in message


def test_check_compares_data_size_after_dims():
    a = Tensor.from_array(np.zeros((1, 1, 1, 4), np.uint8))
    b = Tensor.from_array(np.zeros((1, 1, 1, 4), np.float32))
    _, lines = failing("Check", a, b)
    assert lines == ["check fail data_size 4 != 16 "]


def test_check_data_mismatch_names_the_first_differing_element():
    a = Tensor.from_array(np.zeros((1, 2, 2, 2), np.uint8))
    arr = np.zeros((1, 2, 2, 2), np.uint8)
    arr[0, 1, 0, 1] = 9
    message, lines = failing("Check", a, Tensor.from_array(arr))
    assert lines == ["data mismatch"]
    assert "(b,h,w,d)=(0,1,0,1)" in message and "1 of 8 bytes" in message


# -- Close_f (§4.6) -----------------------------------------------------------------------
def test_close_f_epsilon_is_tolerance_times_range_including_zero():
    ref = ft([1, 2, 4, -1], (1, 1, 2, 2))            # range 4 - (-1) = 5; eps = 0.35
    assert run("Close_f", ft([1, 2, 4.25, -1], (1, 1, 2, 2)), ref) == []
    failing("Close_f", ft([1, 2, 4.375, -1], (1, 1, 2, 2)), ref)


def test_close_f_range_always_includes_zero():
    ref = ft([10, 11])                                # range 11 (not 1): eps = 0.77
    assert run("Close_f", ft([10, 11.5]), ref) == []


def test_close_f_epsilon_has_absolute_floor():
    ref = ft([0.01, 0.02])                            # 0.02 * 0.07 -> floor 0.07
    assert run("Close_f", ft([0.01, 0.02 + 0.0625]), ref) == []
    failing("Close_f", ft([0.01, 0.02 + 0.125]), ref)


def test_close_f_tolerance_input_is_a_fraction():
    ref = ft([5, 0])                                  # range 5; tolerance 0.5 -> eps 2.5
    assert run("Close_f", ft([7, 0]), ref, scalar(0.5)) == []
    failing("Close_f", ft([8, 0]), ref, scalar(0.5))


def test_close_f_failure_report_lines_match_library():
    ref = ft([1, 2, 4, -1], (1, 1, 2, 2))
    message, lines = failing("Close_f", ft([1, 2, 4.375, -1], (1, 1, 2, 2)), ref)
    # Welford by hand: mean 0.09375, S = 0.10546875, sd = sqrt(S/4) = 0.162380
    assert lines == [
        "data stats: mean_error=0.093750 sd_error=0.162380",
        "data not close. Worst offender: i: 2/4 a[i]: 0x1.18p+2 4.375000 b[i]: 0x1p+2 "
        "4.000000 max_diff=0.375000 range=5.000000 epsilon=0.350000 shape=1,1,2,2",
        "\t\tActual\t\tExpected\tDiff",
        "0[0,0,0])\t1.000000\t1.000000\t0.000000",
        "1[0,0,1])\t2.000000\t2.000000\t0.000000",
        "2[0,1,0])\t4.375000\t4.000000\t0.375000 <====",
        "3[0,1,1])\t-1.000000\t-1.000000\t0.000000",
    ]
    assert "0.375000" in message and "(b,h,w,d)=(0,0,1,0)" in message


def test_close_f_listing_stops_after_index_2000():
    ref = ft(np.zeros(2500))
    dut = np.zeros(2500, F)
    dut[7] = 1.0
    _, lines = failing("Close_f", ft(dut), ref)
    element_lines = [ln for ln in lines if "])\t" in ln]
    assert len(element_lines) == 2001
    assert element_lines[-1].startswith("2000[")
    assert lines[-1].startswith("Stopping at ")


def test_close_f_any_nan_fails_after_logging_locations():
    ref = ft([1, 2, 3])
    message, lines = failing("Close_f", ft([1, np.nan, 3]), ref, debug=2)
    assert lines == ["NaN found at location 1", "1 NAN values found!!"]
    assert "NaN" in message and "(b,h,w,d)=(0,0,0,1)" in message


def test_close_f_logs_at_most_20_nan_locations_but_counts_all():
    _, lines = failing("Close_f", ft(np.full(30, np.nan)), ft(np.zeros(30)))
    assert len([ln for ln in lines if ln.startswith("NaN found")]) == 20
    assert "30 NAN values found!!" in lines


def test_close_f_shape_mismatch_uses_close_wording():
    _, lines = failing("Close_f", ft([1, 2, 3]), ft([1, 2]))
    assert lines == ["check fail shape.depth (3 vs 2)"]


def test_close_f_ok_line_is_level_2():
    lines = run("Close_f", ft([1.0]), ft([1.0]), debug=2)
    assert [(lv, t.startswith("close node")) for lv, t in lines][-1] == (2, True)


def _close_f_reference(a: np.ndarray, b: np.ndarray, fudge: float) -> bool:
    """True if Close_f should pass: straightforward float32 loop of §4.6."""
    top, low, worst, nan = F(0), F(0), F(0), False
    for x, y in zip(a, b, strict=True):
        top = y if y > top else top
        low = y if y < low else low
        d = abs(F(x - y))
        if np.isnan(d):
            nan = True
        elif d > worst:
            worst = d
    eps = F(F(top - low) * F(fudge))
    if float(eps) < 0.07:
        eps = F(0.07)
    return not nan and not worst > eps


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-100, 100, width=32), st.floats(-3, 3, width=32)),
                min_size=1, max_size=12),
       st.sampled_from([0.01, 0.07, 0.2]))
def test_close_f_decision_matches_reference(pairs, fudge):
    ref = np.array([p[0] for p in pairs], F)
    dut = (ref + np.array([p[1] for p in pairs], F)).astype(F)
    expected = _close_f_reference(dut, ref, fudge)
    ctx = KernelContext(node_id=1, op="Close_f")
    try:
        REGISTRY.get("Close_f").kernel(ctx, ft(dut), ft(ref), scalar(fudge))
        passed = True
    except CheckFailed:
        passed = False
    assert passed == expected


# -- Close_quint8 / int32 / qint32 (§4.7) -------------------------------------------------
def u8(values) -> Tensor:
    return Tensor.from_array(np.asarray(values, np.uint8))


def i32(values) -> Tensor:
    return Tensor.from_array(np.asarray(values, np.int32))


def test_close_quint8_threshold_is_7_percent_of_max_ref_in_float32():
    ref = u8([0, 100, 200])                           # max 200: 13/200 passes, 15/200 fails
    assert run("Close_quint8", u8([13, 100, 200]), ref) == []
    _, lines = failing("Close_quint8", u8([15, 100, 200]), ref)
    assert lines == ["i: 0/3 a[i]: 0000000f b[i]: 00000000", "data mismatch"]
    # 14/200 is 0.07 in float32 = 0.0700000003 > 0.07 (double): fails as on the device
    failing("Close_quint8", u8([14, 100, 200]), ref)


def test_close_quint8_zero_reference_passes_equal_and_fails_different():
    assert run("Close_quint8", u8([0, 0]), u8([0, 0])) == []      # 0/0 = NaN passes
    failing("Close_quint8", u8([0, 1]), u8([0, 0]))               # 1/0 = inf fails


def test_close_int32_prints_negative_values_in_twos_complement():
    ref = i32([-1000, 500])
    assert run("Close_int32", i32([-1000, 569]), ref) == []
    message, lines = failing("Close_int32", i32([-1071, 500]), ref)
    assert lines == ["i: 0/2 a[i]: fffffbd1 b[i]: fffffc18", "data mismatch"]
    assert "(b,h,w,d)=(0,0,0,0)" in message


def test_close_int32_ignores_its_loop_offset_input():
    assert run("Close_int32", i32([3]), i32([3]), i32([99])) == []


def test_close_qint32_compares_raw_words():
    ref = Tensor.from_array(np.array([1000, 0], np.int32))
    failing("Close_qint32", Tensor.from_array(np.array([1000, 71], np.int32)), ref)
    assert run("Close_qint32", Tensor.from_array(np.array([1000, 69], np.int32)), ref) == []


def test_close_int_shape_mismatch():
    _, lines = failing("Close_int32", i32([[1, 2]]), i32([[1], [2]]))
    assert lines == ["check fail shape.width (1 vs 2)"]   # (1,1,1,2) vs (1,1,2,1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 255)), min_size=1, max_size=10))
def test_close_quint8_decision_matches_reference(pairs):
    a = np.array([p[0] for p in pairs], np.uint8)
    b = np.array([p[1] for p in pairs], np.uint8)
    top = F(b.max())
    with np.errstate(all="ignore"):
        expected = not any(float(abs(F(F(x) - F(y)) / top)) > 0.07
                           for x, y in zip(a, b, strict=True))
    ctx = KernelContext(node_id=1, op="Close_quint8")
    try:
        REGISTRY.get("Close_quint8").kernel(ctx, u8(a), u8(b))
        passed = True
    except CheckFailed:
        passed = False
    assert passed == expected


# -- Close_q_quint8 (§4.8) ----------------------------------------------------------------
def q_inputs(dut_q, ref_q, lo=0.0, hi=2.55):
    return (u8(dut_q), scalar(lo), scalar(hi), u8(ref_q), scalar(lo), scalar(hi))


def test_close_q_quint8_ratio_of_reference_range():
    assert run("Close_q_quint8", *q_inputs([100, 110], [100, 100])) == []   # 0.1/2.55
    message, lines = failing("Close_q_quint8", *q_inputs([100, 120], [100, 100]))
    assert lines == [
        "max error ratio / test error ratio = 0.078431/0.070000, max error index 1 count 2",
        "dut min/max = 0.000000/2.550000 ref min/max = 0.000000/2.550000",
        "dut q/f = 120/1.200000 ref q/f = 100/1.000000",
        "data mismatch",
    ]
    assert "(b,h,w,d)=(0,0,0,1)" in message


def test_close_q_quint8_seventh_input_is_the_limit():
    assert run("Close_q_quint8", *q_inputs([100, 120], [100, 100]), scalar(0.1)) == []


def test_close_q_quint8_eight_inputs_use_default_limit_outside_loops():
    failing("Close_q_quint8", *q_inputs([100, 120], [100, 100]), scalar(0.0), scalar(0.5))


def test_close_q_quint8_lists_bad_elements_at_level_2():
    lines: list[tuple[int, str]] = []
    ctx = KernelContext(node_id=1, op="Close_q_quint8", debug_level=2,
                        log_sink=lambda lv, t: lines.append((lv, t)))
    with pytest.raises(CheckFailed):
        REGISTRY.get("Close_q_quint8").kernel(ctx, *q_inputs([100, 120], [100, 100]))
    assert (2, "1, h/w/d=0/0/1 dut=1.200000 ref=1.000000") in lines


def test_close_q_quint8_shape_mismatch():
    _, lines = failing("Close_q_quint8", *q_inputs([1, 2], [1]))
    assert lines == ["check fail shape.depth (2 vs 1)"]


# -- through a session -------------------------------------------------------------------
def test_close_f_failure_stops_the_run_naming_the_node():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_const_node(0x1, np.array([1.0, 2.0], F))
    g.append_node(0x20, "Close_f", inputs=[(0x10, 0), (0x1, 0)])
    s = Session(g)
    s.execute([np.array([1.0, 2.0], F)])
    with pytest.raises(NodeError) as info:
        s.execute([np.array([1.0, 3.0], F)])
    assert info.value.node_id == 0x20 and "data not close" in info.value.reason
    assert any(line.text.startswith("data not close. Worst offender") for line in s.log.lines)
