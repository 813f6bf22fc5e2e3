"""A named pipe given as a graph is refused before it is opened, whoever opens it (the
command line checked; the app's File ▸ Open read it and froze: issue 33)."""

from __future__ import annotations

import os

import pytest

from hexscope.engine.errors import GraphFileError
from hexscope.engine.io.any_graph import load_any, special_file_problem


@pytest.mark.parametrize("name", ["g.hexgraph", "g.c", "m.tflite"])
def test_a_fifo_is_refused_without_blocking(tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    with pytest.raises(GraphFileError, match="named pipe"):
        load_any(fifo)          # reading it would block for ever: the test would hang


def test_regular_files_and_missing_ones_are_left_to_the_loader(tmp_path):
    (tmp_path / "a.hexgraph").write_bytes(b"")
    assert special_file_problem(tmp_path / "a.hexgraph") == ""
    assert special_file_problem(tmp_path / "missing.hexgraph") == ""
