"""Op docs render, and every citation they make opens a section that ships with the app."""

from __future__ import annotations

import re

import pytest

from hexscope.engine.ops.registry import REGISTRY
from hexscope.widgets.doc_text import parse_link, render_doc
from hexscope.widgets.semantics_view import SemanticsView


def test_code_spans_paragraphs_and_citations_are_rendered():
    out = render_doc("First ``quantize_int`` and `x`.\n\nSee quantized-ops spec §1.7 and\n"
                     "graph spec §4.11; also §13.5 <here>.")
    assert out.count("<p>") == 2 and "``" not in out and "`" not in out
    assert "<code>quantize_int</code>" in out and "<code>x</code>" in out
    assert '<a href="hexscope-doc:quantized-ops#1.7">hexagon_nn quantized ops §1.7</a>' in out
    assert '<a href="hexscope-doc:graph#4.11">hexagon_nn graphs and format §4.11</a>' in out
    assert '<a href="hexscope-doc:quantized-ops#13.5">§13.5</a>' in out
    assert "&lt;here&gt;" in out
    assert parse_link("hexscope-doc:graph#4.11") == ("graph", "4.11")
    assert parse_link("https://example.org") is None


CITED = sorted({(spec.name, m) for spec in REGISTRY.specs() for m in
                re.findall(r'href="(hexscope-doc:[^"]+)"', render_doc(spec.doc))})


@pytest.mark.parametrize("op, url", CITED, ids=[f"{o}-{u.split(':')[1]}" for o, u in CITED])
def test_every_citation_in_an_op_doc_opens_an_existing_section(qtbot, op, url):
    view = SemanticsView()
    qtbot.addWidget(view)
    assert view.show_section(*parse_link(url)), f"{op} cites {url}, which has no heading"
