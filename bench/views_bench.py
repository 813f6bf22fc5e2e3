"""Benchmark: selecting a node whose output is 1x149x149x32 d32 updates the tensor inspector
(heatmap, table, histogram) and the d32 padding view; the target is < 50 ms. Also times one
hover read-out, and the Ranges plot (issue 32): showing the ranges of N quantized outputs
(3,000 by default) and repainting the plot, whole and zoomed in.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/views_bench.py [--ranges N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from hexscope.engine import Tensor  # noqa: E402
from hexscope.engine.d32 import converter_padding  # noqa: E402
from hexscope.widgets.d32_view import D32PaddingView  # noqa: E402
from hexscope.widgets.tensor_inspector import TensorInspector  # noqa: E402


def _outputs(rng: np.random.Generator, k: int, w_left: int = 4) -> list[Tensor]:
    codes = rng.integers(0, 256, (1, 149, 149, 32)).astype(np.uint8)
    pad = converter_padding(codes.shape, w_left=w_left)
    return [Tensor.from_array(codes).to_d32(pad, fill=0xA5).readonly(),
            Tensor.scalar(-1.0 - k), Tensor.scalar(2.0 + k)]


def _select_times(app, inspector, d32, tensors, repeats: int) -> list[float]:
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        inspector.set_outputs(f"node {i}", tensors[i % 2])
        d32.set_tensor(inspector.tensor, inspector.qrange)
        inspector.repaint()
        d32.repaint()
        app.processEvents()
        times.append((time.perf_counter() - start) * 1e3)
    return times[1:]


def main(repeats: int = 15) -> None:
    app = QApplication.instance() or QApplication([])
    rng = np.random.default_rng(0)
    inspector, d32 = TensorInspector(), D32PaddingView()
    for w in (inspector, d32):
        w.resize(900, 600)
        w.show()
    app.processEvents()
    # Same geometry (as when clicking along a chain of same-shape nodes): the padding tint is
    # reused. Different left padding: everything is recomputed.
    same = _select_times(app, inspector, d32, [_outputs(rng, 0), _outputs(rng, 1)], repeats)
    other = _select_times(app, inspector, d32, [_outputs(rng, 0), _outputs(rng, 1, 8)],
                          repeats)
    for name, times in (("same geometry", same), ("geometry changes", other)):
        print(f"select 1x149x149x32 d32 node, {name} (inspector + d32 view, with repaint): "
              f"median {statistics.median(times):.1f} ms, max {max(times):.1f} ms over "
              f"{len(times)} selections (target < 50 ms)")
    hover = []
    for i in range(200):
        start = time.perf_counter()
        inspector.heatmap.readout_for((0, i % 149, (3 * i) % 149, i % 32))
        d32._on_hover(d32.picture.pixel(i % 157, (37 * i) % 4992))
        hover.append((time.perf_counter() - start) * 1e3)
    print(f"hover read-out (heatmap + d32 view): median {statistics.median(hover):.3f} ms")


def _range_stats(n: int, rng: np.random.Generator) -> list:
    from hexscope.engine.analysis.ranges import RangeStats

    lows = -rng.uniform(0, 8, n)
    highs = rng.uniform(0.5, 12, n)
    return [RangeStats(node_id=0x1000 + k, op="QuantizedRelu_8", output=0, order=k,
                       min=float(lo), max=float(hi), stepsize=float((hi - lo) / 255),
                       zero_code=0, zero_exact=True, elements=4096, distinct=200,
                       share_0=float(rng.uniform(0, 0.05)), share_255=float(rng.uniform(0, 0.05)))
            for k, (lo, hi) in enumerate(zip(lows, highs, strict=True))]


def ranges(n: int, repeats: int = 10) -> None:
    """The Ranges plot with ``n`` outputs: set_stats, then a repaint of the whole plot and
    of a zoomed-in part (median of ``repeats``)."""
    from hexscope.widgets.range_plot import RangePlotView

    app = QApplication.instance() or QApplication([])
    plot = RangePlotView()
    plot.resize(1000, 320)
    plot.show()
    app.processEvents()
    stats = _range_stats(n, np.random.default_rng(0))
    start = time.perf_counter()
    plot.set_stats(stats)
    app.processEvents()
    shown = (time.perf_counter() - start) * 1e3
    view = plot.findChild(type(plot._plot))

    def repaints() -> list[float]:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            view.viewport().repaint()
            times.append((time.perf_counter() - start) * 1e3)
        return times

    whole = repaints()
    plot._plot.plotItem.setXRange(n / 2, n / 2 + 100, padding=0)
    app.processEvents()
    part = repaints()
    print(f"Ranges plot, {n} outputs: set_stats and first paint {shown:.0f} ms; repaint: "
          f"whole {statistics.median(whole):.1f} ms, 100 outputs zoomed in "
          f"{statistics.median(part):.1f} ms (median of {repeats})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranges", type=int, metavar="N",
                        help="only the Ranges plot, with N outputs (e.g. 3000)")
    args = parser.parse_args()
    if args.ranges:
        ranges(args.ranges)
    else:
        main()
        ranges(3000)
