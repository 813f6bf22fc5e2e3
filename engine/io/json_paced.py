"""``json.loads`` of a graph document with pause points between the entries of its long list.

``json.loads`` is one C call that holds the GIL throughout: 27 ms for a 10,000-node
graph.json, 100 ms at 20,000 nodes, while an app's window waits for its turn (issue 32).
Here the top-level object is read a member at a time and the ``nodes`` list an entry at a
time (``JSONDecoder.raw_decode``, the same C scanner), with a pause point of
:mod:`hexscope.engine.cooperate` every ``EVERY`` entries. The result is what ``json.loads``
gives; any text this reader does not expect (not an object, bad JSON) is handed to the
decoder whole, so a damaged file gets exactly ``json.loads``' error.
"""

from __future__ import annotations

import json
import re

from hexscope.engine.cooperate import EVERY, installed, pause

_SPACE = re.compile(r"[ \t\n\r]*")


class _NotPlain(Exception):
    """The text is not the plain object this reader walks: decode it whole."""


def loads_paced(text: str, decoder: json.JSONDecoder, list_key: str = "nodes") -> object:
    """``decoder.decode(text)``, with pause points inside the top-level object's
    ``list_key`` list when an app installed a pause callback (else at once, as before)."""
    if installed() is None:
        return decoder.decode(text)
    try:
        return _object(text, decoder, list_key)
    except (_NotPlain, ValueError):
        return decoder.decode(text)     # json's own result, or its own error


def _skip(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    assert match is not None            # the pattern matches the empty string
    return match.end()


def _expect(text: str, pos: int, chars: str) -> str:
    char = text[pos:pos + 1]
    if not char or char not in chars:
        raise _NotPlain
    return char


def _object(text: str, decoder: json.JSONDecoder, list_key: str) -> dict[str, object]:
    pos = _skip(text, 0)
    _expect(text, pos, "{")
    pos = _skip(text, pos + 1)
    result: dict[str, object] = {}
    if text[pos:pos + 1] != "}":
        while True:
            _expect(text, pos, '"')
            key, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, pos)
            _expect(text, pos, ":")
            pos = _skip(text, pos + 1)
            if key == list_key and text[pos:pos + 1] == "[":
                value, pos = _list(text, pos, decoder)
            else:
                value, pos = decoder.raw_decode(text, pos)
            result[key] = value
            pos = _skip(text, pos)
            if _expect(text, pos, ",}") == "}":
                break
            pos = _skip(text, pos + 1)
    if _skip(text, pos + 1) != len(text):
        raise _NotPlain                 # extra data after the object
    return result


def _list(text: str, pos: int, decoder: json.JSONDecoder) -> tuple[list[object], int]:
    pos = _skip(text, pos + 1)
    items: list[object] = []
    if text[pos:pos + 1] == "]":
        return items, pos + 1
    while True:
        item, pos = decoder.raw_decode(text, pos)
        items.append(item)
        if not len(items) % EVERY:
            pause()
        pos = _skip(text, pos)
        if _expect(text, pos, ",]") == "]":
            return items, pos + 1
        pos = _skip(text, pos + 1)


__all__ = ["loads_paced"]
