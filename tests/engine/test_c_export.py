"""C export (graph spec §3.2): import(export(g)) == g, const bytes included, and the file
compiles against a hexagon_nn header written from the spec (gcc -fsyntax-only)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine.errors import GraphError
from hexscope.engine.graph import Graph
from hexscope.engine.io.c_export import export_c, export_c_text
from hexscope.engine.io.c_import import import_c, import_c_text
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops.op_ids import OP_IDS, OP_NAMES

DATA = Path(__file__).resolve().parents[1] / "data" / "c"
GCC = shutil.which("gcc")


def same_graph(a: Graph, b: Graph) -> None:
    assert a.order == b.order
    for x, y in zip(a, b, strict=True):
        assert (x.node_id, x.op, x.inputs, x.outputs, x.padding, x.label) == (
            y.node_id, y.op, y.inputs, y.outputs, y.padding, y.label)
        assert (x.const is None) == (y.const is None)
        if x.const is not None:
            assert x.const.same_as(y.const), f"const 0x{x.node_id:x} differs"


def gcc_check(*files: Path) -> None:
    result = subprocess.run([GCC, "-fsyntax-only", "-Wall", "-Werror", "-I", str(DATA),
                             *map(str, files)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", ["small_style.c", "med_style.c", "constructs.c"])
def test_round_trip_of_hand_written_files(name, tmp_path):
    g = import_c(DATA / name)
    out = tmp_path / "out.c"
    export_c(g, out)
    same_graph(g, import_c(out))


@pytest.mark.skipif(GCC is None, reason="gcc is not installed")
def test_hand_written_files_and_exports_compile(tmp_path):
    files = []
    for name in ("small_style.c", "med_style.c", "constructs.c"):
        out = tmp_path / f"exp_{name}"
        export_c(import_c(DATA / name), out)
        files += [DATA / name, out]
    for f in files:
        gcc_check(f)


def test_header_op_enum_matches_the_op_table():
    text = (DATA / "hexagon_nn_ops.h").read_text()
    names = re.findall(r"^\tOP_(\w+),$", text, re.M)
    assert names == list(OP_NAMES)
    assert len(names) == 434                # graph spec §2.14: ids 0..433


def test_export_refuses_what_hexagon_nn_cannot_express():
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x11, "MyUserOp", inputs=[(0x10, 0)], outputs=1)
    with pytest.raises(GraphError, match="MyUserOp"):
        export_c_text(g)
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x10, "Nop", inputs=[(0x10, 0)], outputs=1)
    with pytest.raises(GraphError, match="used twice"):
        export_c_text(g)
    g = Graph()
    g.append_node(0x10, "Const", outputs=1)
    with pytest.raises(GraphError, match="append_const_node"):
        export_c_text(g)


def test_non_finite_and_negative_zero_floats_round_trip():
    g = Graph()
    values = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4028235e38], np.float32)
    g.append_const_node(0x1, values.reshape(1, 1, 2, 3), label="odd floats")
    back = import_c_text(export_c_text(g), "x.c")
    assert back.node(1).label == "odd floats"
    assert back.node(1).const.buffer.tobytes() == values.tobytes()   # np.nan is canonical


# random small graphs -----------------------------------------------------------------------
PLAIN_OPS = [n for n in OP_NAMES[:60] if n != "Const"]
DTYPES = [np.float32, np.int32, np.uint8, np.int8, np.int16, np.uint16]
labels = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]),
                 max_size=12)


@st.composite
def const_data(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=4, max_size=4)))
    n = int(np.prod(shape))
    if dtype is np.float32:
        elems = st.floats(width=32, allow_nan=False)
    else:
        info = np.iinfo(dtype)
        elems = st.integers(int(info.min), int(info.max))
    return np.array(draw(st.lists(elems, min_size=n, max_size=n)), dtype).reshape(shape)


@st.composite
def output_defs(draw):
    rank = draw(st.integers(0, 8))
    sizes = tuple(draw(st.lists(st.integers(0, 2**32 - 1), min_size=rank, max_size=rank)))
    return OutputDef(sizes, draw(st.integers(0, 16)), draw(st.integers(-2**31, 2**31 - 1)),
                     draw(st.sampled_from([0.0, 0.5, 1e-3, -2.25])))


@st.composite
def graphs(draw):
    g = Graph()
    ids = draw(st.lists(st.integers(1, 0xF0000000), min_size=1, max_size=8, unique=True))
    made: list[tuple[int, int]] = []          # (id, output count)
    for node_id in ids:
        label = draw(labels)
        if draw(st.booleans()):
            if draw(st.booleans()):
                g.append_const_node(node_id, draw(const_data()), label=label)
            else:
                shape = draw(st.lists(st.integers(1, 9), min_size=4, max_size=4))
                g.append_const_node(node_id, shape=shape, label=label)
            made.append((node_id, 1))
            continue
        refs = [(src, draw(st.integers(0, n - 1))) for src, n in made if n
                and draw(st.booleans())]
        outs = draw(st.lists(output_defs(), max_size=3))
        g.append_node(node_id, draw(st.sampled_from(PLAIN_OPS)), refs, outs,
                      draw(st.sampled_from(list(Padding))), label=label)
        made.append((node_id, len(outs)))
    return g


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_import_of_export_gives_the_same_graph(g):
    same_graph(g, import_c_text(export_c_text(g), "x.c"))


@pytest.mark.skipif(GCC is None, reason="gcc is not installed")
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(graphs())
def test_random_exports_compile(tmp_path, g):
    if not any(not n.is_const for n in g):
        g.append_node(0xF000000, "Nop", outputs=1)
    out = tmp_path / "random.c"
    export_c(g, out)
    gcc_check(out)


def test_every_op_name_exports_to_its_enumerator():
    g = Graph()
    names = [n for n in OP_NAMES[:50] if n != "Const"]   # Consts are append_const_node
    for k, name in enumerate(names):
        g.append_node(0x100 + k, name, outputs=0)
    text = export_c_text(g)
    for name in names:
        assert f",OP_{name},NN_PAD_NA," in text
        assert OP_IDS[name] == OP_NAMES.index(name)
