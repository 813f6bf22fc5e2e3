"""Import hexagon_nn graph-init C files (graph spec §3) into a :class:`Graph`.

Reads the constructs of §3.2/§3.3: typedefs, ``#define``s, ``static`` const data arrays,
``hexagon_nn_input``/``hexagon_nn_output`` arrays (designated or positional initialisers,
``OUTPUT_4D``), and the ``APPEND_CONST_NODE``/``APPEND_NODE`` calls in both forms (with or
without a leading node-name string; the name becomes the node's label). Direct
``hexagon_nn_append_node``/``hexagon_nn_append_const_node`` calls are read too. Anything else
raises :class:`CSyntaxError` (a GraphFileError) with ``file:line:column``; the graph is built
aside and returned only when the whole file was understood.

>>> g = import_c("graphinit_med.c")
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import GraphFileError
from hexscope.engine.graph import Graph
from hexscope.engine.io.c_expr import Arg, ExpressionReader, show
from hexscope.engine.io.c_lexer import CSyntaxError, Lexer, Source, Token, describe
from hexscope.engine.io.c_literals import fast_number_list

# C element types of const arrays -> hexagon_nn element types (graph spec §3.2 item 4).
SCALAR_TYPES: dict[str, DType] = {
    "uint8_t": DType.QUINT8, "unsigned char": DType.QUINT8, "quint8": DType.QUINT8,
    "uint8": DType.QUINT8, "int8_t": DType.INT8, "signed char": DType.INT8, "char": DType.INT8,
    "qint8": DType.INT8, "int8": DType.INT8,
    "uint16_t": DType.QUINT16, "unsigned short": DType.QUINT16, "quint16": DType.QUINT16,
    "int16_t": DType.QINT16, "short": DType.QINT16, "qint16": DType.QINT16,
    "int32_t": DType.INT32, "int": DType.INT32, "int32": DType.INT32, "qint32": DType.INT32,
    "signed int": DType.INT32, "float": DType.FLOAT32, "float32": DType.FLOAT32,
}
_QUALIFIERS = {"static", "const", "volatile", "extern", "register", "inline"}
_TYPE_WORDS = {"const", "volatile", "unsigned", "signed", "char", "short", "int", "long",
               "float", "double", "void", "struct", "_Bool"}
STRUCTS = {"hexagon_nn_input": ("src_id", "output_idx"),
           "hexagon_nn_output": ("rank", "max_sizes", "elementsize", "zero_offset", "stepsize")}
APPEND_CONST = ("APPEND_CONST_NODE", "hexagon_nn_append_const_node")
APPEND_NODE = ("APPEND_NODE", "hexagon_nn_append_node")
MAX_RANK = 8
MAX_CONST_ELEMENTS = 1 << 28    # hexagon_nn's const ctor refuses b*h*w*d >= 2^28 (spec §2.4)


@dataclass
class Array:
    name: str
    pos: int
    kind: str                      # "data", "hexagon_nn_input" or "hexagon_nn_output"
    dtype: DType | None = None
    data: np.ndarray | None = None
    items: list[dict[str, object]] | None = None
    used: bool = False

    def __len__(self) -> int:
        return int(self.data.size) if self.data is not None else len(self.items or ())


def import_c(path: str | PathLike[str], warnings: list[str] | None = None) -> Graph:
    """Read a graph-init C file. Problems raise GraphFileError naming file:line:column.

    ``warnings`` (if given) receives notes that do not stop the import (unused arrays).
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise GraphFileError(f"{name}: cannot read: {exc.strerror or exc}") from None
    _check_is_text(name, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return import_c_text(text, name, warnings)


#: Control bytes that never appear in C source (tab, newlines, form feed and vertical tab do).
_BINARY = bytes(b for b in range(32) if b not in b"\t\n\r\f\v")


def _check_is_text(name: str, data: bytes) -> None:
    """A binary file (a .hexgraph, which is a zip, a compiled object) is said to be one,
    instead of the lexer's "1:1: unexpected character" on its first byte."""
    head = data[:4096]
    at = next((i for i, b in enumerate(head) if b in _BINARY), None)
    if at is None:
        return
    what = " (a zip archive, such as a .hexgraph file)" \
        if head.startswith(b"PK\x03\x04") else ""
    raise GraphFileError(f"{name}: not a hexagon_nn graph-init C file: it holds binary data "
                         f"(byte 0x{head[at]:02x} at offset {at}){what}")


def import_c_text(text: str, name: str = "<text>", warnings: list[str] | None = None) -> Graph:
    """Like :func:`import_c`, from the text of a file."""
    parser = _Parser(Source.from_text(name, text))
    graph = parser.parse()
    if warnings is not None:
        warnings.extend(parser.warnings)
    return graph


class _Parser(ExpressionReader):
    append_macros = APPEND_NODE

    def __init__(self, src: Source) -> None:
        self.src = src
        self.lx = Lexer(src)
        self.typedefs: dict[str, str | None] = {}
        self.arrays: dict[str, Array] = {}
        self.graph = Graph()
        self.calls = 0
        self.warnings: list[str] = []

    def parse(self) -> Graph:
        lx = self.lx
        while (tok := lx.peek()).kind != "eof":
            if tok.text == ";":
                lx.next()
            elif tok.text == "typedef":
                self.typedef()
            elif tok.text in APPEND_NODE + APPEND_CONST:
                raise lx.error(tok, f"{tok.text} outside a function")
            else:
                self.declaration()
        if self.calls == 0:
            raise lx.error(len(self.src.text), "no APPEND_NODE or APPEND_CONST_NODE calls: "
                           "not a graph-init file (graph spec §3.2)")
        for array in self.arrays.values():
            if not array.used:
                self.warnings.append(f"{self.src.where(array.pos)}: array {array.name} is "
                                     "never used")
        return self.graph

    # types ----------------------------------------------------------------------------------
    def type_words(self) -> tuple[list[Token], bool]:
        """Specifier and declarator names up to a '(', '[', '=', ';' or ','; attributes
        skipped. Returns the names and whether a '*' was seen (a pointer)."""
        lx, words, pointer = self.lx, [], False
        while True:
            tok = lx.peek()
            if tok.text in ("__attribute__", "__attribute", "__declspec"):
                lx.next()
                self.skip_parens()
            elif tok.kind == "id":
                words.append(lx.next())
            elif tok.text == "*":
                lx.next()
                pointer = True
            else:
                return words, pointer

    def skip_parens(self) -> None:
        lx = self.lx
        lx.expect("(")
        depth = 1
        while depth:
            tok = lx.next()
            if tok.kind == "eof":
                raise lx.error(tok, "unbalanced parentheses")
            depth += {"(": 1, ")": -1}.get(tok.text, 0) if tok.kind == "punct" else 0

    def resolve(self, words: list[str]) -> str | None:
        """The C type a list of specifier words names, through the file's typedefs."""
        base = " ".join(w for w in words if w not in _QUALIFIERS or w == "signed")
        base = {"signed": "int", "signed int": "int"}.get(base, base)
        seen = set()
        while base in self.typedefs and base not in seen:
            seen.add(base)
            target = self.typedefs[base]
            if target is None:
                return None
            base = target
        return base if base in SCALAR_TYPES or base in STRUCTS else None

    def typedef(self) -> None:
        lx = self.lx
        start = lx.next()
        if lx.peek().text == "struct" or lx.peek().text == "union" or lx.peek().text == "enum":
            self.skip_statement()
            return
        words, pointer = self.type_words()
        if lx.peek().text != ";" or len(words) < 2:
            self.skip_statement()
            if words:
                self.typedefs[words[-1].text] = None
            return
        lx.next()
        new = words[-1].text
        self.typedefs[new] = None if pointer else self.resolve([w.text for w in words[:-1]])
        if self.typedefs[new] is None and not pointer:
            self.warnings.append(f"{self.src.where(start.pos)}: typedef {new} names no "
                                 "hexagon_nn element type; arrays of it cannot be read")

    def skip_statement(self) -> None:
        lx, depth = self.lx, 0
        while True:
            tok = lx.next()
            if tok.kind == "eof":
                raise lx.error(tok, "missing ';'")
            if tok.kind == "punct":
                depth += {"{": 1, "(": 1, "}": -1, ")": -1}.get(tok.text, 0)
                if tok.text == ";" and depth == 0:
                    return

    # declarations ---------------------------------------------------------------------------
    def declaration(self) -> None:
        lx = self.lx
        first = lx.peek()
        words, _ = self.type_words()
        if not words:
            raise lx.error(first, f"unexpected {describe(first)} at file level")
        name = words[-1]
        nxt = lx.peek()
        if nxt.text == "(":
            self.skip_parens()
            self.type_words()
            if lx.accept(";"):
                return                      # a prototype, e.g. info_for_debug(...)
            self.function_body(name)
        elif nxt.text == "[":
            self.array(name, [w.text for w in words[:-1]])
        elif nxt.text == ";" and len(words) > 1:
            lx.next()                       # a plain declaration without initialiser
        else:
            raise lx.error(nxt if len(words) > 1 else first,
                           f"unexpected {describe(nxt if len(words) > 1 else first)}: only "
                           "arrays, typedefs, macros and the init function are understood")

    def array(self, name: Token, type_words: list[str]) -> None:
        lx = self.lx
        if name.text in self.arrays:
            raise lx.error(name, f"array {name.text} is defined twice")
        lx.expect("[")
        size = None if lx.peek().text == "]" else self.int_expr("array size")
        lx.expect("]")
        self.type_words()                    # ALIGNED and other attributes
        ctype = self.resolve(type_words)
        if ctype is None:
            raise lx.error(name, f"array {name.text} has type '{' '.join(type_words)}', which "
                           "is not a hexagon_nn element type or input/output struct")
        if size is not None:
            self.check_size(name, size, ctype)
        lx.expect("=")
        lx.expect("{")
        if ctype in STRUCTS:
            items = self.struct_items(ctype)
            array = Array(name.text, name.pos, ctype, items=items)
        else:
            dtype = SCALAR_TYPES[ctype]
            array = Array(name.text, name.pos, "data", dtype, self.data_items(dtype, name))
        if size is not None:
            self.apply_size(array, size, name)
        lx.expect(";")
        self.arrays[name.text] = array

    def check_size(self, name: Token, size: Arg, ctype: str) -> None:
        """Refuse a declared size before anything is allocated for it. A data array may be
        zero-filled up to what a hexagon_nn const can hold: fewer than 2^28 elements (the
        const ctor refuses more, graph spec §2.4), so no larger array can be a const's data."""
        n = int(size.value)  # type: ignore[call-overload]
        if n < 0:
            raise self.lx.error(size.pos, f"array {name.text} is declared with a negative "
                                f"size ({n})")
        if ctype not in STRUCTS and n >= MAX_CONST_ELEMENTS:
            raise self.lx.error(size.pos, f"array {name.text} is declared with {n} elements; "
                                "a hexagon_nn const holds fewer than 2^28 (graph spec §2.4)")

    def apply_size(self, array: Array, size: Arg, name: Token) -> None:
        """Zero-fill a data array to its declared size, as C does. Input/output arrays are
        not zero-filled: hexagon_nn files size them by their initialisers (``[]``, graph
        spec §3.2), a zero hexagon_nn_input names node 0, which append_node refuses (§2.3),
        and a zero hexagon_nn_output declares a rank-0 tensor of 0-byte elements."""
        n = int(size.value)  # type: ignore[call-overload]
        if len(array) > n:
            raise self.lx.error(size.pos, f"array {name.text} has {len(array)} values but is "
                                f"declared with {n}")
        if array.data is not None and n > array.data.size:
            data = np.zeros(n, array.data.dtype)    # untouched pages stay unallocated
            data[:array.data.size] = array.data
            array.data = data
        elif array.items is not None and n > len(array.items):
            count = len(array.items)
            raise self.lx.error(size.pos, f"array {name.text} is declared with {n} entries but "
                                f"has {count} initialiser{'s' if count != 1 else ''}: "
                                f"zero-filled {array.kind} entries are not supported")

    def data_items(self, dtype: DType, name: Token) -> np.ndarray:
        lx = self.lx
        is_float = dtype is DType.FLOAT32
        start = lx.raw_pos
        if start is not None:
            text = lx.src.text
            end = text.find("}", start)
            if end >= 0:
                values = fast_number_list(text[start:end], is_float)
                if values is not None:
                    try:
                        converted = _convert(values, dtype, ValueError)
                    except ValueError:
                        pass        # read it again token by token, to point at the value
                    else:
                        lx.seek(end + 1)
                        return converted
        # Each value is checked as it is read, so an error points at it; plain comparisons,
        # as a one-element numpy conversion per value was most of this loop's time.
        lo, hi = _int_range(dtype)
        values: list[int | float] = []
        while not lx.accept("}"):
            arg = self.expr()
            value = arg.value
            if not isinstance(value, int | float) or (not is_float and isinstance(value, float)):
                raise lx.error(arg.pos, f"array {name.text}: expected "
                               f"{'a number' if is_float else 'an integer'}, found {show(value)}")
            if is_float:
                if abs(value) >= _FLOAT32_OVERFLOW and math.isfinite(value):
                    raise lx.error(arg.pos, _overflow_message(float(value)))
            elif not lo <= value <= hi:
                raise lx.error(arg.pos, _range_message(value, dtype))
            values.append(value)
            if not lx.accept(","):
                lx.expect("}")
                break
        # Every value fits, so int64 holds them all and this conversion cannot fail.
        array = np.array(values, np.float64 if is_float else np.int64)
        return _convert(array, dtype, lambda m: lx.error(name, m))

    def struct_items(self, struct: str) -> list[dict[str, object]]:
        lx, items = self.lx, []
        while not lx.accept("}"):
            tok = lx.peek()
            if tok.text == "OUTPUT_4D" and struct == "hexagon_nn_output":
                lx.next()
                args = self.call_args()
                if len(args) != 5:
                    raise lx.error(tok, f"OUTPUT_4D takes 5 arguments (B,H,W,D,ES), got "
                                   f"{len(args)}")
                dims = [self.as_int(a, "OUTPUT_4D size") for a in args]
                items.append({"rank": 4, "max_sizes": dims[:4], "elementsize": dims[4],
                              "_pos": tok.pos})
            else:
                items.append(self.struct_init(struct))
            if not lx.accept(","):
                lx.expect("}")
                break
        return items

    def struct_init(self, struct: str) -> dict[str, object]:
        lx, fields = self.lx, STRUCTS[struct]
        start = lx.expect("{")
        values: dict[str, object] = {"_pos": start.pos}
        k = 0
        while not lx.accept("}"):
            where = lx.peek()
            if lx.accept("."):
                field_tok = where = lx.ident()
                if field_tok.text not in fields:
                    hint = (" (the old-style output struct with max_size is obsolete, graph "
                            "spec §2.3)" if field_tok.text in ("max_size", "unused") else "")
                    raise lx.error(field_tok, f"{struct} has no field .{field_tok.text}; "
                                   f"fields are {', '.join(fields)}{hint}")
                lx.expect("=")
                k = fields.index(field_tok.text)
            elif k >= len(fields):
                raise lx.error(lx.peek(), f"too many values for {struct}")
            field = fields[k]
            if field in values:
                raise lx.error(where, f".{field} given twice")
            values[field] = self.size_list() if field == "max_sizes" else self.expr()
            k += 1
            if not lx.accept(","):
                lx.expect("}")
                break
        return values

    def size_list(self) -> list[int]:
        lx = self.lx
        start = lx.expect("{")
        sizes: list[int] = []
        while not lx.accept("}"):
            sizes.append(self.as_int(self.expr(), "max_sizes entry"))
            if not lx.accept(","):
                lx.expect("}")
                break
        if len(sizes) > MAX_RANK:
            raise lx.error(start, f"max_sizes holds at most {MAX_RANK} values, got {len(sizes)}")
        return sizes

    def is_type_name(self, word: str) -> bool:
        return (word in _TYPE_WORDS or word in SCALAR_TYPES or word in self.typedefs
                or word in STRUCTS)

    # the init function ----------------------------------------------------------------------
    def function_body(self, name: Token) -> None:
        from hexscope.engine.io.c_append import append_call

        lx = self.lx
        lx.expect("{")
        while not lx.accept("}"):
            tok = lx.next()
            if tok.text == ";":
                continue
            if tok.kind == "id" and tok.text in APPEND_NODE + APPEND_CONST:
                args = self.call_args()
                append_call(self, tok, args)
                self.calls += 1
                lx.expect(";")
                continue
            raise lx.error(tok, f"{name.text}(): only APPEND_NODE and APPEND_CONST_NODE "
                           f"statements are understood, found {describe(tok)}")


# The smallest double that rounds to infinity as a float32: FLT_MAX plus half its ulp, where
# round-half-to-even goes up (FLT_MAX's mantissa is odd).
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103


def _int_range(dtype: DType) -> tuple[int, int]:
    """The values C stores faithfully in an integer element: signed or unsigned, either."""
    bits = dtype.numpy.itemsize * 8
    return -(1 << (bits - 1)), (1 << bits) - 1


def _overflow_message(bad: float) -> str:
    return f"value {bad!r} overflows float32"


def _range_message(bad: int | float, dtype: DType) -> str:
    lo, hi = _int_range(dtype)
    return f"value {bad} does not fit {dtype.c_name} ({lo}..{hi})"


def _convert(values: np.ndarray, dtype: DType,
             error: Callable[[str], Exception]) -> np.ndarray:
    """Values (float64 or int64) to the array's element type with C's conversions, refusing
    what C would not store faithfully (out-of-range integers, float overflow)."""
    if dtype is DType.FLOAT32:
        finite = np.isfinite(values)
        with np.errstate(over="ignore"):
            out = values.astype(np.float32)
        overflow = finite & ~np.isfinite(out)
        if overflow.any():
            raise error(_overflow_message(float(values[overflow][0])))
        return out
    np_type = dtype.numpy
    lo, hi = _int_range(dtype)
    if values.size:
        vmin, vmax = int(values.min()), int(values.max())
        if vmin < lo or vmax > hi:
            raise error(_range_message(vmin if vmin < lo else vmax, dtype))
    mask = (1 << (np_type.itemsize * 8)) - 1
    return (values.astype(np.int64) & mask).astype(f"u{np_type.itemsize}").view(np_type)


__all__ = ["CSyntaxError", "SCALAR_TYPES", "import_c", "import_c_text"]
