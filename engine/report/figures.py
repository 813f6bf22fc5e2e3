"""matplotlib figures as inline SVG for the HTML reports: no GUI backend (a bare
``Figure`` draws with the SVG backend when saved), and nothing the page would fetch."""

from __future__ import annotations

import io
import re

import matplotlib
from matplotlib.figure import Figure

# the SVG's prologue, doctype and RDF metadata name external documents (a DTD, a
# Dublin Core vocabulary): none is needed inline in HTML, and a report must fetch nothing
_PROLOGUE = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*",
                       re.DOTALL)
STYLE = {"svg.fonttype": "none", "svg.hashsalt": "hexscope", "font.size": 9,
         "axes.titlesize": 10, "figure.dpi": 100}


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches, drawn without any GUI backend."""
    with matplotlib.rc_context(STYLE):
        return Figure(figsize=(width, height), layout="constrained")


def figure_svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element to inline in HTML (rasterized parts are PNGs in
    ``data:`` URIs; text stays text)."""
    out = io.StringIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(out, format="svg", metadata={"Date": None})
    return _PROLOGUE.sub("", out.getvalue()).strip()


__all__ = ["STYLE", "figure_svg", "new_figure"]
