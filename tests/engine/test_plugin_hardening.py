"""Hostile or unlucky plugins (issue 33): each is one PluginError naming the file, nothing it
declared stays registered, and a Ctrl+C while it runs is still a KeyboardInterrupt."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from hexscope.engine.errors import PluginError
from hexscope.engine.ops import REGISTRY
from hexscope.engine.plugins import (
    load_plugin,
    load_plugins_from,
    load_standard_plugins,
    loaded_plugins,
    unload_plugin,
)

HEADER = """\
from hexscope.engine.dtypes import DType
from hexscope.engine.ops.registry import Category, Port, op
"""

GOOD = '''
@op("Harden_Good_f", Category.USER, inputs=(Port("x", DType.FLOAT32),),
    outputs=(Port("y", DType.FLOAT32),), user=True)
def harden_good_f(ctx, x):
    """Doubles."""
    return (x.array * 2,)
'''


def _write(tmp_path: Path, name: str, body: str, prefix: bytes = b"") -> Path:
    path = tmp_path / name
    path.write_bytes(prefix + (HEADER + textwrap.dedent(body)).encode())
    return path


def test_a_utf8_bom_is_read_as_python_reads_it(tmp_path):
    path = _write(tmp_path, "bom.py", GOOD, prefix=b"\xef\xbb\xbf")
    specs = load_plugin(path)
    try:
        assert [s.name for s in specs] == ["Harden_Good_f"]
        assert loaded_plugins()[str(path.resolve())] == ["Harden_Good_f"]
    finally:
        unload_plugin(specs)


def test_an_exception_whose_message_raises_is_still_reported(tmp_path):
    path = _write(tmp_path, "bad_str.py", '''
        class Nasty(Exception):
            def __str__(self):
                raise RuntimeError("no words")
        raise Nasty()
        ''')
    with pytest.raises(PluginError, match=r"bad_str.py:7: Nasty: \(its message cannot be "
                                          r"shown: RuntimeError\)"):
        load_plugin(path)


def test_ctrl_c_at_import_rolls_back_and_propagates(tmp_path):
    path = _write(tmp_path, "interrupt.py", GOOD + "\nraise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        load_plugin(path)
    assert "Harden_Good_f" not in REGISTRY


@pytest.mark.parametrize(("body", "words"), [
    (GOOD.replace('"Harden_Good_f"', '"two words"'), "op name 'two words' must be one word"),
    (GOOD.replace('"Harden_Good_f"', '""'), "op name '' must be one word"),
    (GOOD.replace('Port("x", DType.FLOAT32),', '"x",'), r"decl.py:4: AttributeError"),
    (GOOD.replace('Port("y", DType.FLOAT32)', 'Port("y", "float")'),
     "output port y has type 'float', not a DType"),
    (GOOD.replace("def harden_good_f(ctx, x):", "def harden_good_f(ctx):"),
     "the kernel cannot take ctx and its 1 required input"),
    (GOOD.replace("Category.USER", '"mine"'), "category 'mine' is not a Category")])
def test_invalid_declarations_are_refused_with_the_op(tmp_path, body, words):
    path = _write(tmp_path, "decl.py", body)
    with pytest.raises(PluginError, match=words):
        load_plugin(path)
    assert not any(s.user and s.source.startswith(str(path)) for s in REGISTRY.specs())
    assert "Harden_Good_f" not in REGISTRY


def test_a_symlink_loop_and_a_fifo_are_named(tmp_path):
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    with pytest.raises(PluginError, match="a.py: a symbolic link loop"):
        load_plugin(tmp_path / "a.py")
    os.mkfifo(tmp_path / "f.py")
    with pytest.raises(PluginError, match="f.py: OSError: .*not a regular file"):
        load_plugin(tmp_path / "f.py")


def test_an_unreadable_plugins_folder_is_reported_and_skipped(tmp_path, monkeypatch):
    blocked = tmp_path / "plugins"
    blocked.write_text("a file where the folder should be")
    errors: list[PluginError] = []
    assert load_plugins_from(blocked, errors=errors) == []
    assert len(errors) == 1 and "plugins folder" in str(errors[0])
    assert "not a folder; its plugins are skipped" in str(errors[0])

    folder = tmp_path / "config" / "hexscope" / "plugins"
    folder.mkdir(parents=True)
    real_iterdir = Path.iterdir

    def denied(self):
        if self == folder:      # as a folder with mode 000 does for a user who is not root
            raise PermissionError(13, "Permission denied")
        return real_iterdir(self)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(Path, "iterdir", denied)
    errors = []
    unload_plugin(load_standard_plugins([], errors=errors))
    assert [str(e) for e in errors] == [
        f"plugins folder {folder} cannot be read: Permission denied; its plugins are skipped"]
