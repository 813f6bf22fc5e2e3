"""The loader's thread counts what it reads as old as it goes (issue 32: the GUI thread's
collector runs while the loader reads, and its middle pass walked everything the read had
made: 89 ms of Open's longest gap at 10,000 nodes, 179 ms at 20,000)."""

from __future__ import annotations

import gc

import pytest

from hexscope.app import graph_loader
from hexscope.engine import cooperate
from hexscope.engine.nodes import OutputDef
from support.large_graph import residual_graph


@pytest.fixture
def big_file(tmp_path):
    graph = residual_graph(1500)
    graph.set_outputs(0x10, [OutputDef(max_sizes=(1, 8, 8, 8), elementsize=4)])
    path = tmp_path / "g.hexgraph"
    graph.save(path)
    return str(path)


def test_the_young_generation_stays_small_while_a_graph_is_read_and_checked(
        big_file, monkeypatch):
    young: list[int] = []
    monkeypatch.setattr(graph_loader, "AGE_EVERY_S", 0.0)
    previous = cooperate.install(lambda: young.append(gc.get_count()[0]))
    try:
        gc.collect()
        read = graph_loader.read_graph(big_file)
        assert max(young) < 5_000           # what 64 nodes make, not the whole graph's
        young.clear()
        graph_loader.check_graph(read.graph)
        assert young and max(young) < 20_000
    finally:
        cooperate.install(previous)
    assert len(read.graph) > 1400
