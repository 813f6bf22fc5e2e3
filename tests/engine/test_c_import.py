"""C import of hexagon_nn graph-init files (graph spec §3.2, §3.3), hand-written files in each
construct variant, every error with its line and column, and the numpy fast path checked
against a token-by-token reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import GraphFileError
from hexscope.engine.io.c_import import import_c, import_c_text
from hexscope.engine.io.c_lexer import CSyntaxError
from hexscope.engine.io.c_literals import fast_number_list
from hexscope.engine.nodes import OutputDef, Padding
from support.c_errors import import_error

DATA = Path(__file__).resolve().parents[1] / "data" / "c"


def od(*sizes: int, es: int = 4, zo: int = 0, step: float = 0.0) -> OutputDef:
    return OutputDef(tuple(sizes), es, zo, step)


def test_small_style_file():
    g = import_c(DATA / "small_style.c")
    assert g.order == (0x2000A, 0x2010F, 0x2044D)
    inp, nop, out = list(g)
    assert (inp.op, inp.inputs, inp.outputs, inp.padding) == (
        "INPUT", (), (od(1, 4, 5, 3),), Padding.NA)
    assert (nop.op, nop.inputs, nop.outputs) == ("Nop", ((0x2000A, 0),), (od(1, 4, 5, 3),))
    assert (out.op, out.inputs, out.outputs) == ("OUTPUT", ((0x2010F, 0),), ())
    assert [n.label for n in g] == ["", "", ""]     # the 7-argument form has no names


def test_med_style_file():
    g = import_c(DATA / "med_style.c")
    assert len(g) == 15
    # The hex-id trap: 0x3000f keeps its f (graph spec NOTES: never rstrip('f') an id).
    assert 0x3000F in g and 0x3000 not in g
    filt = g.node(0x3000B).const
    assert filt.shape == (2, 2, 3, 16) and filt.dtype is DType.QUINT8
    expected = [128 + (k * 37) % 97 - 48 for k in range(192)]   # how the file was written
    assert filt.array.reshape(-1).tolist() == expected
    assert g.node(0x3000C).const.array.reshape(-1).tolist() == [-4.0]
    assert g.node(0x3000C).const.dtype is DType.FLOAT32
    assert g.node(0x3000E).const.array.reshape(-1).tolist() == [-1]
    assert g.node(0x3000E).const.dtype is DType.INT32
    stride = g.node(0x30250).const
    assert stride.shape == (1, 2, 2, 1) and not stride.has_data
    conv = g.node(0x3024F)
    assert conv.label == "conv" and conv.op == "QuantizedConv2d_8x8to32"
    assert conv.padding is Padding.VALID
    assert conv.inputs == ((0x3024E, 0), (0x3000B, 0), (0x3024E, 1), (0x3024E, 2),
                           (0x3000C, 0), (0x3000D, 0), (0x30250, 0))
    # OUTPUT_4D(1,4,4,16,1): the int32 output declared with element size 1 (§3.3 quirk).
    assert conv.outputs == (od(1, 4, 4, 16, es=1), od(1, 1, 1, 1), od(1, 1, 1, 1))
    assert g.node(0x3024E).label == "Quantize"
    assert g.node(0x3024C).op == "Min_f" and g.node(0x3024D).op == "Max_f"


def test_constructs_file():
    g = import_c(DATA / "constructs.c")
    arr = {i: g.node(i).const for i in (0x1000F, 0x10010, 0x10011, 0x10012, 0x10013)}
    assert arr[0x1000F].array.reshape(-1).tolist() == [-1, 16, 8, 0x7FFFFFFF]
    assert arr[0x1000F].shape == (1, 1, 2, 2)
    assert arr[0x10010].array.reshape(-1).tolist() == [1.5, -0.25, 300.0, 0.0, 0.0, 0.0]
    assert arr[0x10011].array.reshape(-1).tolist() == [16, 255, 0]
    assert arr[0x10011].dtype is DType.QUINT8
    assert arr[0x10012].dtype is DType.QINT16
    assert arr[0x10012].array.reshape(-1).tolist() == [-2, 7]
    assert arr[0x10013].dtype is DType.INT8
    assert arr[0x10013].array.reshape(-1).tolist() == [-128, 127]
    assert not g.node(0x10014).const.has_data
    assert g.node(0x20001).outputs == (od(1, 4, 4, 2),)
    nop = g.node(0x20002)
    assert nop.label == 'a "quoted" name' and nop.inputs == ((0x20001, 0),)
    assert nop.outputs == (od(1, 4, 4, 2), od(1, 1, 1, 4, zo=-3, step=0.5))
    direct = g.node(0x20003)            # hexagon_nn_append_node(nn_id, ...) with numbers
    assert (direct.op, direct.padding, direct.inputs) == ("Nop", Padding.SAME,
                                                          ((0x20002, 0),))
    assert direct.outputs == (OutputDef((16, 2), 4),)
    assert g.node(0x20004).inputs == ((0x20003, 0), (0x20002, 1))


TEMPLATE = """\
typedef uint8_t quint8;
static quint8 data_for_op_10[] = { 1, 2, 3, 4 };
static hexagon_nn_output outputs_for_20[] = {
  { .rank = 4, .max_sizes = { 1, 1, 1, 4 }, .elementsize = 1 },
};
static hexagon_nn_input inputs_for_30[] = {
  { .src_id = 0x20, .output_idx = 0 },
};
void init_graph(int nn_id) {
  APPEND_CONST_NODE(0x10, 1, 1, 1, 4, (const uint8_t *)data_for_op_10, 4);
  APPEND_NODE("in", 0x20, OP_INPUT, NN_PAD_NA, NULL, 0, outputs_for_20, 1);
  APPEND_NODE("out", 0x30, OP_OUTPUT, NN_PAD_NA, inputs_for_30, 1, NULL, 0);
}
"""


def test_template_imports():
    g = import_c_text(TEMPLATE, "t.c")
    assert [n.op for n in g] == ["Const", "INPUT", "OUTPUT"]
    assert g.node(0x10).const.array.reshape(-1).tolist() == [1, 2, 3, 4]


# (text replaced, replacement, where the error must point: the first occurrence of this text
# in the changed file, message)
ERRORS = [
    ("OP_OUTPUT,", "OP_Outpt,", "OP_Outpt", "unknown op OP_Outpt"),
    ("NN_PAD_NA, inputs", "NN_PAD_FOO, inputs", "NN_PAD_FOO", "padding mode"),
    (".elementsize = 1 }", ".max_size = 1 }", "max_size = 1", "no field .max_size"),
    ("inputs_for_30, 1, NULL", "inputs_for_30, 2, NULL", "2, NULL", "count 2 exceeds"),
    ("data_for_op_10, 4);", "data_for_op_10, 5);", "5);", "data_len is 5"),
    ("1, 1, 1, 4, (const", "1, 1, 2, 4, (const", "(const uint8_t *)data",
     "the shape 1x1x2x4 has 8"),
    ("NULL, 0, outputs_for_20, 1", "NULL, 1, outputs_for_20, 1", "1, outputs_for_20",
     "NULL but the count"),
    ("inputs_for_30, 1", "inputs_for_31, 1", "inputs_for_31", "unknown array inputs_for_31"),
    ("{ 1, 2, 3, 4 }", "{ 1, 2, 256, 4 }", "256", "256 does not fit quint8"),
    ("{ 1, 2, 3, 4 }", "{ 1, 2, 3.5, 4 }", "3.5", "found 3.5"),
    ("APPEND_NODE(\"in\", 0x20", "APPEND_NODE(\"in\", 0", "0, OP_INPUT",
     "node id 0x0 is invalid"),
    ("  APPEND_NODE(\"out\"", "  int x = 1;\n  APPEND_NODE(\"out\"", "int x",
     "only APPEND_NODE"),
    ("typedef uint8_t quint8;", "#ifdef X\n#endif", "#ifdef", "conditional compilation"),
    ("OP_INPUT, NN_PAD_NA,", "OP_INPUT,", "APPEND_NODE(\"in\"", "takes 7 arguments"),
    ("static quint8", "static double", "data_for_op_10[]", "not a hexagon_nn element type"),
    ("(const uint8_t *)data_for_op_10", "outputs_for_20", "outputs_for_20, 4",
     "outputs_for_20 is not a const data array"),
    ("{ .src_id = 0x20, .output_idx = 0 }", "{ .src_id = 0x20, .src_id = 0 }",
     "src_id = 0 }", ".src_id given twice"),
]


def position(text: str, anchor: str) -> tuple[int, int]:
    offset = text.index(anchor)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


@pytest.mark.parametrize(("old", "new", "anchor", "message"), ERRORS)
def test_errors_name_line_and_column(old, new, anchor, message):
    assert old in TEMPLATE
    text = TEMPLATE.replace(old, new, 1)
    with pytest.raises(GraphFileError) as info:
        import_c_text(text, "t.c")
    line, col = position(text, anchor)
    assert str(info.value).startswith(f"t.c:{line}:{col}: "), str(info.value)
    assert message in str(info.value)


def test_error_at_end_of_file():
    with pytest.raises(GraphFileError, match=r"t\.c:13:1: .*found the end of the file"):
        import_c_text(TEMPLATE.rstrip().rstrip("}"), "t.c")
    with pytest.raises(GraphFileError, match="no APPEND_NODE or APPEND_CONST_NODE"):
        import_c_text("typedef uint8_t quint8;\n", "t.c")


def test_missing_file_is_a_graph_file_error(tmp_path):
    with pytest.raises(GraphFileError, match="cannot read"):
        import_c(tmp_path / "nope.c")


def test_trailing_comments_and_casts_everywhere():
    text = TEMPLATE.replace("{ 1, 2, 3, 4 }", "{ /* a */ 1, // b\n 2, 3, 4, }").replace(
        "APPEND_NODE(\"in\"", "APPEND_NODE(/* c */ \"in\" /* d */")
    g = import_c_text(text, "t.c")
    assert g.node(0x10).const.array.reshape(-1).tolist() == [1, 2, 3, 4]
    assert g.node(0x20).label == "in"


def test_non_finite_float_constants():
    text = ("static float x[] = { NAN, INFINITY, -INFINITY, 1.0f };\n"
            "void init_graph(int nn_id) {\n"
            "  APPEND_CONST_NODE(0x1, 1, 1, 1, 4, (const uint8_t *)x, 16);\n}\n")
    values = import_c_text(text, "t.c").node(1).const.array.reshape(-1)
    assert np.isnan(values[0]) and values[1] == np.inf and values[2] == -np.inf
    assert values[3] == 1.0


# The fast numpy path against an independent per-literal reference ---------------------------
def _literal(value: int, style: int) -> str:
    if style == 0 or value < 0:
        return str(value)
    if style == 1:
        return hex(value) + ("u" if value % 2 else "")
    return "0" + format(value, "o") if value else "0"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(0, 2)), min_size=1,
                max_size=40), st.booleans())
def test_int_arrays_read_like_c(items, comments):
    sep = ", /* x */ " if comments else ",\n"
    body = sep.join(_literal(v, s) for v, s in items)
    text = (f"static int32_t a[] = {{ {body} }};\nvoid init_graph(int nn_id) {{\n"
            f"  APPEND_CONST_NODE(0x1,1,1,1,{len(items)},(const uint8_t *)a,"
            f"{4 * len(items)});\n}}\n")
    got = import_c_text(text, "t.c").node(1).const.array.reshape(-1).tolist()
    assert got == [v for v, _ in items]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1,
                max_size=40), st.booleans())
def test_float_arrays_read_exactly(values, suffix):
    body = ",".join(repr(float(v)) + ("f" if suffix else "") for v in values)
    text = (f"static float a[] = {{ {body}, }};\nvoid init_graph(int nn_id) {{\n"
            f"  APPEND_CONST_NODE(0x1,1,1,1,{len(values)},(const uint8_t *)a,"
            f"{4 * len(values)});\n}}\n")
    got = import_c_text(text, "t.c").node(1).const.array.reshape(-1)
    assert got.tobytes() == np.array(values, np.float32).tobytes()


def test_fast_path_declines_what_it_cannot_read_exactly():
    assert fast_number_list("1, 2, 3,", False).tolist() == [1, 2, 3]
    assert fast_number_list("1, 010, 3", False) is None          # octal
    assert fast_number_list("0x10", False) is None               # hex
    assert fast_number_list("1.5f, 2", True).tolist() == [1.5, 2.0]
    assert fast_number_list("nan", True) is None                 # an identifier in C
    assert fast_number_list("1,,2", False) is None
    assert fast_number_list("0, 0.5, 10", True).tolist() == [0.0, 0.5, 10.0]
    assert fast_number_list("1e-05, 2E+07", True).tolist() == [1e-05, 2e07]   # not octal
    assert fast_number_list("-010", True) is None                # octal 8 in C


# Malformed and hostile files: a CSyntaxError at file:line:column, never a raw exception or a
# silently changed value ----------------------------------------------------------------------


def _assert_error_at(tmp_path: Path, text: str, offset: int, *messages: str) -> None:
    message = import_error(tmp_path, text)
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    assert message.startswith(f"{tmp_path / 'bad.c'}:{line}:{column}: "), message
    for part in messages:
        assert part in message, message


# (replaced, replacement, where the error must point, message parts)
EMPTY_ELEMENTS = [
    ("static quint8 data_for_op_10[] = { 1, 2, 3, 4 }",
     "static float data_for_op_10[] = { 1.5, , 2.5, 3.5 }", ", 2.5", ["found ','"]),
    ("{ 1, 2, 3, 4 }", "{ 1, , 3, 4 }", ", 3", ["found ','"]),
    ("{ 1, 2, 3, 4 }", "{ 1, -, 3, 4 }", ", 3", ["found ','"]),
    ("{ 1, 2, 3, 4 }", "{ 1, 2, 3, + }", "};", ["found '}'"]),
    ("{ 1, 2, 3, 4 }", "{ , 1, 2, 3 }", ", 1", ["found ','"]),
    ("{ 1, 2, 3, 4 }", "{ , }", ", }", ["found ','"]),
]


@pytest.mark.parametrize(("old", "new", "anchor", "messages"), EMPTY_ELEMENTS)
def test_empty_or_sign_only_array_elements_are_errors(tmp_path, old, new, anchor, messages):
    # numpy's fromstring reads an empty element as -1.0 (float) or 0, and a lone sign as 0.
    text = TEMPLATE.replace(old, new, 1).replace("data_for_op_10, 4)", "data_for_op_10, 16)"
                                                 if "float" in new else "data_for_op_10, 4)")
    start = text.index("data_for_op_10[]")
    _assert_error_at(tmp_path, text, text.index(anchor, start), *messages)


def test_fast_path_declines_empty_and_sign_only_elements():
    assert fast_number_list("1.5, , 2.5, 3.5", True) is None
    assert fast_number_list("1, , 3, 4", False) is None
    assert fast_number_list("1, -, 3, 4", False) is None
    assert fast_number_list("1, 2, +", False) is None
    assert fast_number_list(" , ", False) is None
    assert fast_number_list("1, 1e999", True) is None            # overflows: read it exactly
    assert fast_number_list("1.5f , 2. ,\n -.5 ,", True).tolist() == [1.5, 2.0, -0.5]


LONG = "9" * 5000
BAD_VALUES = [
    # (replaced, replacement, where the error must point, message parts)
    ("{ 1, 2, 3, 4 }", "{ 1, 2, 09, 4 }", "9, 4", ["invalid digit '9' in octal constant"]),
    ("{ 1, 2, 3, 4 }", f"{{ 1, 2, {LONG}, 4 }}", LONG, ["integer constant", "too large"]),
    ("APPEND_NODE(\"in\"", "APPEND_NODE(\"\\xg\"", "\\xg",
     ["\\x used with no following hex digits"]),
    ("APPEND_NODE(\"in\"", "APPEND_NODE(\"\\x141\"", "\\x141", ["out of range"]),
    ("APPEND_NODE(\"in\", 0x20", f"APPEND_NODE(\"in\", ({'9' * 400}/3)", "9999",
     ["integer constant", "too large"]),
    ("APPEND_NODE(\"in\", 0x20",
     "APPEND_NODE(\"in\", (0xFFFFFFFFFFFFFFFF * 0xFFFFFFFFFFFFFFFF / 3)", "* 0xFFFF",
     ["does not fit 64 bits"]),
    (".elementsize = 1 }", f".elementsize = 1, .stepsize = {'9' * 400} }}", "9999",
     ["integer constant", "too large"]),
]


@pytest.mark.parametrize(("old", "new", "anchor", "messages"), BAD_VALUES)
def test_bad_literals_are_syntax_errors(tmp_path, old, new, anchor, messages):
    text = TEMPLATE.replace(old, new, 1)
    _assert_error_at(tmp_path, text, text.index(anchor), *messages)


def test_integer_division_is_exact():
    # int(a / b) went through a double: 0x77FF...F / 2^31 became 0xF0000000, not 0xEFFFFFFF.
    text = TEMPLATE.replace("APPEND_NODE(\"in\", 0x20",
                            "APPEND_NODE(\"in\", (0x77FFFFFFFFFFFFFF / 0x80000000)", 1)
    assert 0xEFFFFFFF in import_c_text(text.replace(".src_id = 0x20", ".src_id = 0xEFFFFFFF"),
                                       "t.c")
    text = TEMPLATE.replace("static quint8 data_for_op_10[] = { 1, 2, 3, 4 }",
                            "static int32_t data_for_op_10[] = { -7 / 2, 7 / -2, -7 / -2, 7 / 2 }")
    text = text.replace("data_for_op_10, 4)", "data_for_op_10, 16)")
    values = import_c_text(text, "t.c").node(0x10).const.array.reshape(-1).tolist()
    assert values == [-3, -3, 3, 3]                 # C truncates toward zero


@pytest.mark.parametrize("opener", ["(", "+", "-", "(int)"])
def test_deep_nesting_is_a_syntax_error(tmp_path, opener):
    deep = opener * 5000 + "4" + (")" * 5000 if opener == "(" else "")
    text = TEMPLATE.replace("{ 1, 2, 3, 4 }", f"{{ 1, 2, 3, {deep} }}", 1)
    start = text.index(opener * 10)
    # The 64th level is refused: C compilers need only support 63 (C11 5.2.4.1).
    _assert_error_at(tmp_path, text, start + 63 * len(opener), "nested more than 63 levels")
    shallow = opener * 63 + "4" + (")" * 63 if opener == "(" else "")
    text = TEMPLATE.replace("static quint8 data_for_op_10[] = { 1, 2, 3, 4 }",
                            f"static int32_t data_for_op_10[] = {{ 1, 2, 3, {shallow} }}")
    text = text.replace("data_for_op_10, 4)", "data_for_op_10, 16)")
    assert abs(import_c_text(text, "t.c").node(0x10).const.array.reshape(-1)[3]) == 4


@pytest.mark.parametrize(("old", "new", "anchor", "messages"), [
    ("data_for_op_10[]", "data_for_op_10[100000000000]", "100000000000",
     ["array data_for_op_10", "2^28"]),
    ("data_for_op_10[]", "data_for_op_10[0x10000000]", "0x10000000", ["array data_for_op_10"]),
    ("data_for_op_10[]", "data_for_op_10[-1]", "-1", ["array data_for_op_10", "negative"]),
    ("inputs_for_30[]", "inputs_for_30[100000000]", "100000000",
     ["array inputs_for_30", "1 initialiser", "zero-filled"]),
    ("outputs_for_20[]", "outputs_for_20[2]", "2]",
     ["array outputs_for_20", "1 initialiser", "zero-filled"]),
])
def test_declared_array_sizes_are_bounded(tmp_path, old, new, anchor, messages):
    text = TEMPLATE.replace(old, new, 1)
    _assert_error_at(tmp_path, text, text.index(anchor), *messages)


def test_zero_filled_data_array_within_the_limit():
    text = TEMPLATE.replace("data_for_op_10[] = { 1, 2, 3, 4 }", "data_for_op_10[4] = { 1 }")
    assert import_c_text(text, "t.c").node(0x10).const.array.reshape(-1).tolist() == [
        1, 0, 0, 0]


@pytest.mark.parametrize(("old", "new", "anchor", "messages"), [
    (".output_idx = 0", ".output_idx = -1", "-1", ["node 0x30 input 0", ".output_idx", "-1"]),
    (".output_idx = 0", ".output_idx = 0x100000000", "0x100000000",
     ["node 0x30 input 0", ".output_idx", "uint32"]),
    (".src_id = 0x20", ".src_id = -0x20", "-0x20", ["node 0x30 input 0", ".src_id", "-32"]),
    (".src_id = 0x20", ".src_id = 0x100000020", "0x100000020",
     ["node 0x30 input 0", ".src_id", "uint32"]),
    (".elementsize = 1 }", ".elementsize = -1 }", "-1 }",
     ["node 0x20 output 0", ".elementsize", "-1"]),
    (".elementsize = 1 }", ".elementsize = 0x100000001 }", "0x100000001",
     ["node 0x20 output 0", ".elementsize", "uint32"]),
    ("{ .rank = 4, .max_sizes = { 1, 1, 1, 4 }, .elementsize = 1 }",
     "OUTPUT_4D(1, 1, 1, 4, -1)", "OUTPUT_4D", ["node 0x20 output 0", ".elementsize", "-1"]),
])
def test_port_fields_are_uint32(tmp_path, old, new, anchor, messages):
    text = TEMPLATE.replace(old, new, 1)
    _assert_error_at(tmp_path, text, text.index(anchor), *messages)


@pytest.mark.parametrize(("old", "new", "anchor", "messages"), [
    ("(const uint8_t *)data_for_op_10, 4", "(const uint8_t *)&data_for_op_10[2], 2", "2]",
     ["&data_for_op_10[2]", "not supported"]),
    ("{ 1, 2, 3, 4 }", "{ 1, 2, 3, &4 }", "&4", ["address"]),
    ("static quint8 data_for_op_10[] = { 1, 2, 3, 4 }",
     "static float data_for_op_10[] = { 1, 2, 3, 1e999 }", "1e999", ["1e999", "overflows"]),
    ("static quint8 data_for_op_10[] = { 1, 2, 3, 4 }",
     "static float data_for_op_10[] = { 1, 2, 3, (float)-1e999 }", "1e999",
     ["1e999", "overflows"]),
    ("static quint8 data_for_op_10[] = { 1, 2, 3, 4 }",
     "static float data_for_op_10[] = { 1, 2, 3, 1e300 * 1e300 }", "* 1e300", ["overflows"]),
    (".elementsize = 1 }", ".elementsize = 1, .stepsize = 1e39 }", "1e39",
     ["node 0x20 output 0", ".stepsize", "overflows float32"]),
])
def test_addresses_and_float_overflow(tmp_path, old, new, anchor, messages):
    text = TEMPLATE.replace(old, new, 1)
    if "float data" in new:
        text = text.replace("data_for_op_10, 4)", "data_for_op_10, 16)")
    _assert_error_at(tmp_path, text, text.index(anchor), *messages)


def test_float32_overflow_messages_agree():
    # 1e39 (finite as a double) and 1e999 (infinite as a double) are both refused.
    for literal in ("1e39", "1e999"):
        text = TEMPLATE.replace("static quint8 data_for_op_10[] = { 1, 2, 3, 4 }",
                                f"static float data_for_op_10[] = {{ 1, 2, 3, {literal} }}")
        with pytest.raises(CSyntaxError, match="overflows float32"):
            import_c_text(text.replace("data_for_op_10, 4)", "data_for_op_10, 16)"), "t.c")


def test_whole_array_address_is_the_array():
    for form in ("&data_for_op_10[0]", "&data_for_op_10"):
        text = TEMPLATE.replace("(const uint8_t *)data_for_op_10", f"(const uint8_t *){form}")
        assert import_c_text(text, "t.c").node(0x10).const.array.reshape(-1).tolist() == [
            1, 2, 3, 4]
