"""C import of data array values off the well-trodden path: values the numpy fast path cannot
read (parentheses, signs on expressions, casts, macros), read token by token with each value
checked where it stands, and long white space that the fast path must read as C does."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.io.c_import import import_c_text
from hexscope.engine.io.c_lexer import CSyntaxError
from hexscope.engine.io.c_literals import fast_number_list

SIZES = {"uint8_t": 1, "int8_t": 1, "uint16_t": 2, "int16_t": 2, "int32_t": 4, "float": 4}


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


# long white space in the fast path ----------------------------------------------------------
RUN = " \t\r\n" * 5000        # 20,000 characters


def test_c_array_values_fast_path_reads_long_white_space_before_commas():
    assert fast_number_list(f"1{RUN}, -2{RUN},{RUN}3{RUN},{RUN}", False).tolist() == [1, -2, 3]
    assert fast_number_list(f"1.{RUN}, 2.5f{RUN}, -3e2{RUN},", True).tolist() == [1, 2.5, -300]
    assert fast_number_list(f"{RUN}7{RUN}", False).tolist() == [7]
    # single spaces before commas next to long runs, each run read back to its own element
    assert fast_number_list(f"1, 2 ,{RUN}3 ,4{RUN},5", False).tolist() == [1, 2, 3, 4, 5]


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
