"""The graph reader's JSON with pause points: what json.loads gives, pausing between the
nodes' entries (issue 32: json.loads held the GIL 0.1 s at 20,000 nodes)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.engine import cooperate
from hexscope.engine.errors import GraphFileError
from hexscope.engine.io.hexgraph import load_graph, save_graph
from hexscope.engine.io.json_paced import loads_paced
from hexscope.engine.nodes import OutputDef
from support.large_graph import residual_graph

scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text(max_size=5) \
    | st.floats(allow_nan=False)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=12)
documents = st.dictionaries(st.sampled_from(["nodes", "format", "meta", "x", ""]),
                            values | st.lists(scalars | values, max_size=150), max_size=5)


@pytest.fixture
def pauses():
    calls: list[int] = []
    previous = cooperate.install(lambda: calls.append(1))
    yield calls
    cooperate.install(previous)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from([None, 0, 1, 3]), st.booleans())
def test_the_paced_reader_gives_what_json_loads_gives(document, indent, compact):
    previous = cooperate.install(lambda: None)
    try:
        text = json.dumps(document, indent=indent,
                          separators=(",", ":") if compact else None)
        decoder = json.JSONDecoder()
        assert loads_paced(" \n" + text + "\n ", decoder) == json.loads(text)
    finally:
        cooperate.install(previous)


@pytest.mark.parametrize("text", ['{"nodes": [1, 2', '{"nodes": [1,, 2]}', '[1, 2]', '{}x',
                                  '{"nodes": [1] "a": 2}', '', '{"a" 1}', '3'])
def test_bad_or_other_text_gets_json_loads_own_answer(pauses, text):
    decoder = json.JSONDecoder()
    try:
        expected: object = json.loads(text)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            loads_paced(text, decoder)
        assert str(got.value) == str(exc)
    else:
        assert loads_paced(text, decoder) == expected


def test_the_nodes_list_is_read_with_a_pause_every_few_entries(pauses):
    text = json.dumps({"format": "f", "nodes": [{"id": k} for k in range(1000)], "meta": {}})
    assert loads_paced(text, json.JSONDecoder())["nodes"][-1] == {"id": 999}
    assert len(pauses) == 1000 // cooperate.EVERY


def test_loading_a_graph_file_pauses_while_parsing_its_json(pauses, tmp_path, monkeypatch):
    """Before, the whole graph.json was one json.loads: no pause until the node loop."""
    graph = residual_graph(300)
    graph.set_outputs(0x10, [OutputDef(max_sizes=(1, 8, 8, 8), elementsize=4)])
    path = tmp_path / "g.hexgraph"
    save_graph(graph, path)
    from hexscope.engine.io import hexgraph

    seen = []
    real = hexgraph.graph_from_document
    monkeypatch.setattr(hexgraph, "graph_from_document",
                        lambda *a, **k: (seen.append(len(pauses)), real(*a, **k))[1])
    pauses.clear()
    loaded = load_graph(path)
    assert seen and seen[0] >= len(graph) // cooperate.EVERY      # before the node loop
    assert [n.node_id for n in loaded] == [n.node_id for n in graph]


def test_a_damaged_graph_json_is_still_named_with_the_file(pauses, tmp_path):
    import zipfile

    path = tmp_path / "bad.hexgraph"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("graph.json", '{"format": "hexscope-graph", "nodes": [{"id": 1},, ]}')
    with pytest.raises(GraphFileError, match="bad.hexgraph: graph.json is not valid JSON"):
        load_graph(path)
