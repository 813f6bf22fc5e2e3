"""PPrint family (graph spec §4.11-§4.13): exact lines, limits, levels, d32 addressing."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.d32 import D32Padding
from hexscope.engine.errors import KernelError
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.debug.pprint import limit_range, pprint_lines
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


def run(op_name: str, *inputs: Tensor, debug: int) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    ctx = KernelContext(node_id=0x77, op=op_name, debug_level=debug,
                        log_sink=lambda level, text: lines.append((level, text)))
    REGISTRY.get(op_name).kernel(ctx, *inputs)
    return lines


def test_pprint_8_lines():
    t = Tensor.from_array(np.array([1, 2, 0xAB, 255], np.uint8).reshape(1, 1, 2, 2))
    assert pprint_lines(t, "PPrint_8") == [
        "bhwd = 1,1,2,2", "[0,0,0,0]: 0x01", "[0,0,0,1]: 0x02", "[0,0,1,0]: 0xab",
        "[0,0,1,1]: 0xff"]


def test_pprint_32_prints_raw_words_in_twos_complement():
    t = Tensor.from_array(np.array([-1, 10], np.int32))
    assert pprint_lines(t, "PPrint_32")[1:] == ["[0,0,0,0]: 0xffffffff",
                                                "[0,0,0,1]: 0x0000000a"]


def test_pprint_f_prints_c_percent_f():
    t = Tensor.from_array(np.array([1.5, -0.0, np.inf, np.nan, -np.float32("nan")], np.float32))
    assert [ln.split(": ")[1] for ln in pprint_lines(t, "PPrint_f")[1:]] == [
        "1.500000", "-0.000000", "inf", "nan", "-nan"]


def test_pprint_d32_header_shows_padding():
    t = Tensor.from_array(np.zeros((1, 4, 7, 112), np.uint8)).to_d32(D32Padding(4, 4, 4, 1, 0, 16))
    assert pprint_lines(t, "PPrint_8_d32", 0, 0)[0] == "bhwd = 1,4[4]4,4[7]1,0[112]16"


def test_pprint_limit_line_and_range():
    t = Tensor.from_array(np.arange(6, dtype=np.uint8).reshape(1, 1, 2, 3))
    assert pprint_lines(t, "PPrint_8", 3, 1, 99) == [
        "bhwd = 1,1,2,3", "reporting only on D dimension, range limit to [1...2]",
        "[0,0,0,1]: 0x01", "[0,0,0,2]: 0x02", "[0,0,1,1]: 0x04", "[0,0,1,2]: 0x05"]


def test_pprint_axis_outside_0_3_means_no_limit_and_no_message():
    t = Tensor.from_array(np.arange(4, dtype=np.uint8))
    assert pprint_lines(t, "PPrint_8", -1, 2, 3) == pprint_lines(t, "PPrint_8")
    assert len(pprint_lines(t, "PPrint_8", 7)) == 5


def test_pprint_end_defaults_to_start_plus_one():
    t = Tensor.from_array(np.arange(4, dtype=np.uint8))
    assert pprint_lines(t, "PPrint_8", 3, 2)[1:] == [
        "reporting only on D dimension, range limit to [2...2]", "[0,0,0,2]: 0x02"]


def test_pprint_with_padding_spec_example_left_padding_only():
    # §4.11-4.13: inputs {2, -100, 0} with wb = 4 print only w = -4..-1.
    t = Tensor.from_array(np.full((1, 1, 2, 1), 7, np.uint8)).to_d32(D32Padding(1, 1, 4, 2, 0, 31),
                                                                     fill=0xA5)
    lines = pprint_lines(t, "PPrintWithPadding_8_d32", 2, -100, 0)
    assert lines[1] == "reporting only on W dimension, range limit to [-4...-1]"
    ws = {int(ln.split(",")[2]) for ln in lines[2:]}
    assert ws == {-4, -3, -2, -1}
    assert all(ln.endswith("0xa5") for ln in lines[2:])
    assert len(lines) - 2 == 3 * 4 * 32       # rows -1..1, 4 columns, depth -0..31


def test_pprint_with_padding_clamps_when_there_is_no_left_padding():
    t = Tensor.from_array(np.full((1, 1, 4, 1), 7, np.uint8)).to_d32(D32Padding(0, 0, 0, 0, 0, 31))
    lines = pprint_lines(t, "PPrintWithPadding_8_d32", 2, -100, 0)
    assert lines[1] == "reporting only on W dimension, range limit to [0...0]"


def test_pprint_8_d32_reads_valid_data_through_d32_addressing():
    arr = np.arange(2 * 3 * 5, dtype=np.uint8).reshape(1, 2, 3, 5)
    t = Tensor.from_array(arr).to_d32(fill=0xEE)
    lines = pprint_lines(t, "PPrint_8_d32")
    assert lines[1:] == [f"[0,{h},{w},{d}]: 0x{arr[0, h, w, d]:02x}"
                         for h, w, d in itertools.product(range(2), range(3), range(5))]


def test_plain_pprint_on_d32_reads_memory_order_bytes():
    t = Tensor.from_array(np.full((1, 1, 1, 2), 9, np.uint8)).to_d32(fill=0)
    first = pprint_lines(t, "PPrint_8")[1]
    assert first == f"[0,0,0,0]: 0x{int(t.buffer[0]):02x}"   # not the valid element 0x09


@settings(max_examples=40, deadline=None)
@given(st.integers(-5, 5), st.integers(1, 6), st.one_of(st.none(), st.integers(-9, 9)),
       st.one_of(st.none(), st.integers(-9, 12)))
def test_limit_range_properties(lo, length, start, end):
    hi = lo + length
    first, last = limit_range(lo, hi, start, end)
    assert last > first                                   # never empty
    if start is not None:
        assert lo <= first < hi
    else:
        assert first == 0
    if end is None:
        assert last == first + 1
    elif start is not None and lo <= start < end <= hi:
        assert (first, last) == (start, end)              # a valid request is kept
    else:
        assert last == max(first + 1, min(end, hi))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 5), st.integers(1, 40),
       st.integers(0, 3), st.integers(0, 5), st.integers(0, 31), st.integers(0, 3),
       st.integers(-3, 45), st.integers(-3, 45))
def test_pprint_with_padding_matches_brute_force(b, h, w, d, hp, wb, db, dim, start, end):
    rng = np.random.default_rng(b * 1000 + h * 100 + w * 10 + d)
    arr = rng.integers(0, 256, (b, h, w, d), dtype=np.uint8)
    wa = (-(wb + w)) % 4
    da = (-(db + d)) % 32
    t = Tensor.from_array(arr).to_d32(D32Padding(hp, hp, wb, wa, db, da), fill=0x5A)
    padded = t.padded_array()
    extents = [(0, b), (-hp, h + hp), (-wb, w + wa), (-db, d + da)]
    lo, hi = extents[dim]
    s = min(max(start, lo), hi - 1)
    extents[dim] = (s, max(s + 1, min(end, hi)))
    expected = []
    for bb, hh, ww, dd in itertools.product(*(range(a, z) for a, z in extents)):
        expected.append(f"[{bb},{hh},{ww},{dd}]: 0x{padded[bb, hh + hp, ww + wb, dd + db]:02x}")
    assert pprint_lines(t, "PPrintWithPadding_8_d32", dim, start, end)[2:] == expected


def test_pprint_kernel_logs_at_level_1_only():
    t = Tensor.from_array(np.array([3], np.uint8))
    assert run("PPrint_8", t, debug=0) == []
    assert run("PPrint_8", t, debug=1) == [(1, "bhwd = 1,1,1,1"), (1, "[0,0,0,0]: 0x03")]
    lines = run("PPrint_8", t, debug=2)
    assert lines[0] == (2, "pprinting node <node 0x77> id 77")


def test_pprint_kernel_reads_limit_inputs():
    t = Tensor.from_array(np.arange(4, dtype=np.uint8))
    dim, start = (Tensor.from_array(np.array([v], np.int32)) for v in (3, 2))
    assert run("PPrint_8", t, dim, start, debug=1)[1:] == [
        (1, "reporting only on D dimension, range limit to [2...2]"), (1, "[0,0,0,2]: 0x02")]


def test_pprint_errors():
    flat = Tensor.from_array(np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="unknown PPrint kind"):
        pprint_lines(flat, "PPrint_16")
    with pytest.raises(ValueError, match="prints d32 tensors"):
        pprint_lines(flat, "PPrint_8_d32")
    with pytest.raises(KernelError, match="d32"):
        run("PPrint_8_d32", flat, debug=1)
    with pytest.raises(KernelError, match="reads 16 bytes"):
        run("PPrint_32", flat, debug=1)


def test_pprint_f_in_a_session_writes_the_log():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x20, "PPrint_f", inputs=[(0x10, 0)])
    s = Session(g, debug_level=1)
    s.execute([np.array([0.25, -2.0], np.float32)])
    assert s.log.text(node_id=0x20) == ("bhwd = 1,1,1,2\n[0,0,0,0]: 0.250000\n"
                                        "[0,0,0,1]: -2.000000\n")


def scalar_i32(value: int) -> Tensor:
    return Tensor.from_array(np.array([value], np.int32))


def test_limit_range_on_an_empty_axis_keeps_the_lower_bound():
    """§4.11-4.13: clamp(start, lo, hi - 1) with hi = lo gives lo (op_pprint.c's order)."""
    assert limit_range(0, 0, 5, None) == (0, 1)
    assert limit_range(0, 0, -3, 9) == (0, 1)
    assert limit_range(0, 0, None, 4) == (0, 1)
    assert limit_range(2, 2, 0, None) == (2, 3)


@pytest.mark.parametrize("kind, shape, limits, expected, count", [
    ("PPrint_8", (0, 2, 3, 4), (0,),
     ["bhwd = 0,2,3,4", "reporting only on B dimension, range limit to [0...0]"], 24),
    ("PPrint_32", (1, 0, 3, 1), (1, 7),
     ["bhwd = 1,0,3,1", "reporting only on H dimension, range limit to [0...0]"], 3),
    ("PPrint_f", (1, 2, 3, 0), (3, 0, 5),
     ["bhwd = 1,2,3,0", "reporting only on D dimension, range limit to [0...0]"], 6),
])
def test_pprint_flat_limit_on_an_empty_axis_warns_instead_of_reading(kind, shape, limits,
                                                                   expected, count):
    """§4.11-4.13: the header and limit lines as the device logs them, then no value lines."""
    dtype = {"PPrint_8": np.uint8, "PPrint_32": np.int32, "PPrint_f": np.float32}[kind]
    t = Tensor.from_array(np.zeros(shape, dtype))
    axis = expected[1].split()[3]
    assert run(kind, t, *map(scalar_i32, limits), debug=1) == [
        (1, expected[0]), (1, expected[1]),
        (0, f"{kind}: the {axis} dimension is empty, but the range limit [0...0] still covers "
            f"index 0; the device would print {count} values read from outside the tensor's "
            "buffer (undefined data), so the simulator prints none")]
    assert pprint_lines(t, kind, *limits) == expected


@pytest.mark.parametrize("kind, count", [("PPrint_8_d32", 8), ("PPrintWithPadding_8_d32", 64)])
def test_pprint_d32_limit_on_an_empty_axis_warns_instead_of_reading(kind, count):
    """§4.11-4.13: W = 0 with no W padding; header and limit lines, then no value lines."""
    t = Tensor.from_array(np.zeros((1, 2, 0, 4), np.uint8)).to_d32(D32Padding(0, 0, 0, 0, 0, 28),
                                                                   fill=0xA5)
    header = ["bhwd = 1,0[2]0,0[0]0,0[4]28",
              "reporting only on W dimension, range limit to [0...0]"]
    assert run(kind, t, scalar_i32(2), scalar_i32(3), debug=1) == [
        (1, header[0]), (1, header[1]),
        (0, f"{kind}: the W dimension is empty, but the range limit [0...0] still covers "
            f"index 0; the device would print {count} values read from outside the tensor's "
            "buffer (undefined data), so the simulator prints none")]
    assert pprint_lines(t, kind, 2, 3) == header


def test_pprint_8_d32_limit_on_an_empty_axis_reads_the_padding_after_it():
    """§4.11-4.13, §1.6.3: W = 0 but wa = 4, so w = 0 addresses the first right-padding column."""
    t = Tensor.from_array(np.full((1, 1, 0, 1), 7, np.uint8)).to_d32(
        D32Padding(0, 0, 0, 4, 0, 31), fill=0xA5)
    assert run("PPrint_8_d32", t, scalar_i32(2), scalar_i32(1), debug=1) == [
        (1, "bhwd = 1,0[1]0,0[0]4,0[1]31"),
        (1, "reporting only on W dimension, range limit to [0...0]"), (1, "[0,0,0,0]: 0xa5")]
