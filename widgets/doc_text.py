"""An op's doc text as the user reads it: rendered, with its citations made links.

Docstrings are written in reST-ish plain text (``code``, blank-line paragraphs) and cite the
semantics documents by section: "quantized-ops spec §1.7", "graph spec §4.11", or a bare
"§13.5" (the quantized-ops document). Both documents ship with the app
(``hexscope.resources/docs``), so every citation becomes a link the app opens at the section.
"""

from __future__ import annotations

import html
import re
from functools import cache
from importlib import resources

DOCS = {"quantized-ops": "quantized-ops.md", "graph": "graph-and-format.md"}
TITLES = {"quantized-ops": "hexagon_nn quantized ops", "graph": "hexagon_nn graphs and format"}
SCHEME = "hexscope-doc"

_CITATION = re.compile(r"(?P<which>(?:[Qq]uantized-ops|[Gg]raph(?:-and-format)?)\s+spec\s+)?"
                       r"§(?P<section>\d+(?:\.\d+)*)")
_CODE = re.compile(r"``(.+?)``|`([^`]+)`")


def doc_link(which: str, section: str) -> str:
    return f"{SCHEME}:{which}#{section}"


def parse_link(url: str) -> tuple[str, str] | None:
    """``(document key, section)`` of a link made by :func:`render_doc`, else None."""
    if not url.startswith(SCHEME + ":"):
        return None
    which, _, section = url[len(SCHEME) + 1:].partition("#")
    return (which, section) if which in DOCS else None


def render_doc(text: str) -> str:
    """HTML for a doc text: paragraphs, code spans, and citations as links. A bare "§N"
    belongs to the document the text named last ("graph spec §4.23, §6.4"), else to the
    quantized-ops document."""
    last = ["quantized-ops"]

    def cite(match: re.Match[str]) -> str:
        if match["which"]:
            last[0] = "graph" if match["which"].lower().startswith("graph") else \
                "quantized-ops"
            which = last[0]
        else:   # the document named last, unless only the other one has that section
            other = "graph" if last[0] == "quantized-ops" else "quantized-ops"
            which = next((w for w in (last[0], other)
                          if _has_section(w, match["section"])), last[0])
        label = f"{TITLES[which]} §{match['section']}" if match["which"] else match[0]
        return f'<a href="{doc_link(which, match["section"])}">{label}</a>'

    def code(match: re.Match[str]) -> str:
        return f"<code>{match[1] or match[2]}</code>"

    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    out = []
    for para in paragraphs:
        body = html.escape(" ".join(line.strip() for line in para.splitlines()), quote=False)
        body = _CITATION.sub(cite, _CODE.sub(code, body))
        out.append(f"<p>{body}</p>")
    return "".join(out)


@cache
def _sections(which: str) -> frozenset[str]:
    return frozenset(re.findall(r"(?m)^#{1,6}\s+`?(\d+(?:\.\d+)*)", semantics_text(which)))


def _has_section(which: str, section: str) -> bool:
    """The section, or the one it is an item of ("§6.7": item 7 of section 6)."""
    parts = section.split(".")
    return any(".".join(parts[:k]) in _sections(which) for k in range(len(parts), 0, -1))


def semantics_text(which: str) -> str:
    """The shipped document's markdown."""
    return (resources.files("hexscope.resources") / "docs" / DOCS[which]).read_text("utf-8")


__all__ = ["DOCS", "doc_link", "parse_link", "render_doc", "semantics_text"]
