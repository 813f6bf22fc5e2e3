"""pyqtgraph plots in the application's palette.

pyqtgraph draws its plots black with grey axes whatever the palette: in the light theme the
range plot, the histogram, the heatmap and the memory picture were black panes in a light
window. :func:`follow_palette` gives a plot widget the palette's base colour as background
and its text colour for axes, ticks and labels, and again whenever the palette changes (the
theme switch).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QGraphicsView

_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange,
           QEvent.Type.StyleChange)


class _PlotTheme(QObject):
    """Restyles its view on every palette change (an event filter on the view)."""

    def __init__(self, view: QGraphicsView) -> None:
        super().__init__(view)
        self._view = view
        view.installEventFilter(self)
        self.apply()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self._view and event.type() in _EVENTS:
            self.apply()
        return False

    def apply(self) -> None:
        palette = self._view.palette()
        ground = palette.color(QPalette.ColorRole.Base)
        ink = palette.color(QPalette.ColorRole.Text)
        self._view.setBackground(ground)  # type: ignore[attr-defined]
        scene = self._view.scene()
        if scene is None:
            return
        for item in scene.items():
            if isinstance(item, pg.AxisItem):
                item.setPen(ink)
                item.setTextPen(ink)
                item.label.setDefaultTextColor(ink)
            elif isinstance(item, pg.LegendItem):
                item.setLabelTextColor(ink)
                for _sample, label in item.items:      # the labels already made keep theirs
                    label.setText(label.text, color=ink.name())


def follow_palette(view: QGraphicsView) -> None:
    """Draw ``view`` (a pyqtgraph PlotWidget or GraphicsLayoutWidget) in the palette's
    colours, now and after every palette change. Call it once its plots are added."""
    view._hexscope_plot_theme = _PlotTheme(view)  # type: ignore[attr-defined]


__all__ = ["follow_palette"]
