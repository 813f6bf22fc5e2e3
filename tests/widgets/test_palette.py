"""The op palette: counts that follow the search, user ops marked with their source."""

from __future__ import annotations

import textwrap

import pytest
from PySide6.QtCore import Qt

from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.plugins import load_plugin, unload_plugin
from hexscope.widgets.graph_canvas import OP_MIME
from hexscope.widgets.op_palette import NAME_ROLE, OpPalette, doc_html


def _expected_groups(query: str) -> list[str]:
    """Header texts computed from the registry, independently of the widget."""
    texts = []
    for category, specs in REGISTRY.by_category().items():
        hits = [s for s in specs if not query or query in s.name.lower()
                or query in s.summary.lower() or any(query in a.lower() for a in s.aliases)]
        if hits:
            count = f"{len(hits)} of {len(specs)}" if query and len(hits) < len(specs) \
                else str(len(specs))
            texts.append(f"{category.value} ({count})")
    return texts


def test_category_counts_follow_the_search(qtbot):
    p = OpPalette()
    qtbot.addWidget(p)
    assert p.group_texts() == _expected_groups("")
    p.search.setText("quantized")
    assert p.group_texts() == _expected_groups("quantized")
    assert any(" of " in t for t in p.group_texts())
    shown = [int(t.split("(")[1].rstrip(")").split()[0]) for t in p.group_texts()]
    assert sum(shown) == len(p.visible_ops())
    p.search.setText("")
    assert p.group_texts() == _expected_groups("")


def test_mime_data_names_the_op(qtbot):
    p = OpPalette()
    qtbot.addWidget(p)
    item = p.tree.findItems("Nop", Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)[0]
    mime = p.tree.mimeData([item])
    assert bytes(mime.data(OP_MIME).data()) == b"Nop" and mime.text() == "Nop"
    assert OP_MIME in p.tree.mimeTypes()


@pytest.fixture
def user_op(tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(textwrap.dedent('''
        from hexscope.engine.dtypes import DType
        from hexscope.engine.ops.registry import Category, Port, op


        @op("PaletteScale2_f", Category.FLOAT, inputs=(Port("x", DType.FLOAT32),),
            outputs=(Port("y", DType.FLOAT32),), user=True)
        def scale2(ctx, x):
            """Doubles every element."""
            return (x.array * 2,)
        '''))
    specs = load_plugin(path)
    yield specs[0], path
    unload_plugin(specs)


def test_user_ops_are_marked_with_their_file_and_line(qtbot, user_op):
    spec, path = user_op
    p = OpPalette()
    qtbot.addWidget(p)
    items = [it for it in p.tree.findItems("PaletteScale2_f", Qt.MatchFlag.MatchStartsWith
                                           | Qt.MatchFlag.MatchRecursive)]
    assert len(items) == 1
    item = items[0]
    assert item.data(0, NAME_ROLE) == "PaletteScale2_f" and "user" in item.text(0)
    assert item.toolTip(0).startswith(f"user op from {path.resolve()}:")
    assert spec.source in item.toolTip(0) and "Doubles every element." in item.toolTip(0)
    assert "user op from" in doc_html(spec)
    nop = p.tree.findItems("Nop", Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)[0]
    assert "user" not in nop.text(0) and not nop.toolTip(0).startswith("user op")
