"""The Compare panel and its guide say what each B can and cannot see (issue 32, item 5: a
const 20x off passes the float reference, which computes with the same const)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from hexscope.widgets.compare_panel import SEES, TARGETS, ComparePanel

DOC = Path(__file__).parents[2] / "docs" / "compare.md"


def test_every_b_in_the_list_says_what_it_sees(qtbot):
    panel = ComparePanel()
    qtbot.addWidget(panel)
    box = panel.target
    assert box.count() == len(TARGETS)
    for k, (key, _) in enumerate(TARGETS):
        assert box.itemData(k, Qt.ItemDataRole.ToolTipRole) == SEES[key]
    box.setCurrentIndex([key for key, _ in TARGETS].index("accumulated"))
    assert box.toolTip() == SEES["accumulated"]          # the chosen B's, not the first's


def test_the_float_reference_says_it_cannot_see_a_wrong_const_and_where_to_look():
    for key in ("isolated", "accumulated"):
        assert "wrong const" in SEES[key]
    isolated = SEES["isolated"]
    assert "cannot see" in isolated
    assert "other graph file" in isolated and "accumulated" in isolated
    assert "changed const" in SEES["graph"]


def test_the_guide_has_the_same_rule_for_each_analysis():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## What each analysis can and cannot see", 1)[1].split("\n## ", 1)[0]
    for name in ("Float reference, isolated", "Float reference, accumulated",
                 "Another graph file", "pinned run", "another backend"):
        assert name in section, name
    assert "cannot see a wrong const" in section
