"""Literals of hexagon_nn's graph-init files (graph spec §3): numbers and strings read as gcc
reads them, and large numeric array bodies parsed by numpy in one pass
(:func:`fast_number_list`), which is what keeps a 50 MB weight file fast.

Node ids such as ``0x1000f`` keep their hex digits; a suffix other than ``u``/``l``
combinations on an integer or ``f``/``l`` on a float (``1f`` included) is an error, as in
gcc, and so is any value C would not store faithfully.
"""

from __future__ import annotations

import math
import re

import numpy as np

# literals ----------------------------------------------------------------------------------
UINT64_MAX = (1 << 64) - 1      # the widest C integer (unsigned long long)
# Digits a literal may have before its value is certainly above UINT64_MAX (leading zeros
# aside), so that no huge literal is ever converted (Python refuses > 4300 decimal digits).
_MAX_DIGITS = {16: 16, 10: 20, 8: 22, 2: 64}


class LiteralError(ValueError):
    """A malformed literal; ``offset`` is where in the literal's text the problem is."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


# [0-9], not \d: \d also matches other scripts' digits, which C does not read as numbers.
_FLOAT_RE = re.compile(r"""
    0[xX] (?:[0-9a-fA-F]*\.[0-9a-fA-F]+ | [0-9a-fA-F]+\.?) [pP][+-]?[0-9]+
  | (?:[0-9]+\.[0-9]* | \.[0-9]+) (?:[eE][+-]?[0-9]+)?
  | [0-9]+ [eE][+-]?[0-9]+
""", re.X)
_INT_RE = re.compile(r"0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+")    # 0b: C23, and gcc's before
_INT_SUFFIX_RE = re.compile(r"(?:[uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)?")
_FLOAT_SUFFIXES = frozenset(("", "f", "F", "l", "L"))


def number_value(text: str) -> int | float:
    """The value of a C number literal (a whole preprocessing number, as the lexer reads it).

    Parameters
    ----------
    text
        The literal's text, suffix included: ``0x1000f``, ``255u``, ``1.5f``, ``0x1p-3``.

    Returns
    -------
    int | float
        An int for an integer literal, a float for a floating one.

    Raises
    ------
    LiteralError
        For what gcc refuses: a suffix other than ``u`` with ``l``/``ll`` on an integer (so
        ``1f``, ``1lul``) or other than one of ``f``/``l`` on a float, an exponent without
        digits, an invalid octal digit; and for an integer above 64 bits or a float that is
        infinite even as a double. ``offset`` points at the fault inside ``text``.
    """
    match = _FLOAT_RE.match(text)
    if match is not None:
        return _float_value(text, match.end())
    match = _INT_RE.match(text)
    if match is None:
        raise LiteralError(f"{_short(text)} is not a number")
    return _int_value(text, match.end())


def _int_value(text: str, end: int) -> int:
    if not _INT_SUFFIX_RE.fullmatch(text, end):
        raise _suffix_error(text, end, "integer")
    body = text[:end]
    if body[:2] in ("0x", "0X"):
        base, digits = 16, body[2:]
    elif body[:2] in ("0b", "0B"):
        base, digits = 2, body[2:]
    elif len(body) > 1 and body[0] == "0":
        base, digits = 8, body
        bad = next((k for k, c in enumerate(body) if c in "89"), None)
        if bad is not None:
            raise LiteralError(f"invalid digit '{body[bad]}' in octal constant {_short(text)}",
                               bad)
    else:
        base, digits = 10, body
    value = int(digits, base) if len(digits.lstrip("0")) <= _MAX_DIGITS[base] else None
    if value is None or value > UINT64_MAX:
        raise LiteralError(f"integer constant {_short(text)} is too large: C integers have "
                           "at most 64 bits")
    return value


def _float_value(text: str, end: int) -> float:
    """Every float hexagon_nn stores is a float32, so the overflow message says so: 1e999 is
    refused as 1e39 is (graph spec §3.2 item 4)."""
    if text[end:] not in _FLOAT_SUFFIXES:
        raise _suffix_error(text, end, "floating")
    body = text[:end]
    try:
        value = float.fromhex(body) if body[:2] in ("0x", "0X") else float(body)
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        raise LiteralError(f"floating constant {_short(text)} overflows float32 (it is "
                           "infinite even as a double)")
    return value


def _suffix_error(text: str, end: int, kind: str) -> LiteralError:
    """What is wrong with the text after a literal's number, in gcc's terms where a suffix
    is really a broken exponent or fraction."""
    suffix, number = text[end:], text[:end]
    hexadecimal = text[:2] in ("0x", "0X")
    exponent = "pP" if hexadecimal else "eE"
    fraction_may_follow = not any(c in exponent for c in number)
    if fraction_may_follow and suffix[0] in exponent:
        message = f"exponent has no digits in {_short(text)}"
    elif fraction_may_follow and suffix[0] == "." and hexadecimal:
        message = (f"exponent has no digits in {_short(text)}" if any(c in "pP" for c in suffix)
                   else f"hexadecimal floating constant {_short(text)} has no exponent (p)")
    elif fraction_may_follow and suffix[0] == ".":
        message = f"too many decimal points in {_short(text)}"
    else:
        message = f"invalid suffix '{_short(suffix)}' on {kind} constant {_short(text)}"
    return LiteralError(message, end)


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}...{text[-10:]} ({len(text)} characters)"


_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, '"': 34, "'": 39, "?": 63, "a": 7,
            "b": 8, "f": 12, "v": 11}
_OCTAL_ESCAPE = re.compile(rb"[0-7]{1,3}")
_HEX_ESCAPE = re.compile(rb"[0-9a-fA-F]*")


def _offset(body: bytes, k: int) -> int:
    """Where byte ``k`` of a string literal's body is in the literal's text (after the ")."""
    return len(body[:k].decode("utf-8")) + 1


def string_value(text: str) -> str:
    """The value of a C string literal (escapes decoded, bytes read as UTF-8).

    Raises LiteralError for ``\\x`` without hex digits and for escapes above 0xFF (both
    refused or warned about by C compilers; nothing is silently truncated).
    """
    out = bytearray()
    body = text[1:-1].encode("utf-8")
    k = 0
    while k < len(body):
        c = body[k]
        if c != 92:
            out.append(c)
            k += 1
            continue
        esc = chr(body[k + 1])
        if esc in "01234567":
            digits = _OCTAL_ESCAPE.match(body, k + 1, k + 4).group()  # type: ignore[union-attr]
            end = k + 1 + len(digits)
        elif esc == "x":
            digits = _HEX_ESCAPE.match(body, k + 2).group()  # type: ignore[union-attr]
            end = k + 2 + len(digits)
            if not digits:
                raise LiteralError("\\x used with no following hex digits", _offset(body, k))
        else:
            out.append(_ESCAPES.get(esc, ord(esc)))
            k += 2
            continue
        value = int(digits, 16 if esc == "x" else 8)
        if value > 0xFF:
            raise LiteralError(f"escape sequence {body[k:end].decode()} is out of range "
                               "(above 0xFF)", _offset(body, k))
        out.append(value)
        k = end
    return out.decode("utf-8", errors="replace")


# numeric array bodies -----------------------------------------------------------------------
_ALLOWED_INT = np.zeros(256, bool)
_ALLOWED_INT[[ord(c) for c in "0123456789,+- \t\r\n"]] = True
_ALLOWED_FLOAT = _ALLOWED_INT.copy()
_ALLOWED_FLOAT[[ord(c) for c in ".eE"]] = True
_DIGIT = np.zeros(256, bool)
_DIGIT[[ord(c) for c in "0123456789"]] = True
_NUMBER_CHAR = _DIGIT.copy()
_NUMBER_CHAR[[ord(c) for c in ".eExX"]] = True
_SIGN = np.zeros(256, bool)
_SIGN[[ord("+"), ord("-")]] = True
_SPACE = np.zeros(256, bool)
_SPACE[[ord(c) for c in " \t\r\n"]] = True
_EXP = np.zeros(256, bool)
_EXP[[ord("e"), ord("E")]] = True
_SEPARATOR = _SPACE.copy()
_SEPARATOR[ord(",")] = True
_FRACTION_OR_EXP = np.zeros(256, bool)
_FRACTION_OR_EXP[[ord(c) for c in ".eE"]] = True
_MAX_SUFFIXED_DIGITS = 400      # longer digit runs before an f are left to the token reader
_SHORT_SPACE = 8                # white space before a comma stepped over a character at a time


def fast_number_list(body: str, is_float: bool) -> np.ndarray | None:
    """Parse a comma-separated list of plain decimal literals with numpy, in one pass.

    Returns None when the body holds anything else (hex, octal, suffixes other than a float's
    ``f``, macros, casts, expressions); the caller then reads it token by token, which also
    places any error exactly.
    """
    try:
        raw = np.frombuffer(body.encode("ascii"), np.uint8)
    except UnicodeEncodeError:
        return None
    if is_float and ("f" in body or "F" in body):
        raw = _blank_float_suffixes(raw)
        body = raw.tobytes().decode("ascii")
    allowed = _ALLOWED_FLOAT if is_float else _ALLOWED_INT
    if raw.size and not allowed[raw].all():
        return None
    # A leading 0 followed by a digit is octal in C; numpy would read it as decimal.
    zeros = np.flatnonzero(raw[:-1] == ord("0"))
    if zeros.size:
        follow = _DIGIT[raw[zeros + 1]]
        prev = np.where(zeros > 0, _NUMBER_CHAR[raw[np.maximum(zeros - 1, 0)]], False)
        # an exponent such as 1e-05 is not octal either
        exponent = np.where(zeros > 1, _SIGN[raw[np.maximum(zeros - 1, 0)]]
                            & _EXP[raw[np.maximum(zeros - 2, 0)]], False)
        if (follow & ~prev & ~exponent).any():
            return None
    if not body.strip():
        return np.zeros(0, np.float64 if is_float else np.int64)
    stripped = body.rstrip(" \t\r\n")
    if stripped.endswith(","):
        stripped = stripped[:-1]
    if not _elements_end_in_digits(raw, stripped):
        return None
    try:
        values = np.fromstring(stripped, dtype=np.float64 if is_float else np.int64, sep=",")
    except ValueError:
        return None
    if values.size != stripped.count(",") + 1:
        return None
    if is_float and np.isinf(values).any():
        return None         # a literal beyond double: the token reader says which
    return values


def _blank_float_suffixes(raw: np.ndarray) -> np.ndarray:
    """A copy of ``raw`` with the f/F ending each floating literal blanked. Any other f stays,
    so the caller declines the body and the token reader reports it: ``1f`` is an integer
    with an invalid suffix, not 1.0."""
    f = np.flatnonzero((raw == ord("f")) | (raw == ord("F")))
    after = f + 1
    ends = np.ones(f.size, bool)
    inside = after < raw.size
    ends[inside] = _SEPARATOR[raw[after[inside]]]
    f = f[ends & (f > 0)]
    f = f[_DIGIT[raw[f - 1]] | (raw[f - 1] == ord("."))]
    # Back over the digits before each f: a '.' or an exponent before them makes a float.
    start = f - 1
    back = np.flatnonzero(_DIGIT[raw[start]])
    for _ in range(_MAX_SUFFIXED_DIGITS):
        if not back.size:
            break
        start[back] -= 1
        back = back[start[back] >= 0]
        back = back[_DIGIT[raw[start[back]]]]
    else:
        return raw
    before = raw[np.maximum(start, 0)]
    signed_exp = (_SIGN[before] & (start > 0)) & _EXP[raw[np.maximum(start - 1, 0)]]
    floating = (start >= 0) & (_FRACTION_OR_EXP[before] | signed_exp)
    out = raw.copy()
    out[f[floating]] = ord(" ")
    return out


def _elements_end_in_digits(raw: np.ndarray, stripped: str) -> bool:
    """Whether every element of ``stripped`` (a prefix of the bytes ``raw``) ends with a
    digit, or a digit and '.', before its comma. numpy would read an empty element as -1.0
    or 0 and a lone sign as 0 (a C syntax error); this is what keeps them out."""
    tail = stripped.rstrip(" \t\r\n")
    if not tail or not (tail[-1].isdigit() or tail[-1] == "." and tail[-2:-1].isdigit()):
        return False
    n = len(stripped)
    if raw[0] == ord(","):
        return False
    # Fast: a comma right after a digit (how exporters write). Compares only, no indexing.
    before = raw[:n - 1]
    odd = (raw[1:n] == ord(",")) & ((before < ord("0")) | (before > ord("9")))
    if not odd.any():
        return True
    ends = np.flatnonzero(odd)          # the character before each such comma
    back = np.flatnonzero(_SPACE[raw[ends]])
    for _ in range(_SHORT_SPACE):       # step back over white space to a character
        if not back.size:
            break
        ends[back] -= 1
        if ends[back[0]] < 0:           # only the first element can run past the start
            return False
        back = back[_SPACE[raw[ends[back]]]]
    if back.size:
        # Longer runs jump to their start at once: a step per character cost a few numpy
        # calls per character of the longest run (seconds for a megabyte of spaces).
        space = _SPACE[raw[:n]]
        starts = np.flatnonzero(space[1:] & ~space[:-1]) + 1
        if space[0]:
            starts = np.concatenate(([0], starts))
        ends[back] = starts[np.searchsorted(starts, ends[back], side="right") - 1] - 1
        if ends[0] < 0:
            return False
    last = raw[ends]
    odd_end = ~_DIGIT[last]             # "1.," is a float; "-.", " ." and ", ." are not
    if odd_end.any():
        dots = ends[odd_end]
        if not ((last[odd_end] == ord(".")) & (dots > 0)
                & _DIGIT[raw[np.maximum(dots - 1, 0)]]).all():
            return False
    return True
