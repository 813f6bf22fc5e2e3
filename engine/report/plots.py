"""The report's plots: a value per node in plan order (error, time), and the worst tensor
as A, B and A−B."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hexscope.engine.report.figures import figure_svg, new_figure


def per_node_plot(values: Sequence[float | None], title: str, ylabel: str,
                  tolerance: float | None = None, marked: int | None = None,
                  marked_label: str = "", bad: Sequence[bool] | None = None) -> str:
    """``values`` (one per node output, in plan order) as bars on a symlog axis, with the
    tolerance as a line and the output ``marked`` (the first divergence) named."""
    y = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    fig = new_figure(10.0, 2.8)
    ax = fig.add_subplot()
    x = np.arange(y.size)
    colours = ["#d84c4c" if b else "#5b86c5" for b in (bad or [False] * y.size)]
    shown = np.where(np.isfinite(y), y, 0.0)
    if y.size <= 400:
        ax.bar(x, shown, width=0.85, color=colours, linewidth=0)
    else:                         # thousands of bars: a line reads better than slivers
        ax.plot(x, shown, lw=0.6, color="#5b86c5")
        worst = np.flatnonzero(np.asarray(bad or [False] * y.size))
        ax.scatter(worst, shown[worst], s=4, color="#d84c4c", zorder=3)
    ax.set_yscale("symlog", linthresh=1.0)
    if tolerance is not None and tolerance > 0:
        ax.axhline(tolerance, color="#c62828", lw=0.8, ls="--",
                   label=f"tolerance {tolerance:g}")
        ax.legend(loc="upper left", frameon=False, fontsize=8)
    if marked is not None:
        ax.axvline(marked, color="#c62828", lw=0.8)
        ax.annotate(marked_label, (marked, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(4, -12), textcoords="offset points", color="#c62828", fontsize=8)
    ax.set_title(title, loc="left")
    ax.set_xlabel("node output, in plan order")
    ax.set_ylabel(ylabel)
    ax.set_xlim(-1, max(1, y.size))
    ax.grid(axis="y", lw=0.3, alpha=0.6)
    return figure_svg(fig)


def as_image(values: np.ndarray, index: tuple[int, ...] | None) -> tuple[np.ndarray, str]:
    """A 2-D view of an NHWC tensor for a heatmap: the H x W plane of the batch and channel
    of ``index`` (the worst element), or the depth as one row when H x W is 1 x 1."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 4:
        return v.reshape(1, -1), "all elements"
    b, _, _, c = index if index is not None and len(index) == 4 else (0, 0, 0, 0)
    if v.shape[1] * v.shape[2] > 1:
        return v[b, :, :, c], f"batch {b}, channel {c} (H x W)"
    return v[b, 0, 0, :].reshape(1, -1), f"batch {b} (depth)"


def tensor_plot(a: np.ndarray, b: np.ndarray, index: tuple[int, ...] | None,
                title: str, unit: str = "") -> str:
    """A, B and A−B side by side as heatmaps (A and B on one scale)."""
    ia, where = as_image(a, index)
    ib, _ = as_image(b, index)
    diff = ia - ib
    fig = new_figure(10.0, 3.2)
    axes = fig.subplots(1, 3)
    finite = np.concatenate([ia[np.isfinite(ia)], ib[np.isfinite(ib)]])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    spread = float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else 1.0
    panels = ((ia, "A", "viridis", lo, hi), (ib, "B", "viridis", lo, hi),
              (diff, "A − B", "RdBu_r", -spread or -1.0, spread or 1.0))
    for ax, (img, name, cmap, vmin, vmax) in zip(axes, panels, strict=True):
        shown = ax.imshow(img, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto",
                          interpolation="nearest")
        ax.set_title(name, loc="left")
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(shown, ax=ax, shrink=0.85, label=unit)
    fig.suptitle(f"{title} — {where}", x=0.01, ha="left", fontsize=10)
    return figure_svg(fig)


__all__ = ["as_image", "per_node_plot", "tensor_plot"]
