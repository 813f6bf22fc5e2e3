"""The error the C importer gives for a graph-init file, as its message text."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexscope.engine.io.c_import import import_c
from hexscope.engine.io.c_lexer import CSyntaxError


def import_error(tmp_path: Path, text: str) -> str:
    """Write ``text`` to ``tmp_path / "bad.c"``, import it, and return the CSyntaxError's
    message (file:line:column: ...); fails the test if the import does not raise one."""
    path = tmp_path / "bad.c"
    path.write_text(text)
    with pytest.raises(CSyntaxError) as info:
        import_c(path)
    return str(info.value)
