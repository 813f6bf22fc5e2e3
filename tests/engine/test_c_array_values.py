"""C import of data array values off the well-trodden path: values the numpy fast path cannot
read (parentheses, signs on expressions, casts, macros), read token by token with each value
checked where it stands, and long white space that the fast path must read as C does."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.io.c_import import import_c_text
from hexscope.engine.io.c_lexer import CSyntaxError
from hexscope.engine.io.c_literals import fast_number_list

# C type of the array, hexagon_nn's name for it, numpy type, smallest and largest value kept
INT_TYPES = [
    ("uint8_t", "quint8", np.uint8, -128, 255),
    ("int8_t", "int8", np.int8, -128, 255),
    ("uint16_t", "quint16", np.uint16, -32768, 65535),
    ("int16_t", "qint16", np.int16, -32768, 65535),
    ("int32_t", "int32", np.int32, -2**31, 2**32 - 1),
]
SIZES = {"uint8_t": 1, "int8_t": 1, "uint16_t": 2, "int16_t": 2, "int32_t": 4, "float": 4}
FLT_MAX = float(np.finfo(np.float32).max)
FLOAT32_OVERFLOW = 3.4028235677973366e38    # the smallest double that rounds to inf


def _text(ctype: str, body: str, count: int, defines: str = "") -> str:
    size = SIZES[ctype]
    return (f"{defines}static {ctype} a[] = {{ {body} }};\nvoid init_graph(int nn_id) {{\n"
            f"  APPEND_CONST_NODE(0x1, 1, 1, 1, {count}, (const uint8_t *)a, "
            f"{count * size});\n}}\n")


def _values(ctype: str, body: str, count: int, defines: str = "") -> np.ndarray:
    return import_c_text(_text(ctype, body, count, defines), "t.c").node(1).const.array.reshape(-1)


def _error(text: str, offset: int) -> str:
    """The message of the import error, which must point at ``offset``."""
    with pytest.raises(CSyntaxError) as info:
        import_c_text(text, "t.c")
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    where = f"t.c:{line}:{column}: "
    assert str(info.value).startswith(where), str(info.value)
    return str(info.value)[len(where):]


def _wrapped(values: list[int], np_type: type) -> list[int]:
    """What C stores for in-range values: two's complement, whatever the signedness."""
    bits = np.dtype(np_type).itemsize * 8
    unsigned = np.array([v & ((1 << bits) - 1) for v in values], np.uint64)
    return unsigned.astype(f"u{bits // 8}").view(np_type).tolist()


# values the fast path declines --------------------------------------------------------------
@pytest.mark.parametrize(("ctype", "c_name", "np_type", "lo", "hi"), INT_TYPES)
def test_c_array_values_slow_path_keeps_the_whole_range(ctype, c_name, np_type, lo, hi):
    body = f"({lo}), -(1), (+{hi}), ({ctype}){hi - 1}, -(-(7)), (0)"
    got = _values(ctype, body, 6)
    assert got.dtype == np_type
    assert got.tolist() == _wrapped([lo, -1, hi, hi - 1, 7, 0], np_type)


@pytest.mark.parametrize(("ctype", "c_name", "np_type", "lo", "hi"), INT_TYPES)
@pytest.mark.parametrize("form", ["({v})", "-({n})", "({ctype}){v}", "V"])
def test_c_array_values_slow_path_refuses_out_of_range_at_the_value(ctype, c_name, np_type,
                                                                    lo, hi, form):
    bad = lo - 1 if form.startswith("-") else hi + 1
    element = form.format(v=bad, n=-bad, ctype=ctype)
    defines = f"#define V {bad}\n" if form == "V" else ""
    items = ["(1)"] * 300
    items[200] = element
    text = _text(ctype, ", ".join(items), 300, defines)
    offset = text.index(", " + element + ",") + 2
    assert _error(text, offset) == f"value {bad} does not fit {c_name} ({lo}..{hi})"


def test_c_array_values_slow_path_reads_floats_exactly():
    body = ("(1), -(2.5), (float)0x10, (18446744073709551615), -(0.0), "
            f"({FLT_MAX!r}), -({FLT_MAX!r}), (1e-50), NAN, -(INFINITY)")
    got = _values("float", body, 10)
    expected = np.array([1, -2.5, 16, 18446744073709551615, -0.0, FLT_MAX, -FLT_MAX, 1e-50,
                         np.nan, -np.inf], np.float32)
    assert got.dtype == np.float32
    assert got.tobytes() == expected.tobytes()
    # the largest double that still rounds to FLT_MAX, not to infinity
    below = float(np.nextafter(FLOAT32_OVERFLOW, 0))
    assert _values("float", f"({below!r})", 1).tolist() == [FLT_MAX]


@pytest.mark.parametrize(("element", "value"), [
    (f"({FLOAT32_OVERFLOW!r})", FLOAT32_OVERFLOW),
    (f"-({FLOAT32_OVERFLOW!r})", -FLOAT32_OVERFLOW),
    ("(1e39)", 1e39),
    ("-(float)1e300", -1e300),
    ("1e30 * 1e10", 1e30 * 1e10),
])
def test_c_array_values_slow_path_refuses_float32_overflow_at_the_value(element, value):
    items = ["-(1.5)"] * 50
    items[30] = element
    text = _text("float", ", ".join(items), 50)
    message = _error(text, text.index(", " + element + ",") + 2)
    assert message == f"value {value!r} overflows float32"


@pytest.mark.parametrize(("ctype", "element", "found"), [
    ("int32_t", "(1.5)", "an integer, found 1.5"),
    ("int32_t", "-(2.0)", "an integer, found -2.0"),
    ("int32_t", "V", "an integer, found 0.5"),
    ("uint8_t", '"x"', 'an integer, found "x"'),
    ("float", "other", "a number, found other"),
    ("float", '("x")', 'a number, found "x"'),
])
def test_c_array_values_slow_path_refuses_non_numbers_at_the_value(ctype, element, found):
    items = ["(1)", element, "(2)"]
    text = _text(ctype, ", ".join(items), 3, "#define V 0.5\n")
    message = _error(text, text.index(", " + element) + 2)
    assert message.startswith("array a: expected a") and message.endswith(found), message


def test_c_array_values_from_macros():
    defines = "#define ONE 1\n#define NEG -(3)\n#define PAIR ONE, NEG\n#define TOP 255\n"
    got = _values("uint8_t", "ONE, NEG, PAIR, TOP, (uint8_t)TOP", 6, defines)
    assert got.dtype == np.uint8
    assert got.tolist() == [1, 253, 1, 253, 255, 255]


def test_c_array_values_many_slow_values_match_their_plain_reading():
    rng = np.random.default_rng(0)
    values = rng.integers(-2**31, 2**31, 5000).tolist()
    forms = ["({})", "+{}", "-(-({}))", "(int32_t){}", "({}) * 1", "0 + {}"]
    body = ", ".join(forms[k % len(forms)].format(v) for k, v in enumerate(values))
    got = _values("int32_t", body, len(values))
    assert got.dtype == np.int32
    assert got.tolist() == values
    plain = _values("int32_t", ", ".join(map(str, values)), len(values))
    assert plain.tobytes() == got.tobytes()


def test_c_array_values_empty_slow_array_is_empty():
    text = ("#define NOTHING\nstatic int16_t a[] = { NOTHING };\n"
            "void init_graph(int nn_id) {\n"
            "  APPEND_CONST_NODE(0x1, 1, 1, 1, 0, (const uint8_t *)a, 0);\n}\n")
    got = import_c_text(text, "t.c").node(1).const.array
    assert got.dtype == np.int16 and got.size == 0


# long white space in the fast path ----------------------------------------------------------
RUN = " \t\r\n" * 5000        # 20,000 characters


def test_c_array_values_fast_path_reads_long_white_space_before_commas():
    assert fast_number_list(f"1{RUN}, -2{RUN},{RUN}3{RUN},{RUN}", False).tolist() == [1, -2, 3]
    assert fast_number_list(f"1.{RUN}, 2.5f{RUN}, -3e2{RUN},", True).tolist() == [1, 2.5, -300]
    assert fast_number_list(f"{RUN}7{RUN}", False).tolist() == [7]
    # single spaces before commas next to long runs, each run read back to its own element
    assert fast_number_list(f"1, 2 ,{RUN}3 ,4{RUN},5", False).tolist() == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("length", [1, 7, 8, 9, 10, 17, 1000])
def test_c_array_values_fast_path_white_space_runs_of_any_length(length):
    run = " \t" * (length // 2) + " " * (length % 2)
    assert fast_number_list(f"1, 2{run},3 {run}, 4{run}", False).tolist() == [1, 2, 3, 4]
    assert fast_number_list(f"1.{run}, 2.5f{run},", True).tolist() == [1.0, 2.5]
    assert fast_number_list(f"{run}, 1", False) is None
    assert fast_number_list(f"1,{run}, 2", False) is None
    assert fast_number_list(f"1, -{run}, 2", False) is None
    assert fast_number_list(f"1, 2 .{run}, 3", True) is None


def test_c_array_values_fast_path_declines_empty_elements_behind_long_white_space():
    assert fast_number_list(f"{RUN}, 1", False) is None             # empty first element
    assert fast_number_list(f"{RUN}, 5{RUN},6", False) is None
    assert fast_number_list(f"1,{RUN}, 2", False) is None           # empty in the middle
    assert fast_number_list(f"1, -{RUN}, 2", False) is None         # a lone sign
    assert fast_number_list(f"1, +{RUN},", True) is None
    assert fast_number_list(f"1, 2 .{RUN}, 3", True) is None        # '.' after a space
    assert fast_number_list(f"1, .{RUN}, 3", True) is None


def test_c_array_values_long_white_space_imports():
    got = _values("int32_t", f"1{RUN}, (2){RUN}, 3{RUN}", 3)
    assert got.tolist() == [1, 2, 3]
    got = _values("float", f"1.5f{RUN}, -2.{RUN},\n 4{RUN},{RUN}", 3)
    assert got.tolist() == [1.5, -2.0, 4.0]


@pytest.mark.parametrize(("body", "anchor"), [
    (f"1,{RUN}, 2", f"{RUN}, 2"),
    (f"1, -{RUN}, 2", f"{RUN}, 2"),
    (f"{RUN}, 2", f"{RUN}, 2"),
])
def test_c_array_values_empty_element_behind_long_white_space_is_an_error(body, anchor):
    text = _text("int32_t", body, 2)
    offset = text.index(anchor) + len(RUN)
    assert _error(text, offset) == "expected a value, found ','"
