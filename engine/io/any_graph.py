"""Open a graph whatever its file: a .hexgraph, a hexagon_nn graph-init C file, or a TFLite
model (the graph the Hexagon delegate builds for it) through the importers (the command line
and the app read all three)."""

from __future__ import annotations

import os
import stat
from os import PathLike
from pathlib import Path

from hexscope.engine.errors import GraphFileError
from hexscope.engine.graph import Graph

C_SUFFIXES = (".c", ".h", ".cc", ".cpp")
TFLITE_SUFFIXES = (".tflite",)


def is_c_file(path: str | PathLike[str]) -> bool:
    return Path(path).suffix.lower() in C_SUFFIXES


def is_tflite_file(path: str | PathLike[str]) -> bool:
    return Path(path).suffix.lower() in TFLITE_SUFFIXES


def special_file_problem(path: str | PathLike[str]) -> str:
    """Why ``path`` cannot be a file to read ('' when it may be one): a named pipe would block
    for ever, a device or socket is no graph. Missing files and folders are left to the
    loader, which names them."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return ""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return ""
    what = "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device or socket"
    return f"{os.fspath(path)}: is {what}, not a file"


def load_any(path: str | PathLike[str], warnings: list[str] | None = None) -> Graph:
    """A .hexgraph file, a graph-init C file or a .tflite model; ``warnings`` receives the
    importer's notes (for TFLite: the refused operators and the partitions left out).

    Raises GraphFileError naming the file (for C, file:line:column); a named pipe, device
    or socket is refused before it is opened (reading one blocked for ever)."""
    problem = special_file_problem(path)
    if problem:
        raise GraphFileError(problem)
    if is_c_file(path):
        from hexscope.engine.io.c_import import import_c

        return import_c(path, warnings)
    if is_tflite_file(path):
        from hexscope.engine.io.tflite.importer import import_tflite

        return import_tflite(path, warnings)
    return Graph.load(path)


__all__ = ["C_SUFFIXES", "TFLITE_SUFFIXES", "is_c_file", "is_tflite_file", "load_any",
           "special_file_problem"]
