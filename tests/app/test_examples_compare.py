"""Every bundled example, run and Compared against the float reference with the panel's
defaults, as a new user would (issue 32 items 2 and 3): a healthy graph passes and the
canvas shows no node beyond the tolerance; the broken one (``saturating_range``) fails, red
on its broken node.

Before the fix every d32 output was flagged ("the reference has shape (1, 6, 7, 40), the
output (1, 6, 7, 40)": the padding was counted) and five of the six examples failed, each
judged by its plain error against a float result no quantized op matches to better than its
own rounding; hexagon_nn's ``Close_d32`` judges the excess over that rounding.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from hexscope.widgets.compare_panel import SCALE

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.hexgraph"))
BROKEN = {"saturating_range"}           # examples.json: "a range too narrow for its data"
# the overlay's colours past the tolerance ("≤ 4 tol" and "> 4 tol"): a node that fails
BEYOND = {color.name() for bound, color, _ in SCALE if bound > 1.0}
RED = SCALE[-1][1].name()


pytestmark = pytest.mark.usefixtures("bundled_plugins")     # padding_demo's user op


def test_the_broken_example_is_one_of_the_bundled_ones():
    assert BROKEN <= {p.stem for p in EXAMPLES} and len(EXAMPLES) >= 6


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_compared_with_the_float_reference_by_default(qtbot, window, path):
    assert window.files.open_graph(str(path))
    with qtbot.waitSignal(window.controller.idle, timeout=60000):
        window.debug.actions["run"].trigger()
    session = window.session
    assert session is not None and session.executor.finished and not session.executor.failed
    compare = window.compare
    panel = compare.panel
    assert panel.target.currentData() == "isolated"     # the default B: the float reference
    assert panel.tolerance.value() == 1.0                # and the default tolerance
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running is None and not panel.busy
                    and not compare._timer.isActive(), timeout=60000)  # noqa: SLF001
    comparison = panel.comparison
    assert comparison is not None and comparison.outputs, panel.summary.text()

    looks = window.scene.looks
    tinted = {node_id: look.overlay.name() for node_id, look in looks.items()
              if look.overlay is not None}
    assert tinted, "the canvas shows no comparison"
    failing = {node_id for node_id, color in tinted.items() if color in BEYOND}
    exceeding = {d.node_id for d in comparison.exceeding}
    summary = panel.summary.text()
    if path.stem in BROKEN:
        assert exceeding, f"{path.stem} is broken but passes: {summary}"
        assert any(tinted.get(node_id) == RED for node_id in exceeding), tinted
        assert f"{len(comparison.exceeding)} beyond 1 LSB" in summary
    else:
        detail = [(hex(d.node_id), d.note, d.metrics) for d in comparison.exceeding]
        assert not exceeding, f"{path.stem} is healthy but fails: {detail}"
        assert not failing, {hex(i): tinted[i] for i in failing}
        assert "0 beyond 1 LSB" in summary
