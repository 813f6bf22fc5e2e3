"""Many nodes giving one warning: the command line prints it once with a count and keeps
its verdict last; in the app the Log tab, the Problems list and the nodes agree (issue 32:
the Log said "1387 error(s)", Problems "No problems", every node was green)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexscope.app import cli
from hexscope.app.warning_summary import group_warnings
from hexscope.engine import Graph, OutputDef
from hexscope.engine.plugins import load_plugin, unload_plugin

PLUGIN = Path(__file__).parents[1] / "data" / "plugins" / "warn_nop.py"
WARNING = "the data are all zero (a test warning)"
N = 40
NODES = [0x200 + k for k in range(N)]


@pytest.fixture
def warn_graph(tmp_path) -> Path:
    specs = load_plugin(PLUGIN)
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 2, 2, 3), 4)])
    src = 0x100
    for node_id in NODES:
        g.append_node(node_id, "WarnNop", inputs=[(src, 0)], outputs=1)
        src = node_id
    g.append_node(0x300, "OUTPUT", inputs=[(src, 0)])
    path = tmp_path / "warns.hexgraph"
    g.save(path)
    yield path
    unload_plugin(specs)


def test_group_warnings_counts_each_node_once_in_first_seen_order():
    groups = group_warnings([(1, "a"), (2, "b"), (3, "a"), (3, "a"), (4, "a")])
    assert [(g.text, g.nodes) for g in groups] == [("a", [1, 3, 4]), ("b", [2])]
    assert groups[0].line(shown_ids=1) == "node 0x1: a … and 2 more like it (nodes 0x3, …)"
    assert groups[1].line() == "node 0x2: b"


def test_the_command_line_prints_a_repeated_warning_once_and_the_verdict_last(
        warn_graph, capsys):
    code = cli.main(["--plugin", str(PLUGIN), "run", str(warn_graph)])
    out = capsys.readouterr().out.strip().splitlines()
    warned = [line for line in out if line.startswith("warning:")]
    assert warned == [f"warning: node 0x{NODES[0]:x}: {WARNING} … and {N - 1} more like it "
                      f"(nodes 0x201, 0x202, 0x203, …)"]
    assert out[-1].startswith("warns.hexgraph: 1 run(s), 1 passed") and code == 0


def test_the_log_problems_and_nodes_agree_on_warnings(qtbot, window, warn_graph):
    assert window.files.open_graph(str(warn_graph))
    with qtbot.waitSignal(window.controller.idle, timeout=20000):
        window.debug.actions["run"].trigger()
    title = window.log_dock.windowTitle()
    assert f"⚠ {N} warning(s)" in title and "error" not in title
    texts = [window.problems.list.item(k).text() for k in range(window.problems.list.count())]
    assert texts == [f"⚠ node 0x{NODES[0]:x}: {WARNING} … and {N - 1} more like it "
                     "(nodes 0x201, 0x202, 0x203, …)"]
    assert window.problems_dock.windowTitle() == "Problems (1)"
    looks = window.scene.looks
    assert all(looks[n].status == "done" and looks[n].warnings == [WARNING] for n in NODES)
    assert WARNING in window.scene.items_by_id[NODES[3]].toolTip()


def test_a_second_run_adds_warnings_to_the_log_not_errors(qtbot, window, warn_graph):
    """The log keeps every run's lines; the tab counted all level-0 lines minus the current
    run's warnings, so each further run of a warning graph showed N more "errors"."""
    assert window.files.open_graph(str(warn_graph))
    for action in ("run", "restart", "run"):
        with qtbot.waitSignal(window.controller.idle, timeout=20000):
            window.debug.actions[action].trigger()
    title = window.log_dock.windowTitle()
    assert "error" not in title and f"⚠ {2 * N} warning(s)" in title
    shown = [window.log_panel.list.item(k).text() for k in range(window.log_panel.list.count())]
    assert sum(text.startswith("[warning]") for text in shown) == 2 * N
