"""Screenshots of a TFLite model in the app: resources/screenshots/tflite.png and
tflite_compare.png.

    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/tflite_screenshots.py

Opens tests/data/tflite/u8_relu_pools_concat.tflite as File ▸ Open does (the graph TFLite's
Hexagon delegate builds for it), runs it on the model's input, and selects a pool: the
inspector says which TFLite operator and tensor the node comes from. Then opens
tests/data/tflite/COMPARE_MODEL.tflite, steps into it, runs the rest, and compares it with
TFLite in the Compare panel (B: TFLite), the first divergence selected. With no display it
falls back to the offscreen platform.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from screenshots import (  # noqa: E402
    close_clean,
    compare_with_tflite,
    save_shot,
    settle,
    shown_window,
    wait_idle,
)

from hexscope.engine.inputs import InputSource, set_input_sources  # noqa: E402

MODEL = Path(__file__).resolve().parents[1] / "tests" / "data" / "tflite" / \
    "u8_relu_pools_concat.tflite"


COMPARE_MODEL = MODEL.with_name("pad_slice_pack.tflite")


def compare_shot(window) -> None:  # type: ignore[no-untyped-def]
    """A model opened, stepped, run and compared with TFLite: tflite_compare.png."""
    window.files.open_graph(str(COMPARE_MODEL))
    set_input_sources(window.graph, [InputSource(
        "npy", str(COMPARE_MODEL.with_suffix(".input.npy")))])
    settle()
    for _ in range(4):
        wait_idle(window, "step")
    wait_idle(window, "run")
    compare_with_tflite(window)
    window.compare.panel.go_to_first_divergence()
    settle()
    window.canvas.zoom_to_fit()
    settle(600)
    save_shot(window, "tflite_compare.png")


def main() -> int:
    window = shown_window()
    settle()
    if not window.files.open_graph(str(MODEL)):
        print("could not open", MODEL, file=sys.stderr)
        return 1
    set_input_sources(window.graph, [InputSource("npy", str(MODEL.with_suffix(".input.npy")))])
    settle()
    wait_idle(window, "run")
    pool = next(n.node_id for n in window.graph if n.label == "MaxPool2d_1")
    window.select_node(pool)
    window.canvas.zoom_to_fit()
    settle(600)
    save_shot(window, "tflite.png")
    window.undo_stack.setClean()
    window.files.meta_dirty = False
    compare_shot(window)
    close_clean(window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
