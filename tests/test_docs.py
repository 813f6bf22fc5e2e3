"""The README and the guide (docs/) link only to files and headings that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hexscope.widgets.guide_view import guide_html

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    return guide_html(page.read_text(encoding="utf-8"))[1]


def _outside_code(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_docs_links_resolve(page):
    text = _outside_code(page.read_text(encoding="utf-8"))
    for link in LINK.findall(text):
        if re.match(r"[a-z]+:", link):
            continue                                    # a web link
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name}: {link} does not exist"
        if anchor:
            assert path.suffix == ".md", link
            assert anchor in _anchors(path), f"{page.name}: no heading for {link}"


def test_guide_covers_the_subjects_and_the_readme_links_to_it():
    anchors = _anchors(ROOT / "docs" / "guide.md")
    assert {"install-and-start", "the-welcome-page", "editing-a-graph",
            "stepping-through-a-run", "the-views", "comparing-runs", "themes-and-keys",
            "the-command-line", "file-formats", "user-defined-ops-plugins", "scripting",
            "device"} <= anchors
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/guide.md" in readme
    # The README's first commands stay: set-up and start on an example, run the tests.
    assert "./packaging/start" in readme and "./packaging/test" in readme


def test_guide_screenshots_are_made_by_a_packaging_script():
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    scripts = "".join(p.read_text(encoding="utf-8")
                      for p in (ROOT / "packaging").glob("*screenshots.py"))
    names = re.findall(r"screenshots/(\w+)\.png", guide)
    assert {"guide_welcome", "guide_light", "guide_dark", "guide_shortcuts"} <= set(names)
    for name in names:
        prefix, _, rest = name.partition("_")
        # Each script writes either the literal name or f"{prefix}_{name}".
        assert f'"{name}.png"' in scripts or f'"{rest}"' in scripts \
            or f"{name}.png" in scripts, name
