"""Range panel, range plot and padding check panel (issue 5): saturation figures, sorting,
overlays and the listed padding readers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from hexscope.engine import DType, Graph, Layout, QuantRange, Tensor
from hexscope.engine.analysis.ranges import range_stats
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY, Category, Port, op
from hexscope.engine.plugins import load_plugin
from hexscope.widgets.padding_check_panel import INHERITS, READS, PaddingCheckPanel
from hexscope.widgets.range_panel import COLUMNS, RangePanel, saturation_color
from hexscope.widgets.range_plot import RangePlotView

PLUGIN = Path(__file__).resolve().parents[2] / "resources" / "plugins" / "peek_left.py"


def _stats():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, 1000).astype(np.uint8)
    a[:100] = 255                                   # 10 % at 255 (plus random ones)
    b = rng.integers(20, 40, 1000).astype(np.uint8)  # 20 codes used, nothing clipped
    c = np.zeros(1000, np.uint8)                     # relu-like zeros: not clipping
    return [range_stats(a, QuantRange(-2.0, 2.0), node_id=0x10, op="A", order=0),
            range_stats(b, QuantRange(-1.0, 1.0), node_id=0x11, op="B", order=1),
            range_stats(c, QuantRange(0.0, 6.0), node_id=0x12, op="C", order=2)], (a, b, c)


def test_range_panel_rows_figures_and_sorting(qtbot):
    stats, (a, b, c) = _stats()
    panel = RangePanel()
    qtbot.addWidget(panel)
    panel.set_stats(stats)
    m = panel.model
    assert m.rowCount() == 3
    col = COLUMNS.index("at 255 %")
    assert m.data(m.index(0, col)) == f"{100 * np.mean(a == 255):.2f}"
    assert m.data(m.index(1, COLUMNS.index("codes used"))) == str(len(set(b.tolist())))
    assert m.data(m.index(2, COLUMNS.index("clipped %"))) == "0.00"
    panel._table.sortByColumn(COLUMNS.index("clipped %"), Qt.SortOrder.DescendingOrder)
    assert panel.sorted_node_ids()[0] == 0x10
    with qtbot.waitSignal(panel.node_activated) as blocker:
        panel._table.clicked.emit(panel.model.index(0, 0))
    assert blocker.args == [0x10]


def test_range_panel_fits_its_columns_to_the_first_rows_and_keeps_the_users(qtbot):
    stats, _ = _stats()
    panel = RangePanel()
    qtbot.addWidget(panel)
    panel.resize(900, 300)
    panel.show()
    header = panel._table.horizontalHeader()
    before = header.sectionSize(1)
    panel.set_stats(stats)                      # the first rows: fitted to their text
    fitted = header.sectionSize(1)
    metrics = panel._table.fontMetrics()
    assert fitted >= metrics.horizontalAdvance(panel.model.data(panel.model.index(0, 1)))
    header.resizeSection(1, fitted + 77)        # the user widens a column
    panel.set_stats(stats[:2])                  # the next run: not fitted again
    assert header.sectionSize(1) == fitted + 77
    panel.set_stats([])
    panel.set_stats(stats)                      # rows after none (a new graph): fitted
    assert header.sectionSize(1) == fitted and before > 0


def test_range_panel_overlay_colours_by_clipping(qtbot):
    stats, (a, _, _) = _stats()
    panel = RangePanel()
    qtbot.addWidget(panel)
    panel.set_stats(stats)
    with qtbot.waitSignal(panel.overlay_changed) as blocker:
        panel.set_overlay_kind(1)
    colors, legend = blocker.args
    share = (np.sum(a == 255) + np.sum(a == 0)) / a.size
    assert colors[0x10] == saturation_color(share) and colors[0x10].red() > 200
    assert colors[0x12] == saturation_color(0.0)
    assert len(legend) == 3
    with qtbot.waitSignal(panel.overlay_changed) as blocker:
        panel.set_overlay_kind(0)
    assert blocker.args[0] is None


def test_range_plot_data_is_min_max_and_clipped_share(qtbot):
    stats, (a, _, _) = _stats()
    plot = RangePlotView()
    qtbot.addWidget(plot)
    plot.set_stats(stats)
    np.testing.assert_array_equal(plot.mins, [-2.0, -1.0, 0.0])
    np.testing.assert_array_equal(plot.maxs, [2.0, 1.0, 6.0])
    expected = 100 * (np.sum(a == 255) + np.sum(a == 0)) / a.size
    np.testing.assert_allclose(plot.clipped, [expected, 0.0, 0.0])


TO_D32 = "TestViewsToD32"


@pytest.fixture(scope="module")
def peek_graph():
    @op(TO_D32, Category.USER, user=True, d32_output=True, inputs=(Port("x", DType.QUINT8),),
        outputs=(Port("y", DType.QUINT8, layout=Layout.D32),))
    def to_d32(ctx: KernelContext, x: Tensor):
        """Test op: to d32."""
        return (x.to_d32(fill=ctx.padding_fill),)

    if "PeekLeft_8_d32" not in REGISTRY:
        load_plugin(PLUGIN)
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 3, 4, 2), 1)])
    g.append_node(0x101, TO_D32, inputs=[(0x100, 0)], outputs=1)
    g.append_const_node(0x10, np.array([0.0], np.float32))
    g.append_const_node(0x11, np.array([1.0], np.float32))
    g.append_node(0x102, "PeekLeft_8_d32", inputs=[(0x101, 0), (0x10, 0), (0x11, 0)],
                  outputs=3)
    g.append_node(0x103, "PeekLeft_8_d32", inputs=[(0x102, 0), (0x10, 0), (0x11, 0)],
                  outputs=3)
    g.append_node(0x104, "OUTPUT", inputs=[(0x103, 1)])
    yield g
    REGISTRY.unregister(TO_D32)


def test_padding_check_panel_lists_readers_and_overlay(qtbot, peek_graph):
    x = np.random.default_rng(2).integers(1, 255, (1, 3, 4, 2)).astype(np.uint8)
    panel = PaddingCheckPanel()
    qtbot.addWidget(panel)
    panel.set_graph(peek_graph, lambda: [x])
    with qtbot.waitSignal(panel.overlay_changed) as blocker:
        report = panel.run_check()
    # Both peeks read padding, but the second one's input already differs between the runs,
    # so the check reports only the first place the difference appears (issue 5).
    assert report.readers == [0x102] and report.inherited == [0x103]
    assert panel.listed_ids() == [0x102, 0x103]
    colors, legend = blocker.args
    assert colors == {0x102: READS, 0x103: INHERITS}
    assert legend[0][0] == "reads padding"


def test_a_range_far_wider_than_its_data_is_flagged_like_clipping(qtbot):
    """b's values span codes 20..39 (20 codes of 256): its range wastes 3+ bits. a spans all
    codes, c is one code but a relu's exact zeros in a small span are flagged too (a range
    of 0..6 holding only zeros is indeed far too wide for that data)."""
    stats, (a, b, c) = _stats()
    assert (stats[1].code_low, stats[1].code_high, stats[1].code_span) == (
        int(b.min()), int(b.max()), int(b.max()) - int(b.min()) + 1)
    assert [s.too_wide for s in stats] == [False, True, True]
    small = range_stats(np.full(10, 7, np.uint8), QuantRange(-1.0, 1.0))
    assert not small.too_wide                      # 10 elements cannot tell
    panel = RangePanel()
    qtbot.addWidget(panel)
    panel.set_stats(stats)
    m = panel.model
    span = COLUMNS.index("code span")
    assert m.data(m.index(1, span)) == f"{stats[1].code_span} too wide"
    assert m.data(m.index(0, span)) == "256"
    assert "far wider than the data" in m.data(m.index(1, span), Qt.ItemDataRole.ToolTipRole)
    assert "2 too wide" in panel._summary.text()
