"""Screenshot of the real model that runs end to end, BlazeFace (MediaPipe's short-range face
detector quantized to int8, tests/data/tflite/blazeface.tflite), compared with TFLite:
resources/screenshots/tflite_blazeface_compare.png.

    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/tflite_blazeface_screenshot.py

Opens the model as File ▸ Open does, on its committed input (a drawn face-like picture), runs
it, compares with TFLite in the Compare panel (B: TFLite model) and selects the first
divergence (the first convolution). With no display it falls back to the offscreen platform.
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

MODEL = Path(__file__).resolve().parents[1] / "tests" / "data" / "tflite" / "blazeface.tflite"
NAME = "tflite_blazeface_compare.png"


def main() -> int:
    window = shown_window()
    settle()
    if not window.files.open_graph(str(MODEL)):
        print("could not open", MODEL, file=sys.stderr)
        return 1
    set_input_sources(window.graph, [InputSource("npy", str(MODEL.with_suffix(".input.npy")))])
    settle()
    wait_idle(window, "run")
    compare_with_tflite(window)
    window.compare.panel.go_to_first_divergence()      # the first convolution
    settle()
    window.canvas.zoom_to_fit()
    settle(600)
    save_shot(window, NAME)
    close_clean(window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
