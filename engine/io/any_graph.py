"""Open a graph whatever its file: a .hexgraph, or a hexagon_nn graph-init C file through
the importer (the command line and the app both read both)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from hexscope.engine.graph import Graph

C_SUFFIXES = (".c", ".h", ".cc", ".cpp")


def is_c_file(path: str | PathLike[str]) -> bool:
    return Path(path).suffix.lower() in C_SUFFIXES


def load_any(path: str | PathLike[str], warnings: list[str] | None = None) -> Graph:
    """A .hexgraph file, or a graph-init C file; ``warnings`` receives the importer's notes.

    Raises GraphFileError naming the file (for C, file:line:column)."""
    if is_c_file(path):
        from hexscope.engine.io.c_import import import_c

        return import_c(path, warnings)
    return Graph.load(path)


__all__ = ["C_SUFFIXES", "is_c_file", "load_any"]
