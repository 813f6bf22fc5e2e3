"""A small C lexer for hexagon_nn's graph-init files (graph spec §3).

It is not a C compiler: it knows the constructs those files use and fails loudly, with
``file:line:column``, on anything else. Comments are blanked first (positions kept), object-
like ``#define``s are expanded as tokens are read. A number is one token, C's whole
preprocessing number (``0x1000f``, ``1.5f``, also ``1f``), which :mod:`c_literals` judges;
large numeric array bodies skip the lexer (:func:`c_literals.fast_number_list`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hexscope.engine.errors import GraphFileError

_COMMENT_RE = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
_SPACE_RE = re.compile(r"(?:[ \t\r\n\f\v]|\\\n)*+")
# A number token is C's preprocessing number, so 1f and 0xe+5 are each one token that
# number_value then refuses as gcc does, instead of quietly reading 1 then f.
# The white space before a token is skipped in the same match, one regex call per token; it
# is possessive (*+), so a failed match never backtracks through it.
_TOKEN_RE = re.compile(r"""
    (?:[ \t\r\n\f\v]|\\\n)*+
    (?:
      (?P<num>\.?[0-9](?:[eEpP][+-]|[\w.])*)
    | (?P<id>[A-Za-z_]\w*)
    | (?P<str>"(?:\\.|[^"\\\n])*")
    | (?P<chr>'(?:\\.|[^'\\\n])+')
    | (?P<punct>\.\.\.|->|\#\#|[{}()\[\];,=.*&+\-/#<>|:~!%^?])
    )
""", re.X)
_DIRECTIVE_RE = re.compile(r"#[ \t]*(\w*)")


class CSyntaxError(GraphFileError):
    """A graph-init file construct the importer does not understand (with its position)."""


@dataclass(frozen=True, slots=True)
class Token:
    kind: str       # "num", "id", "str", "chr", "punct", "eof"
    text: str
    pos: int        # offset in the source, for line/column in messages


@dataclass
class Source:
    """The text of one file, with comments blanked out, and its name for messages."""

    name: str
    text: str

    @classmethod
    def from_text(cls, name: str, text: str) -> Source:
        return cls(name, _COMMENT_RE.sub(_blank, text))

    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        column = pos - self.text.rfind("\n", 0, pos)
        return f"{self.name}:{line}:{column}"

    def error(self, pos: int, message: str) -> CSyntaxError:
        return CSyntaxError(f"{self.where(pos)}: {message}")


def _blank(match: re.Match[str]) -> str:
    text = match.group()
    if text[0] in "\"'":
        return text
    if text[1] == "/":
        return " " * len(text)
    return re.sub(r"[^\n]", " ", text)


@dataclass
class Macro:
    name: str
    params: tuple[str, ...] | None    # None for an object-like macro
    body: tuple[Token, ...]
    pos: int


# Tokens the macro uses of one file may produce, counting every token of every body expanded,
# names expanded further included (that is the work done). Graph-init files write their data
# out, so real files stay far below; the limit stops macros nested to double at each level,
# which would take minutes to read (20 levels produce over 6 million tokens).
MAX_MACRO_TOKENS = 1_000_000


@dataclass(slots=True)
class _Frame:
    """One macro being sized by :meth:`Lexer._expansion_size`."""

    macro: Macro
    index: int = 0          # the next token of its body
    count: int = 0          # tokens produced so far, its body's and those of what it expands
    contextual: bool = False    # a name in it was left alone because an outer macro was active


@dataclass
class Lexer:
    """Tokens of a :class:`Source`, with object-like macros expanded.

    Directives are handled while scanning: ``#define``/``#undef`` update ``defines``,
    ``#include`` and ``#pragma`` are skipped, conditionals are refused. Expansion follows C:
    a macro's name inside its own expansion is left as a name, so recursive macros end.
    Each use in the file is sized before it is expanded, and a file whose uses would expand
    to more than :data:`MAX_MACRO_TOKENS` tokens is refused at the use that passes it.
    """

    src: Source
    pos: int = 0
    defines: dict[str, Macro] = field(default_factory=dict)
    macro_tokens: int = 0           # tokens the file's macro uses have expanded to so far
    _pending: list[Token] = field(default_factory=list)
    _peeked: Token | None = None
    # (len(_pending) when it started, macro name) of each expansion still being read
    _expansions: list[tuple[int, str]] = field(default_factory=list)
    _active: set[str] = field(default_factory=set)
    # expansion sizes that do not depend on which macros are active; reset by #define/#undef
    _sizes: dict[str, int] = field(default_factory=dict)

    def error(self, token: Token | int, message: str) -> CSyntaxError:
        return self.src.error(token if isinstance(token, int) else token.pos, message)

    def peek(self) -> Token:
        if self._peeked is None:
            self._peeked = self._next()
        return self._peeked

    def next(self) -> Token:
        token = self.peek()
        self._peeked = None
        return token

    def expect(self, text: str) -> Token:
        token = self.next()
        if token.text != text or token.kind not in ("punct", "id"):
            raise self.error(token, f"expected '{text}', found {describe(token)}")
        return token

    def accept(self, text: str) -> bool:
        token = self.peek()
        if token.text == text and token.kind in ("punct", "id"):
            self.next()
            return True
        return False

    def ident(self) -> Token:
        token = self.next()
        if token.kind != "id":
            raise self.error(token, f"expected a name, found {describe(token)}")
        return token

    @property
    def raw_pos(self) -> int | None:
        """Where raw reading (:meth:`seek`) may start: right after the last token read, or
        None while tokens are buffered (a macro expansion)."""
        if self._peeked is not None or self._pending:
            return None
        return self.pos

    def seek(self, pos: int) -> None:
        self.pos = pos
        self._peeked = None

    def _next(self) -> Token:
        while True:
            # An expansion whose tokens have all been read no longer stops its name.
            while self._expansions and self._expansions[-1][0] >= len(self._pending):
                self._active.discard(self._expansions.pop()[1])
            if self._pending:
                token = self._pending.pop()
                macro = self._object_macro(token)
                if macro is None or macro.name in self._active:
                    return token
            else:
                token = self._scan()
                macro = self._object_macro(token)
                if macro is None:
                    return token
                self._charge(macro, token)
            # Expanded tokens carry the use position, so errors point at the use.
            self._expansions.append((len(self._pending), macro.name))
            self._active.add(macro.name)
            self._pending.extend(Token(t.kind, t.text, token.pos) for t in reversed(macro.body))

    def _object_macro(self, token: Token) -> Macro | None:
        macro = self.defines.get(token.text) if token.kind == "id" else None
        return macro if macro is not None and macro.params is None else None

    def _charge(self, macro: Macro, use: Token) -> None:
        """Count a use's expansion against the file's budget before expanding it."""
        room = MAX_MACRO_TOKENS - self.macro_tokens
        size = self._expansion_size(macro, room)
        if size > room:
            raise self.error(use, f"expansion of macro {macro.name} is too large: the macros "
                             f"used in this file would expand to more than {MAX_MACRO_TOKENS:,} "
                             "tokens, the importer's limit")
        self.macro_tokens += size

    def _expansion_size(self, macro: Macro, limit: int) -> int:
        """How many tokens :meth:`_next` produces expanding ``macro`` outside any expansion
        (each token of each body, also those expanded further), or ``limit + 1`` as soon as
        it is sure to be more than ``limit``.

        Iterative, so a long chain of macros cannot exhaust Python's stack. Sizes that do
        not depend on which macros are active are remembered, so doubling macros cost one
        visit per definition and sizing takes at most about ``2 * limit`` steps.
        """
        sizes = self._sizes
        if macro.name in sizes:
            return sizes[macro.name]
        stack, active, total = [_Frame(macro)], {macro.name}, 0
        while True:
            frame = stack[-1]
            if frame.index == len(frame.macro.body):
                stack.pop()
                active.discard(frame.macro.name)
                if not frame.contextual:
                    sizes[frame.macro.name] = frame.count
                if not stack:
                    return frame.count
                stack[-1].count += frame.count
                stack[-1].contextual |= frame.contextual
                continue
            token = frame.macro.body[frame.index]
            frame.index += 1
            frame.count += 1
            total += 1
            inner = self._object_macro(token)
            if inner is not None and inner.name in active:
                frame.contextual = True
            elif inner is not None and inner.name in sizes:
                frame.count += sizes[inner.name]
                total += sizes[inner.name]
            elif inner is not None:
                stack.append(_Frame(inner))
                active.add(inner.name)
            if total > limit:
                return limit + 1

    def _scan(self) -> Token:
        text = self.src.text
        while True:
            match = _TOKEN_RE.match(text, self.pos)
            if match is None:
                self.pos = _SPACE_RE.match(text, self.pos).end()  # type: ignore[union-attr]
                if self.pos >= len(text):
                    return Token("eof", "", len(text))
                raise self.error(self.pos, f"unexpected character {text[self.pos]!r}")
            kind = match.lastgroup or ""
            start, self.pos = match.start(kind), match.end()
            value = text[start:self.pos]
            if kind == "punct" and value == "#" and _line_start(text, start):
                self._directive(start)
                continue
            return Token(kind, value, start)

    def _directive(self, start: int) -> None:
        """Read one preprocessor line (with ``\\`` continuations) and act on it."""
        text = self.src.text
        end = start
        while True:
            end = text.find("\n", end)
            if end < 0:
                end = len(text)
                break
            if text[end - 1] == "\\" or text[end - 2:end] == "\\\r":
                end += 1
                continue
            break
        self.pos = end
        line = text[start:end]
        match = _DIRECTIVE_RE.match(line)
        name = match.group(1) if match else ""
        if name in ("include", "pragma", "line") or not line[1:].strip():
            return
        if name == "define":
            self._define(start, end)
        elif name == "undef":
            self.defines.pop(line[match.end():].strip(), None)  # type: ignore[union-attr]
            self._sizes.clear()
        elif name in ("if", "ifdef", "ifndef", "elif", "else", "endif"):
            raise self.error(start, f"#{name}: conditional compilation is not supported in "
                             "graph-init files")
        else:
            raise self.error(start, f"unknown preprocessor directive #{name}")

    def _define(self, start: int, end: int) -> None:
        tokens = self.tokens_between(start, end)
        # tokens: '#', 'define', NAME, ...; a '(' right after the name makes it function-like.
        if len(tokens) < 3 or tokens[2].kind != "id":
            raise self.error(start, "#define without a macro name")
        name_tok, body = tokens[2], tokens[3:]
        params: tuple[str, ...] | None = None
        after_name = name_tok.pos + len(name_tok.text)
        if body and body[0].text == "(" and body[0].pos == after_name:
            close = next((k for k, t in enumerate(body) if t.text == ")"), None)
            if close is None:
                raise self.error(body[0], f"#define {name_tok.text}: missing ')'")
            params = tuple(t.text for t in body[1:close] if t.text != ",")
            body = body[close + 1:]
        self.defines[name_tok.text] = Macro(name_tok.text, params, tuple(body), start)
        self._sizes.clear()

    def tokens_between(self, start: int, end: int) -> list[Token]:
        """Raw tokens of ``text[start:end]`` (a directive's body), without macro expansion."""
        text, pos, out = self.src.text, start, []
        while pos < end:
            match = _TOKEN_RE.match(text, pos, end)
            if match is None:
                pos = _SPACE_RE.match(text, pos, end).end()  # type: ignore[union-attr]
                if pos < end:
                    raise self.error(pos, f"unexpected character {text[pos]!r}")
                break
            kind = match.lastgroup or ""
            out.append(Token(kind, match.group(kind), match.start(kind)))
            pos = match.end()
        return out


def _line_start(text: str, pos: int) -> bool:
    k = pos - 1
    while k >= 0 and text[k] in " \t":
        k -= 1
    return k < 0 or text[k] == "\n"


def describe(token: Token) -> str:
    if token.kind == "eof":
        return "the end of the file"
    return f"'{token.text}'"
