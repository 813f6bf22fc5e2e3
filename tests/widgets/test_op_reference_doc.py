"""The docs panel shows each op's float reference next to its doc (issue 12)."""

from __future__ import annotations

from hexscope.engine.ops.registry import REGISTRY
from hexscope.widgets.op_palette import doc_html


def test_docs_panel_shows_the_reference():
    assert "Float reference: max(x, 0) of the dequantized input." in doc_html(
        REGISTRY.get("QuantizedRelu_8"))
    assert "no float meaning" not in doc_html(REGISTRY.get("Check"))
    assert "Float reference: none (a test assertion" in doc_html(REGISTRY.get("Check"))
