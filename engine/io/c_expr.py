"""Constant expressions of graph-init C files: numbers, strings, names, casts, unary minus,
``&array`` and + - * / with C's integer division (graph spec §3.3).

Integers are exact but kept within 64 bits and floats finite: a value beyond them is an
error, never a silently different number. Nesting is limited to the 63 levels a C compiler
must support (C11 5.2.4.1), so a hostile file cannot exhaust Python's stack.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from hexscope.engine.io.c_lexer import Token, describe
from hexscope.engine.io.c_literals import UINT64_MAX, LiteralError, number_value, string_value

if TYPE_CHECKING:
    from hexscope.engine.io.c_lexer import Lexer

# <math.h> names the exporter writes for non-finite floats.
FLOAT_CONSTANTS = {"NAN": float("nan"), "INFINITY": float("inf"), "HUGE_VALF": float("inf")}
T = TypeVar("T")
MAX_NESTING = 63        # parentheses, casts and unary operators inside one another


@dataclass(frozen=True, slots=True)
class Symbol:
    """A name used as a value: an array, ``NULL``, an ``OP_`` or an ``NN_PAD_`` name."""

    name: str
    pos: int


@dataclass(frozen=True, slots=True)
class Arg:
    value: object
    pos: int


class ExpressionReader:
    """Reads expressions from ``self.lx``; the parser that inherits it says which words name
    types (``is_type_name``, ``type_words``) and which macros append nodes (``append_macros``)."""

    lx: Lexer
    append_macros: tuple[str, ...] = ()
    _nesting = 0                            # open parentheses, casts and unary operators

    def is_type_name(self, word: str) -> bool:
        raise NotImplementedError

    def type_words(self) -> tuple[list[Token], bool]:
        raise NotImplementedError

    def expr(self) -> Arg:
        lx = self.lx
        left = self.term()
        while lx.peek().text in ("+", "-") and lx.peek().kind == "punct":
            op = lx.next()
            right = self.term()
            left = Arg(_arith(op, left, right, lx), left.pos)
        return left

    def term(self) -> Arg:
        lx = self.lx
        left = self.unary()
        while lx.peek().text in ("*", "/") and lx.peek().kind == "punct":
            op = lx.next()
            right = self.unary()
            left = Arg(_arith(op, left, right, lx), left.pos)
        return left

    def unary(self) -> Arg:
        tok = self.lx.peek()
        if tok.kind != "punct" or tok.text not in ("(", "-", "+", "&"):
            return self._unary()
        depth = self._nesting
        if depth >= MAX_NESTING:
            raise self.lx.error(tok, f"expression nested more than {MAX_NESTING} levels deep "
                                "(parentheses, casts, unary operators)")
        self._nesting = depth + 1
        try:
            return self._unary()
        finally:
            self._nesting = depth

    def _unary(self) -> Arg:
        lx = self.lx
        tok = lx.next()
        if tok.text in ("-", "+") and tok.kind == "punct":
            inner = self.unary()
            if not isinstance(inner.value, int | float):
                raise lx.error(tok, f"cannot negate {show(inner.value)}")
            return Arg(-inner.value if tok.text == "-" else inner.value, tok.pos)
        if tok.text == "&" and tok.kind == "punct":
            inner = self.unary()
            if not isinstance(inner.value, Symbol):
                raise lx.error(tok, f"cannot take the address of {show(inner.value)}: only "
                               "an array name is understood")
            if lx.accept("["):
                index = self.int_expr("index")
                lx.expect("]")
                if index.value != 0:
                    raise lx.error(index.pos, f"&{inner.value.name}[{index.value}]: an "
                                   "address inside an array is not supported; pass the "
                                   "array itself")
            return inner
        if tok.text == "(":
            if lx.peek().kind == "id" and self.is_type_name(lx.peek().text):
                words, _ = self.type_words()
                lx.expect(")")
                value = self.unary()
                return Arg(value.value, tok.pos)   # casts change nothing we read
            inner = self.expr()
            lx.expect(")")
            return Arg(inner.value, tok.pos)
        if tok.kind == "num":
            return Arg(self.literal(number_value, tok), tok.pos)
        if tok.kind == "str":
            text = self.literal(string_value, tok)
            while lx.peek().kind == "str":
                text += self.literal(string_value, lx.next())
            return Arg(text, tok.pos)
        if tok.kind == "id":
            if tok.text in FLOAT_CONSTANTS:
                return Arg(FLOAT_CONSTANTS[tok.text], tok.pos)
            macro = lx.defines.get(tok.text)
            if (macro is not None and macro.params is not None
                    and tok.text not in self.append_macros):
                raise lx.error(tok, f"function-like macro {tok.text}(...) is not understood "
                               "here")
            return Arg(Symbol(tok.text, tok.pos), tok.pos)
        raise lx.error(tok, f"expected a value, found {describe(tok)}")

    def literal(self, convert: Callable[[str], T], tok: Token) -> T:
        """A literal's value; a malformed one is an error at the fault inside it (or at the
        use, for a literal that came from a macro)."""
        try:
            return convert(tok.text)
        except LiteralError as exc:
            inside = self.lx.src.text.startswith(tok.text, tok.pos)
            raise self.lx.error(tok.pos + (exc.offset if inside else 0), str(exc)) from None

    def int_expr(self, what: str) -> Arg:
        arg = self.expr()
        return Arg(self.as_int(arg, what), arg.pos)

    def as_int(self, arg: Arg, what: str) -> int:
        value = arg.value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.lx.error(arg.pos, f"{what}: expected an integer, found {show(value)}")
        return value

    def call_args(self) -> list[Arg]:
        lx = self.lx
        lx.expect("(")
        args: list[Arg] = []
        if lx.accept(")"):
            return args
        while True:
            args.append(self.expr())
            if lx.accept(")"):
                return args
            lx.expect(",")


def _arith(op: Token, left: Arg, right: Arg, lx: Lexer) -> int | float:
    a, b = left.value, right.value
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        raise lx.error(op, f"cannot compute {show(a)} {op.text} {show(b)}")
    if op.text == "/" and b == 0:
        raise lx.error(op, "division by zero")
    if isinstance(a, int) and isinstance(b, int):
        if op.text == "/":
            value = abs(a) // abs(b)            # C truncates toward zero; exactly
            value = value if (a < 0) == (b < 0) else -value
        else:
            value = a + b if op.text == "+" else a - b if op.text == "-" else a * b
        if abs(value) > UINT64_MAX:
            raise lx.error(op, f"{show(a)} {op.text} {show(b)} does not fit 64 bits")
        return value
    result = (a + b if op.text == "+" else a - b if op.text == "-" else a * b
              if op.text == "*" else a / b)
    if math.isinf(result) and not (math.isinf(a) or math.isinf(b)):
        raise lx.error(op, f"{show(a)} {op.text} {show(b)} overflows float32 (it is "
                       "infinite even as a double)")
    return result


def show(value: object) -> str:
    if isinstance(value, Symbol):
        return value.name
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)
