"""Constant expressions of graph-init C files: numbers, strings, names, casts, unary minus,
``&array[i]`` and + - * / with C's integer division (graph spec §3.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hexscope.engine.io.c_lexer import Token, describe, number_value, string_value

if TYPE_CHECKING:
    from hexscope.engine.io.c_lexer import Lexer

# <math.h> names the exporter writes for non-finite floats.
FLOAT_CONSTANTS = {"NAN": float("nan"), "INFINITY": float("inf"), "HUGE_VALF": float("inf")}


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
        lx = self.lx
        tok = lx.next()
        if tok.text in ("-", "+") and tok.kind == "punct":
            inner = self.unary()
            if not isinstance(inner.value, int | float):
                raise lx.error(tok, f"cannot negate {show(inner.value)}")
            return Arg(-inner.value if tok.text == "-" else inner.value, tok.pos)
        if tok.text == "&" and tok.kind == "punct":
            inner = self.unary()
            if lx.accept("["):
                self.int_expr("index")
                lx.expect("]")
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
            return Arg(number_value(tok.text), tok.pos)
        if tok.kind == "str":
            text = string_value(tok.text)
            while lx.peek().kind == "str":
                text += string_value(lx.next().text)
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
    if op.text == "+":
        return a + b
    if op.text == "-":
        return a - b
    if op.text == "*":
        return a * b
    if b == 0:
        raise lx.error(op, "division by zero")
    if isinstance(a, int) and isinstance(b, int):
        return int(a / b)                   # C truncates toward zero
    return a / b


def show(value: object) -> str:
    if isinstance(value, Symbol):
        return value.name
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)
