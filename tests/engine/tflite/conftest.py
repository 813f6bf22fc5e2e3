from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "tflite"

pytest.importorskip("tflite", reason="the 'tflite' extra is not installed: "
                    "pip install 'hexscope[tflite]'")


@pytest.fixture
def model_path() -> Callable[[str], Path]:
    """The committed test model NAME (tests/data/tflite/NAME.tflite)."""
    return lambda name: DATA / f"{name}.tflite"
