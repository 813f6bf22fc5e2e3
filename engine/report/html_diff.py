"""``hexscope diff --html``: the structural diff as one HTML file, both graphs drawn with
the removed, changed and added nodes coloured."""

from __future__ import annotations

import os
from collections.abc import Iterable
from os import PathLike

from hexscope.engine.nodes import Node
from hexscope.engine.report.graph_drawing import Key, draw_graph
from hexscope.engine.report.html import Cell, Figure, Page, Row, Section, Table, write_page
from hexscope.engine.structural_diff import ADDED, CHANGED, KIND_COLOURS, REMOVED, StructuralDiff

MAX_ROWS = 5000


def diff_page(diff: StructuralDiff, a: Iterable[Node], b: Iterable[Node]) -> Page:
    a_nodes, b_nodes = list(a), list(b)
    counts = {k: len(diff.of_kind(k)) for k in (CHANGED, REMOVED, ADDED)}
    page = Page(f"Structural diff: {os.path.basename(diff.b_name)} against "
                f"{os.path.basename(diff.a_name)}",
                f"A: {diff.a_name} · B: {diff.b_name} · nodes matched by id, then by label",
                "same" if diff.same else "different", not diff.same,
                cards=[(str(len(a_nodes)), "nodes in A"), (str(len(b_nodes)), "nodes in B"),
                       (str(len(diff.pairs)), "matched"), (str(counts[CHANGED]), "changed"),
                       (str(counts[REMOVED]), "removed (only in A)"),
                       (str(counts[ADDED]), "added (only in B)")])
    summary = Section("Summary", "summary", callouts=[(diff.summary(), not diff.same)])
    page.sections.append(summary)
    a_colours = {i: KIND_COLOURS[e.kind] for i, e in diff.by_a.items()}
    b_colours = {j: KIND_COLOURS[e.kind] for j, e in diff.by_b.items()}
    keys = [Key(f"{k} ({counts[k]})", KIND_COLOURS[k]) for k in (CHANGED, REMOVED, ADDED)]
    graphs = Section("The graphs", "graphs", figures=[
        Figure(draw_graph(a_nodes, a_colours, f"A: {diff.a_name}", keys[:2])),
        Figure(draw_graph(b_nodes, b_colours, f"B: {diff.b_name}", [keys[0], keys[2]]))])
    page.sections.append(graphs)
    page.sections.append(differences_section(diff, summary=False))
    return page


def differences_section(diff: StructuralDiff, heading: str = "Differences",
                        summary: bool = True) -> Section:
    """Every differing node in a sortable table (after the summary line, if asked)."""
    rows = [Row((Cell(e.kind, css=f"kind-{e.kind}"), Cell(_hex(e.a_id), css="mono"),
                 Cell(_hex(e.b_id), css="mono"), Cell(e.title), Cell(e.op),
                 Cell("; ".join(c.text() for c in e.changes))), e.kind != CHANGED)
            for e in diff.entries[:MAX_ROWS]]
    more = (f"{len(diff.entries) - MAX_ROWS} more node(s): hexscope diff --json lists all"
            if len(diff.entries) > MAX_ROWS else "")
    return Section(heading, "differences",
                   callouts=[(diff.summary(), not diff.same)] if summary else [],
                   table=Table(("kind", "A", "B", "node", "op", "what changed"), tuple(rows),
                               more) if diff.entries else None)


def write_diff_html(diff: StructuralDiff, a: Iterable[Node], b: Iterable[Node],
                    path: str | PathLike[str]) -> None:
    write_page(diff_page(diff, a, b), path)


def _hex(node_id: int | None) -> str:
    return "-" if node_id is None else f"0x{node_id:x}"


__all__ = ["diff_page", "differences_section", "write_diff_html"]
