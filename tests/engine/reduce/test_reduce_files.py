"""What a reduction writes: a cut d32 input with its padding bytes, read back as it was."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph
from hexscope.engine.errors import InputError
from hexscope.engine.graph import GraphSnapshot
from hexscope.engine.inputs import input_sources, make_inputs
from hexscope.engine.nodes import Node, OutputDef
from hexscope.engine.reduce import Candidate, write_candidate
from hexscope.engine.tensor import Tensor


def _d32_candidate() -> Candidate:
    flat = Tensor.from_array(np.arange(2 * 3 * 5 * 40, dtype=np.uint8).reshape(2, 3, 5, 40))
    d32 = flat.to_d32(fill=7)
    raw = d32.buffer.copy()
    raw[d32.padding_mask().reshape(-1)] = np.arange(int(d32.padding_mask().sum())) % 251
    poisoned = Tensor(d32.shape, d32.dtype, raw, d32.layout, d32.padding)
    scalar = Tensor.from_array(np.float32([[[[1.5]]]]))
    graph = Graph.from_snapshot(GraphSnapshot((
        Node(0x10, "INPUT", (), (OutputDef(d32.shape, 1), OutputDef((1, 1, 1, 1), 4))),
        Node(0x11, "OUTPUT", ((0x10, 0), (0x10, 1)))), (), {}))
    return Candidate(graph, (poisoned, scalar), (), frozenset(), ())


def test_a_d32_input_is_written_with_its_padding_and_read_back_byte_for_byte(tmp_path):
    candidate = _d32_candidate()
    path = tmp_path / "cut.hexgraph"
    write_candidate(candidate, path)
    graph = Graph.load(path)
    sources = input_sources(graph)
    assert sources[0].d32_padding == tuple(candidate.inputs[0].padding)
    assert "d32 memory" in sources[0].describe() and sources[1].d32_padding is None
    loaded = make_inputs(graph, tmp_path)
    for ours, theirs in zip(loaded, candidate.inputs, strict=True):
        assert ours.same_as(theirs)                   # padding bytes included


def test_a_d32_input_file_of_another_form_is_one_clear_error(tmp_path):
    path = tmp_path / "cut.hexgraph"
    write_candidate(_d32_candidate(), path)
    np.save(tmp_path / "cut.input0.npy", np.zeros((1, 2, 3, 4, 16), np.uint8))
    with pytest.raises(InputError, match=r"cut.input0.npy: holds shape \[1, 2, 3, 4, 16\]"):
        make_inputs(Graph.load(path), tmp_path)
    # a flat file chosen instead is read flat
    np.save(tmp_path / "cut.input0.npy", np.zeros((2, 3, 5, 40), np.uint8))
    assert make_inputs(Graph.load(path), tmp_path)[0].layout.name == "FLAT"
    graph = Graph.load(path)
    graph.meta["inputs"][0]["d32_padding"] = [4, 4, -1, 0, 0, 0]
    with pytest.raises(InputError, match="input 0: the saved 'd32_padding'"):
        input_sources(graph)
