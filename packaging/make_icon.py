"""Draw Hexscope's icon: ``resources/icons/hexscope.svg`` and PNGs rendered from it with Qt.

The glyph is a hexagon (hexagon_nn) holding a small dataflow graph: an input node feeding two
ops that meet again in an output, the shape of a graph being stepped through. Run it again
after changing the drawing: ``.venv/bin/python packaging/make_icon.py``.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
PNG_SIZES = (16, 32, 48, 64, 128, 256)
VIEW = 256


def _hexagon(cx: float, cy: float, r: float) -> str:
    # Pointy-top hexagon (a corner straight up), so the graph inside runs top to bottom.
    corners = [(cx + r * math.cos(math.radians(60 * k - 90)),
                cy + r * math.sin(math.radians(60 * k - 90))) for k in range(6)]
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in corners)


def icon_svg() -> str:
    """The icon as SVG text (256 x 256 view box)."""
    nodes = {"in": (128, 66), "a": (82, 128), "b": (174, 128), "out": (128, 190)}
    edges = [("in", "a"), ("in", "b"), ("a", "out"), ("b", "out")]
    lines = "".join(
        f'<line x1="{nodes[s][0]}" y1="{nodes[s][1]}" x2="{nodes[d][0]}" y2="{nodes[d][1]}"/>'
        for s, d in edges)
    dots = "".join(f'<circle cx="{x}" cy="{y}" r="{22 if k in ("a", "b") else 19}"/>'
                   for k, (x, y) in nodes.items())
    current = nodes["b"]
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{VIEW}" height="{VIEW}" \
viewBox="0 0 {VIEW} {VIEW}">
  <defs>
    <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#2f7fc1"/>
      <stop offset="1" stop-color="#1b4f86"/>
    </linearGradient>
  </defs>
  <polygon points="{_hexagon(128, 128, 122)}" fill="url(#bg)" stroke="#12375e" \
stroke-width="6" stroke-linejoin="round"/>
  <g stroke="#e8f1fa" stroke-width="11" stroke-linecap="round">{lines}</g>
  <g fill="#ffffff" stroke="#12375e" stroke-width="5">{dots}</g>
  <circle cx="{current[0]}" cy="{current[1]}" r="12" fill="#f0a020"/>
</svg>
"""


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841
    ICONS.mkdir(parents=True, exist_ok=True)
    svg = icon_svg()
    (ICONS / "hexscope.svg").write_text(svg, encoding="utf-8")
    renderer = QSvgRenderer(QByteArray(svg.encode()))
    if not renderer.isValid():
        print("make_icon: Qt could not read the SVG", file=sys.stderr)
        return 1
    for size in PNG_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        image.save(str(ICONS / f"hexscope-{size}.png"))
    print(f"make_icon: wrote {ICONS}/hexscope.svg and {len(PNG_SIZES)} PNGs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
