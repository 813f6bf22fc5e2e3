"""What a reduction writes: the candidate as a .hexgraph with its inputs beside it (so that
``hexscope run OUT.hexgraph`` reproduces the run), as graph-init C, and reduce.json."""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path

import numpy as np

from hexscope.engine.dtypes import Layout
from hexscope.engine.errors import EngineError
from hexscope.engine.inputs import InputSource, set_input_sources
from hexscope.engine.io.atomic import atomic_write
from hexscope.engine.io.c_export import export_c
from hexscope.engine.reduce.cut import Candidate


def input_paths(graph_path: Path, count: int) -> list[Path]:
    return [graph_path.with_name(f"{graph_path.stem}.input{k}.npy") for k in range(count)]


def write_candidate(candidate: Candidate, path: str | PathLike[str]) -> list[Path]:
    """Save the candidate and its inputs (one .npy per INPUT output, named after the graph
    and saved as its input sources). A d32 input is saved as its memory, padding bytes
    included, so that a consumer reading padding reads in ``hexscope run OUT.hexgraph``
    what it read in the reduction. Returns the files written."""
    path = Path(path)
    files = input_paths(path, len(candidate.inputs))
    sources = []
    for file, tensor in zip(files, candidate.inputs, strict=True):
        d32 = tensor.layout is Layout.D32
        with atomic_write(file) as handle:
            np.save(handle, tensor.memory if d32 else tensor.array, allow_pickle=False)
        sources.append(InputSource(kind="npy", path=file.name,
                                   d32_padding=tuple(tensor.padding) if d32 else None))
    graph = candidate.graph
    set_input_sources(graph, sources)
    graph.save(path)
    return [path, *files]


def write_c(candidate: Candidate, path: str | PathLike[str]) -> str:
    """The graph-init C file; '' when written, else why not (what C cannot express)."""
    try:
        export_c(candidate.graph, path, Path(path).stem)
    except EngineError as exc:
        return str(exc)
    return ""


def write_json(document: dict[str, object], path: str | PathLike[str]) -> None:
    with atomic_write(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")
