"""The ``--dump`` folder of a batch: every node's outputs of every run as ``.npy`` files whose
bytes depend only on the graph and the inputs, and a manifest."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hexscope.engine.batch.records import BatchResult, RunRecord
from hexscope.engine.batch.stats import tensor_stats
from hexscope.engine.session import Session


def dumped(dump_dir: str | Path, write: Callable[..., None], *args: object) -> str:
    """Run a dump step; '' when it worked, else why it could not write (a full disk, a file
    where a folder should be): the batch goes on without dumping."""
    try:
        write(*args)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"cannot write the dump to {dump_dir}: {where}{exc.strerror or exc}"
    return ""


def run_dir_name(index: int) -> str:
    return f"run-{index + 1:04d}"


def dump_run(root: Path, index: int, run: RunRecord, session: Session) -> None:
    """``root/run-NNNN/0x<id>_<k>.npy`` (logical NHWC data) for every output that ran, plus
    ``.d32.npy`` (memory order, padding included) for d32 tensors, and ``outputs.json``."""
    folder = root / run_dir_name(index)
    folder.mkdir(parents=True, exist_ok=True)
    entries: dict[str, list[dict[str, object]]] = {}
    for node in run.nodes:
        result = session.result(node.node_id) if node.status == "done" else None
        if result is None:
            continue
        files = []
        for k, tensor in enumerate(result.outputs):
            info = tensor_stats(tensor, k, result.outputs)
            if tensor.has_data:
                name = f"0x{node.node_id:x}_{k}.npy"
                _save_npy(folder / name, np.ascontiguousarray(tensor.array))
                info["file"] = name
                if tensor.layout.name == "D32":
                    mem_name = f"0x{node.node_id:x}_{k}.d32.npy"
                    _save_npy(folder / mem_name, np.ascontiguousarray(tensor.memory))
                    info["memory_file"] = mem_name
            files.append(info)
        entries[f"0x{node.node_id:x}"] = files
    document = {"run": run.name, "sources": run.sources, "outcome": run.outcome.value,
                "outputs": entries}
    _write_json(folder / "outputs.json", document)


def _save_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def _write_json(path: Path, document: object) -> None:
    path.write_text(json.dumps(document, indent=1, sort_keys=True, allow_nan=False) + "\n",
                    encoding="utf-8")


def dump_manifest(root: Path, result: BatchResult) -> None:
    runs = [{"dir": run_dir_name(k), "name": r.name, "outcome": r.outcome.value}
            for k, r in enumerate(result.runs)]
    _write_json(root / "manifest.json", {"format": "hexscope-dump", "version": 1,
                                         "graph": result.graph_name, "runs": runs})
