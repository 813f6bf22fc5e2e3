"""Screenshots of the real model, pymicro-wakeword's "hey jarvis": the operators the DSP
cannot run listed on opening (resources/screenshots/tflite_wakeword_problems.png), and the
model compared with TFLite up to the first of them (tflite_wakeword_compare.png).

    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb .venv/bin/python packaging/tflite_wakeword_screenshot.py

Opens tests/data/tflite/wakeword_hey_jarvis.tflite as File ▸ Open does, on its committed
input, steps into it, runs until the run stops at the first DEPTHWISE_CONV_2D (an input
without left padding, before its 5x1 filter), then compares with TFLite in the Compare panel
(B: TFLite model): the rows before that node, the worst selected, and the summary saying where
and why the run stopped. With no display it falls back to the offscreen platform.
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

from hexscope.engine.inputs import InputSource, input_sources, set_input_sources  # noqa: E402

MODEL = Path(__file__).resolve().parents[1] / "tests" / "data" / "tflite" / \
    "wakeword_hey_jarvis.tflite"
NAME = "tflite_wakeword_compare.png"
PROBLEMS = "tflite_wakeword_problems.png"


def main() -> int:
    window = shown_window()
    settle()
    if not window.files.open_graph(str(MODEL)):
        print("could not open", MODEL, file=sys.stderr)
        return 1
    # on opening, before any run: the operators the DSP cannot run, in Problems
    window.problems_dock.raise_()
    window.canvas.zoom_to_fit()
    settle(600)
    save_shot(window, PROBLEMS)
    # the model's input from its file; the variables' reads keep the import's random codes
    set_input_sources(window.graph, [InputSource("npy", str(MODEL.with_suffix(".input.npy"))),
                                     *input_sources(window.graph)[1:]])
    settle()
    for _ in range(6):
        wait_idle(window, "step")
    wait_idle(window, "run")
    compare_with_tflite(window)
    panel = window.compare.panel
    rows = panel.comparison.outputs if panel.comparison else []
    worst = max(range(len(rows)), key=lambda i: rows[i].metrics.max_lsb or 0, default=0)
    panel.table.selectRow(worst)        # the first conv's Relu, 1 LSB
    settle()
    window.canvas.zoom_to_fit()
    settle(600)
    save_shot(window, NAME)
    close_clean(window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
