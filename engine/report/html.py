"""The HTML report's page model (cards, sections, figures, sortable tables) and its
rendering with Jinja2 from ``resources/templates`` into one self-contained file."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import cache
from os import PathLike
from pathlib import Path

import jinja2


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    sort: str | None = None       # the value sorted by, when the text is not it
    css: str = ""


def num(text: str, value: float | int | None) -> Cell:
    """A right-aligned number cell sorted by ``value`` (unknown values sort last)."""
    return Cell(text, "" if value is None else repr(float(value)), "num")


@dataclass(frozen=True, slots=True)
class Row:
    cells: tuple[Cell, ...]
    bad: bool = False


@dataclass(frozen=True, slots=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[Row, ...]
    more: str = ""                # what the table leaves out, if anything


@dataclass(frozen=True, slots=True)
class Figure:
    svg: str
    caption: str = ""


@dataclass
class Section:
    heading: str
    anchor: str
    callouts: list[tuple[str, bool]] = field(default_factory=list)    # (text, bad)
    cards: list[tuple[str, str]] = field(default_factory=list)        # (value, label)
    figures: list[Figure] = field(default_factory=list)
    table: Table | None = None


@dataclass
class Page:
    title: str
    subtitle: str
    verdict: str
    failed: bool
    cards: list[tuple[str, str]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("hexscope.resources", "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True,
                              undefined=jinja2.StrictUndefined)


def render(page: Page) -> str:
    """The page as one HTML document (CSS, SVG and the sorting script inline)."""
    return _environment().get_template("report.html.j2").render(
        title=page.title, subtitle=page.subtitle, verdict=page.verdict, failed=page.failed,
        cards=page.cards, sections=page.sections, version=_version(),
        made=time.strftime("%Y-%m-%d %H:%M"))


_REFERENCE = re.compile(r"""(?:\b(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?"""
                        r"""(?!#|data:|javascript:void)([^"'\s>]+))"""
                        r"""|url\(\s*["']?(?!#|data:)([^)"']+)|@import\s+([^;]+)""", re.I)
_NAMESPACE = re.compile(r"""\bxmlns(?::\w+)?\s*=\s*["'][^"']*["']""")


def external_references(html: str) -> list[str]:
    """What a page would fetch: every src, href or CSS url() that is not an anchor (#...)
    or a data: URI, and any other http(s) or file address outside the SVG namespace
    declarations (names, never fetched). A report must have none."""
    found = [next(g for g in m.groups() if g) for m in _REFERENCE.finditer(html)]
    rest = _NAMESPACE.sub("", html)
    found += re.findall(r"(?:https?|file|ftp)://[^\s\"'<>)]+", rest, re.I)
    return found


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hexscope")
    except PackageNotFoundError:     # a source tree without metadata
        return "(source tree)"


def write_page(page: Page, path: str | PathLike[str]) -> None:
    Path(path).write_text(render(page), encoding="utf-8")


__all__ = ["Cell", "Figure", "Page", "Row", "Section", "Table", "external_references", "num",
           "render", "write_page"]
