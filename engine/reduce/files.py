"""What a reduction writes: the candidate as a .hexgraph with its inputs beside it (so that
``hexscope run OUT.hexgraph`` reproduces the run), as graph-init C, and reduce.json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np

from hexscope.engine.dtypes import Layout
from hexscope.engine.errors import EngineError
from hexscope.engine.inputs import InputSource, set_input_sources
from hexscope.engine.io.atomic import atomic_write
from hexscope.engine.io.c_export import export_c
from hexscope.engine.ops.registry import REGISTRY
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


@dataclass(frozen=True)
class CFile:
    """What became of OUT.c: ``problem`` says why it was not written ('' when it was),
    ``notes`` what the user's hexagon_nn build must add and what the file cannot carry."""

    problem: str = ""
    notes: tuple[str, ...] = ()

    @property
    def written(self) -> bool:
        return not self.problem

    def line(self) -> str:
        """One line for the command line ('' when there is nothing to say)."""
        return f"not written: {self.problem}" if self.problem else "; ".join(self.notes)


def write_c(candidate: Candidate, path: str | PathLike[str]) -> CFile:
    """The graph-init C file. A plugin op is written as ``OP_<name>``: it models an op of
    the user's own hexagon_nn build (their ops.def), which the file's comment names."""
    graph = candidate.graph
    user = sorted({n.op for n in graph if n.op in REGISTRY and REGISTRY.get(n.op).user})
    try:
        export_c(graph, path, Path(path).stem, user_ops=user)
    except EngineError as exc:
        return CFile(str(exc))
    notes = []
    if user:
        notes.append(f"needs {', '.join(user)} in your hexagon_nn build's ops.def "
                     f"(plugin op{'s' if len(user) > 1 else ''}: "
                     f"{', '.join('OP_' + o for o in user)})")
    d32 = [str(k) for k, t in enumerate(candidate.inputs) if t.layout is Layout.D32]
    if d32:
        notes.append(f"input {', '.join(d32)} is d32 memory with its padding bytes, which "
                     "hexagon_nn_execute cannot pass (its inputs are flat): the C graph gets "
                     "the values without that padding")
    return CFile("", tuple(notes))


def write_json(document: dict[str, object], path: str | PathLike[str]) -> None:
    with atomic_write(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")
