"""The C importer's lexer: number literals (suffixes checked as gcc checks them) and object-like
macro expansion (C's rule that a macro is not re-expanded inside its own expansion, and a
budget that refuses exponential expansions at once instead of parsing them for minutes)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine.io import c_lexer
from hexscope.engine.io.c_import import import_c_text
from hexscope.engine.io.c_lexer import CSyntaxError
from hexscope.engine.io.c_literals import fast_number_list
from support.c_errors import import_error

GCC = shutil.which("gcc")

TEMPLATE = """\
{defines}
static {ctype} data_for_op_10[] = {{ {values} }};
static hexagon_nn_output outputs_for_20[] = {{
  {{ .rank = 4, .max_sizes = {{ 1, 1, 1, 4 }}, .elementsize = 1 }},
}};
static hexagon_nn_input inputs_for_30[] = {{ {{ .src_id = 0x20, .output_idx = 0 }} }};
void init_graph(int nn_id) {{
  APPEND_CONST_NODE(0x10, 1, 1, 1, {count}, (const uint8_t *)data_for_op_10, {size});
  APPEND_NODE("in", 0x20, OP_INPUT, NN_PAD_NA, NULL, 0, outputs_for_20, 1);
  APPEND_NODE("out", 0x30, OP_OUTPUT, NN_PAD_NA, inputs_for_30, 1, NULL, 0);
}}
"""


def graph_file(values: list[str], ctype: str = "int32_t", defines: str = "",
               count: int | None = None) -> str:
    """A graph-init file whose const node 0x10 holds ``values`` (C expressions; ``count``
    elements when they are not one each)."""
    count = len(values) if count is None else count
    return TEMPLATE.format(defines=defines, ctype=ctype, values=", ".join(values),
                           count=count, size=(1 if ctype == "uint8_t" else 4) * count)


def const_values(text: str) -> list[float]:
    return import_c_text(text, "t.c").node(0x10).const.array.reshape(-1).tolist()




def where(tmp_path: Path, text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return f"{tmp_path / 'bad.c'}:{line}:{column}: "


# number literals ---------------------------------------------------------------------------
ACCEPTED = [
    # (C type of the array, literal, value)
    ("float", "1.f", 1.0), ("float", "1.0f", 1.0), ("float", "1e3f", 1000.0),
    ("float", "0x1p3f", 8.0), ("float", "0x1P-3F", 0.125), ("float", "0x.8p1", 1.0),
    ("float", "0x1.8p1", 3.0), ("float", ".5f", 0.5), ("float", "1.e5", 1e5),
    ("float", "1.0L", 1.0), ("float", "1e-5F", np.float32(1e-5)), ("float", "09.5", 9.5),
    ("float", "1", 1.0), ("int32_t", "1u", 1), ("int32_t", "1U", 1), ("int32_t", "7l", 7),
    ("int32_t", "7L", 7), ("int32_t", "7ll", 7), ("int32_t", "7LL", 7), ("int32_t", "7ul", 7),
    ("int32_t", "7lu", 7), ("int32_t", "7uLL", 7), ("int32_t", "7llU", 7),
    ("int32_t", "0x1fu", 31), ("int32_t", "0x1Ful", 31), ("int32_t", "017L", 15),
    ("int32_t", "0x10000f", 0x10000F), ("int32_t", "0b101", 5), ("int32_t", "0B11u", 3),
]

REFUSED = [
    # (C type of the array, literal, where in the literal the error points, message)
    ("float", "1f", 1, "invalid suffix 'f' on integer constant 1f"),
    ("float", "12F", 2, "invalid suffix 'F' on integer constant 12F"),
    ("int32_t", "1f", 1, "invalid suffix 'f' on integer constant 1f"),
    ("int32_t", "0x10u1", 4, "invalid suffix 'u1' on integer constant 0x10u1"),
    ("int32_t", "1lL", 1, "invalid suffix 'lL' on integer constant"),
    ("int32_t", "1uu", 1, "invalid suffix 'uu' on integer constant"),
    ("int32_t", "1lul", 1, "invalid suffix 'lul' on integer constant"),
    ("int32_t", "1lll", 1, "invalid suffix 'lll' on integer constant"),
    ("int32_t", "1x", 1, "invalid suffix 'x' on integer constant"),
    ("int32_t", "0x", 1, "invalid suffix 'x' on integer constant"),
    ("int32_t", "0xe+5", 3, "invalid suffix '+5' on integer constant"),
    ("float", "1.0u", 3, "invalid suffix 'u' on floating constant 1.0u"),
    ("float", "1.0ff", 3, "invalid suffix 'ff' on floating constant"),
    ("float", "1.0lf", 3, "invalid suffix 'lf' on floating constant"),
    ("float", "1e5u", 3, "invalid suffix 'u' on floating constant"),
    ("float", "1.5.3", 3, "too many decimal points in 1.5.3"),
    ("float", "1e", 1, "exponent has no digits in 1e"),
    ("float", "1e+", 1, "exponent has no digits in 1e+"),
    ("float", "0x1p", 3, "exponent has no digits in 0x1p"),
    ("float", "0x1.5", 3, "hexadecimal floating constant 0x1.5 has no exponent"),
    ("float", "0x1p99999", 0, "floating constant 0x1p99999 overflows float32"),
    ("int32_t", "09", 1, "invalid digit '9' in octal constant"),
]


def _literal_file(ctype: str, literal: str, form: str) -> str:
    """``literal`` as the last value of the const: alone (read by the numpy fast path when it
    can), in parentheses (read token by token) or through a macro."""
    if form == "macro":
        return graph_file(["1", "2", "3", "LIT"], ctype, f"#define LIT {literal}")
    return graph_file(["1", "2", "3", literal if form == "plain" else f"({literal})"], ctype)


@pytest.mark.parametrize("form", ["plain", "parenthesised", "macro"])
@pytest.mark.parametrize(("ctype", "literal", "value"), ACCEPTED)
def test_c_lexer_accepts_literals_gcc_accepts(ctype, literal, value, form):
    assert const_values(_literal_file(ctype, literal, form))[3] == value


@pytest.mark.parametrize("form", ["plain", "parenthesised", "macro"])
@pytest.mark.parametrize(("ctype", "literal", "offset", "message"), REFUSED)
def test_c_lexer_refuses_literals_gcc_refuses(tmp_path, ctype, literal, offset, message, form):
    text = _literal_file(ctype, literal, form)
    if form == "macro":         # the error is at the use: the literal is not where it is read
        at = text.index("LIT }")
    else:
        at = text.index(literal, text.index("data_for_op_10[]")) + offset
    error = import_error(tmp_path, text)
    assert error.startswith(where(tmp_path, text, at)), error
    assert message in error, error


def test_c_lexer_fast_path_strips_f_only_from_floats():
    assert fast_number_list("1.f, 1e3f, -1e-5F, .5f, 2.5F ,", True).tolist() == [
        1.0, 1000.0, -1e-5, 0.5, 2.5]
    assert fast_number_list("1.5, 1f", True) is None        # declined: read token by token
    assert fast_number_list("-12F", True) is None
    assert fast_number_list("1e-5f, 3f", True) is None
    assert fast_number_list("1.0ff", True) is None
    assert fast_number_list("f", True) is None
    assert fast_number_list("1.5f", False) is None           # no f in an integer array


@pytest.mark.skipif(GCC is None, reason="gcc is not installed")
def test_c_lexer_literal_verdicts_match_gcc(tmp_path):
    lines = [f"double x{k} = {literal};" for k, (_, literal, _) in enumerate(ACCEPTED)]
    accepted = tmp_path / "accepted.c"
    accepted.write_text("\n".join(lines) + "\n")
    assert subprocess.run([GCC, "-fsyntax-only", str(accepted)], capture_output=True,
                          text=True).returncode == 0
    for _, literal, _, _ in REFUSED:
        refused = tmp_path / "refused.c"
        refused.write_text(f"double x = {literal};\n")
        result = subprocess.run([GCC, "-fsyntax-only", "-Werror", str(refused)],
                                capture_output=True, text=True)
        assert result.returncode != 0, literal


# macro expansion ---------------------------------------------------------------------------
def _doubling(levels: int) -> str:
    """``A<levels>`` expands to 2^(levels+1) ones: the classic exponential macro file."""
    return "#define A0 1,1\n" + "".join(f"#define A{k} A{k - 1},A{k - 1}\n"
                                        for k in range(1, levels + 1))


def test_c_lexer_refuses_an_exponential_macro_expansion(tmp_path):
    # Over 6 million tokens for 2 million values: a minute to read before it was refused.
    text = graph_file(["A20"], "uint8_t", _doubling(20), 1 << 21)
    error = import_error(tmp_path, text)
    assert error.startswith(where(tmp_path, text, text.index("A20 }"))), error
    assert "expansion of macro A20 is too large" in error, error


def test_c_lexer_macro_budget_is_per_file(tmp_path, monkeypatch):
    monkeypatch.setattr(c_lexer, "MAX_MACRO_TOKENS", 100)
    # A3 produces 45 tokens: its 3, twice A2's 3, four times A1's 3 and eight times A0's
    # "1,1". Two uses fit in 100, the third does not.
    assert const_values(graph_file(["A3"] * 2, "uint8_t", _doubling(3), 32)) == [1] * 32
    text = graph_file(["A3"] * 3, "uint8_t", _doubling(3), 48)
    error = import_error(tmp_path, text)
    assert error.startswith(where(tmp_path, text, text.index("A3 }"))), error
    assert "more than 100 tokens" in error, error


def test_c_lexer_moderate_macro_use_imports():
    defines = (_doubling(5) + "#define ALIGNED __attribute__((aligned(128)))\n"
               "#define SCALE 3\n#define ROW SCALE, SCALE * 2, (SCALE)\n")
    text = graph_file(["A5", "ROW", "-SCALE"], "int32_t", defines, count=68)
    text = text.replace("data_for_op_10[]", "data_for_op_10[] ALIGNED")
    assert const_values(text) == [1] * 64 + [3, 6, 3, -3]


def test_c_lexer_long_macro_chain_imports():
    defines = "#define M0 5\n" + "".join(f"#define M{k} M{k - 1}\n" for k in range(1, 5000))
    assert const_values(graph_file(["M4999"], "int32_t", defines)) == [5]


def test_c_lexer_self_reference_is_not_expanded_again():
    # C: a macro's own name inside its expansion stays a name (it used to be dropped).
    text = graph_file(["1"]).replace("void init_graph",
                                     "#define data_for_op_10 data_for_op_10\nvoid init_graph")
    assert const_values(text) == [1]


@pytest.mark.parametrize(("defines", "use"), [
    ("#define X 4 X", "X"),
    ("#define X Y\n#define Y X", "X"),            # this one never finished before
    ("#define X (Y + 1)\n#define Y (X * 2)", "X"),
])
def test_c_lexer_recursive_macros_end_at_the_painted_name(tmp_path, defines, use):
    text = graph_file(["1", use], "int32_t", defines)
    error = import_error(tmp_path, text)
    assert error.startswith(where(tmp_path, text, text.index(f"{use} }}"))), error
    assert "X" in error, error


def _tokens(text: str) -> list[tuple[str, str, int]]:
    lx = c_lexer.Lexer(c_lexer.Source.from_text("t.c", text))
    out = [lx.next()]
    while out[-1].kind != "eof":
        out.append(lx.next())
    return [(t.kind, t.text, t.pos) for t in out]


def test_c_lexer_tokens_keep_their_positions_after_white_space():
    text = " \t\fa\\\n  1.5f\v\r\n,'c' \"s\" ...\n\n"
    assert _tokens(text) == [("id", "a", 3), ("num", "1.5f", 8), ("punct", ",", 15),
                             ("chr", "'c'", 16), ("str", '"s"', 20), ("punct", "...", 24),
                             ("eof", "", len(text))]
    assert _tokens("") == [("eof", "", 0)]
    assert _tokens(" \n\\\n ") == [("eof", "", 5)]


def test_c_lexer_only_a_lone_hash_at_a_line_start_is_a_directive():
    text = "##\n  #define X 2\n \t## X # X\n#undef X\nX"
    assert _tokens(text) == [("punct", "##", 0), ("punct", "##", 19), ("num", "2", 22),
                             ("punct", "#", 24), ("num", "2", 26), ("id", "X", 37),
                             ("eof", "", 38)]


def test_c_lexer_unexpected_character_after_long_white_space(tmp_path):
    run = " \t\\\n" * 25_000
    with pytest.raises(CSyntaxError, match=r"^t\.c:25001:3: unexpected character '@'$"):
        _tokens(f"a{run}  @")
    text = graph_file(["1", "X"], "int32_t", f"#define X 2{run} @ 3")
    error = import_error(tmp_path, text)
    assert error.startswith(where(tmp_path, text, text.index("@"))), error
    assert error.endswith("unexpected character '@'"), error


def test_c_lexer_define_bodies_end_at_their_line():
    defines = "#define X 1 \\\n  + 2 \t\n#define Y\t(X)  \n#define EMPTY   \n"
    assert const_values(graph_file(["X", "Y EMPTY", "EMPTY 4"], "int32_t", defines)) == [
        3, 3, 4]


@pytest.mark.parametrize(("value", "offset", "message"), [
    ("\u0661\u0662", 0, "unexpected character"),
    ("\uff11", 0, "unexpected character"),
    ("1\u0662", 1, "invalid suffix"),
])
def test_c_lexer_refuses_digits_of_other_scripts(tmp_path, value, offset, message):
    """C's digits are 0-9 only: Arabic-Indic or full-width digits are not numbers (they had
    imported as 12 through Python's int())."""
    text = graph_file(["1", "2", "3", value])
    error = import_error(tmp_path, text)
    assert error.startswith(where(tmp_path, text, text.index(value) + offset)), error
    assert message in error, error
