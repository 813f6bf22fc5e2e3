"""The prepared view shows the SuperFC fusion of the delegate's FULLY_CONNECTED chain as it
shows the Supernode's (issue 25; nnlib prepare.c try_make_supernode_flavored)."""

from __future__ import annotations

from hexscope.engine.io.hexgraph import save_graph
from support.fc_graphs import fc_graph


def test_the_fc_chain_is_marked_as_fused_into_superfc(shown, tmp_path):
    path = tmp_path / "fc.hexgraph"
    save_graph(fc_graph(), path)
    w = shown
    w.files.open_graph(str(path))
    looks = w.scene.looks
    assert looks[0x23].rewrite == "replaced" and looks[0x23].runs_as == "SuperFC_8x8p32to8"
    for node_id in (0x20, 0x21, 0x22):
        assert looks[node_id].rewrite == "fused"
        assert "SuperFC_8x8p32to8 0x23" in looks[node_id].rewrite_reason
