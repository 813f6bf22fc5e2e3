"""User-op plugins: loading, marking, all-or-nothing failure with file:line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine import Graph
from hexscope.engine.errors import PluginError
from hexscope.engine.ops import REGISTRY
from hexscope.engine.plugins import (
    default_plugin_dir,
    load_plugin,
    load_plugins_from,
    unload_plugin,
)
from hexscope.engine.session import Session

HEADER = """\
from hexscope.engine.dtypes import DType
from hexscope.engine.ops.registry import Category, Port, op
"""


def op_source(name: str, factor: float = 2.0) -> str:
    return textwrap.dedent(f'''
        @op("{name}", Category.USER, inputs=(Port("x", DType.FLOAT32),),
            outputs=(Port("y", DType.FLOAT32),), user=True)
        def kernel_{name.lower()}(ctx, x):
            """Multiplies by {factor}."""
            return (x.array * {factor},)
        ''')


@pytest.fixture
def cleanup():
    names: list[str] = []
    yield names
    for name in names:
        if name in REGISTRY:
            REGISTRY.unregister(name)


def write(tmp_path: Path, filename: str, body: str) -> Path:
    path = tmp_path / filename
    path.write_text(HEADER + body)
    return path


def test_plugin_ops_are_registered_as_user_ops_and_run(tmp_path, cleanup):
    path = write(tmp_path, "scale.py", op_source("PlugScale_f"))
    cleanup.append("PlugScale_f")
    (spec,) = load_plugin(path)
    assert spec.user and spec.op_id is None and REGISTRY.get("PlugScale_f") is spec
    assert spec.summary == "Multiplies by 2.0."
    # the @op line: after the header and the blank first line of the body
    assert spec.source == f"{path.resolve()}:{HEADER.count(chr(10)) + 2}"
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    g.append_node(0x20, "PlugScale_f", inputs=[(0x10, 0)], outputs=1)
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    (out,) = Session(g).execute([np.array([1.5, -2.0], np.float32)])
    assert out.array.reshape(-1).tolist() == [3.0, -4.0]


def test_syntax_error_names_file_and_line(tmp_path, cleanup):
    path = write(tmp_path, "bad.py", "x = 1\ndef broken(:\n")
    with pytest.raises(PluginError) as info:
        load_plugin(path)
    assert f"{path.resolve()}:{HEADER.count(chr(10)) + 2}" in str(info.value)
    assert "SyntaxError" in str(info.value)


def test_exception_rolls_back_ops_declared_before_it(tmp_path, cleanup):
    body = op_source("PlugFirst_f") + "\nraise RuntimeError('boom')\n"
    path = write(tmp_path, "boom.py", body)
    cleanup.append("PlugFirst_f")
    with pytest.raises(PluginError, match="RuntimeError: boom") as info:
        load_plugin(path)
    line = (HEADER + body).splitlines().index("raise RuntimeError('boom')") + 1
    assert f"boom.py:{line}" in str(info.value)
    assert "PlugFirst_f" not in REGISTRY


def test_duplicate_name_fails_and_registers_nothing(tmp_path, cleanup):
    path = write(tmp_path, "dup.py", op_source("PlugOnly_f") + op_source("Tanh_f"))
    cleanup.append("PlugOnly_f")
    tanh = REGISTRY.get("Tanh_f")
    with pytest.raises(PluginError, match="already declared") as info:
        load_plugin(path)
    assert "dup.py:" in str(info.value)
    assert "PlugOnly_f" not in REGISTRY and REGISTRY.get("Tanh_f") is tanh


def test_loading_the_same_plugin_twice_is_a_duplicate(tmp_path, cleanup):
    path = write(tmp_path, "twice.py", op_source("PlugTwice_f"))
    cleanup.append("PlugTwice_f")
    specs = load_plugin(path)
    with pytest.raises(PluginError):
        load_plugin(path)
    unload_plugin(specs)
    assert "PlugTwice_f" not in REGISTRY
    assert [s.name for s in load_plugin(path)] == ["PlugTwice_f"]


def test_op_without_user_flag_needs_a_hexagon_nn_name(tmp_path, cleanup):
    body = op_source("PlugNoFlag_f").replace(", user=True", "")
    with pytest.raises(PluginError, match="declare it as a user op"):
        load_plugin(write(tmp_path, "noflag.py", body))


def test_missing_file_is_a_plugin_error(tmp_path):
    with pytest.raises(PluginError, match="nothere.py"):
        load_plugin(tmp_path / "nothere.py")


def test_load_plugins_from_folder_collects_errors(tmp_path, cleanup):
    write(tmp_path, "a_good.py", op_source("PlugGoodA_f"))
    write(tmp_path, "b_bad.py", "raise ValueError('nope')\n")
    write(tmp_path, "_private.py", op_source("PlugPrivate_f"))
    cleanup.extend(["PlugGoodA_f", "PlugPrivate_f"])
    errors: list[PluginError] = []
    loaded = load_plugins_from(tmp_path, errors=errors)
    assert [s.name for s in loaded] == ["PlugGoodA_f"]
    assert len(errors) == 1 and "b_bad.py" in str(errors[0])
    assert "PlugPrivate_f" not in REGISTRY


def test_load_plugins_from_raises_without_error_list(tmp_path, cleanup):
    write(tmp_path, "bad.py", "1/0\n")
    with pytest.raises(PluginError, match="ZeroDivisionError"):
        load_plugins_from(tmp_path)


def test_missing_folder_loads_nothing(tmp_path):
    assert load_plugins_from(tmp_path / "none") == []


def test_default_plugin_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_plugin_dir() == tmp_path / "hexscope" / "plugins"
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_plugin_dir() == tmp_path / "home" / ".config" / "hexscope" / "plugins"


def test_standard_plugins_load_bundled_and_user_ones_once(tmp_path, monkeypatch):
    from hexscope.engine.plugins import load_standard_plugins

    user_dir = tmp_path / "hexscope" / "plugins"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(
        "from hexscope.engine.ops.registry import Category, Port, op\n"
        "@op('MyScale_f', Category.USER, user=True, inputs=(Port('x'),), outputs=(Port('y'),))\n"
        "def my_scale(ctx, x):\n"
        "    '''Doubles x.'''\n"
        "    return [x.array * 2]\n")
    (user_dir / "broken.py").write_text("def oops(:\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    errors = []
    try:
        names = {s.name for s in load_standard_plugins(errors=errors)}
        assert {"MyScale_f", "PeekLeft_8_d32"} <= names | set(REGISTRY.names())
        assert REGISTRY.get("MyScale_f").user
        assert len(errors) == 1 and "broken.py:1" in str(errors[0])
        assert load_standard_plugins(errors=[]) == []          # second call loads nothing
    finally:
        for name in ("MyScale_f", "PeekLeft_8_d32"):
            if name in REGISTRY:
                REGISTRY.unregister(name)


def test_loading_a_folder_twice_loads_its_files_once(tmp_path):
    # the command line loads the bundled plugins at every start (in-process tests call it
    # many times): a folder loaded again is no DuplicateOpError, and nothing new comes
    from hexscope.engine.plugins import load_plugins_from, unload_plugin

    (tmp_path / "twice.py").write_text(
        "from hexscope.engine.ops.registry import Category, Port, op\n"
        "from hexscope.engine.dtypes import DType\n"
        "@op('TwiceLoaded_8', Category.USER, inputs=(Port('x', DType.QUINT8),),\n"
        "    outputs=(Port('y', DType.QUINT8),), user=True)\n"
        "def twice(ctx, x):\n"
        "    return (x,)\n", encoding="utf-8")
    first = load_plugins_from(tmp_path)
    try:
        assert [s.name for s in first] == ["TwiceLoaded_8"]
        assert load_plugins_from(tmp_path) == []
    finally:
        unload_plugin(first)
