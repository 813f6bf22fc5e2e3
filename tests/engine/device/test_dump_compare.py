"""hexagon_nn's graph and tensor dumps read and compared with the simulator (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexscope.app.cli import main
from hexscope.engine import Graph, Session
from hexscope.engine.device.dump_compare import compare_with_dump
from hexscope.engine.device.dump_reader import DumpProblem, read_dump
from hexscope.engine.inputs import make_inputs
from support.compare_graphs import RELU_ID, SHAPE, chain, chain_input
from support.device_dump import write_dump

ROOT = Path(__file__).resolve().parents[3]
D32_EXAMPLE = ROOT / "resources" / "examples" / "d32_pipeline.hexgraph"


def _dumped(tmp_path: Path, graph: Graph, x: np.ndarray | None = None,
            **kw: str) -> Path:
    session = Session(graph)
    session.execute([x] if x is not None else make_inputs(graph))
    path = write_dump(session, tmp_path, **kw)
    session.close()
    return path


def test_reader_reads_nnlibs_text_exactly(tmp_path):
    """A yaml written with nnlib's format strings, by hand: ids, ops, inputs, outputs."""
    text = ("---\nnodes:\n"
            "  0x1000a:\n    optype: INPUT\n    outputs:\n"
            "      - size: [1, 2, 2, 3]\n        eltype: float32\n"
            "        file: /data/local/tmp/foo_1000a_0.dat\n"
            "  0x1000b:\n    optype: QuantizedRelu_8\n    inputs:\n"
            "      - [0x1000a,0]\n      - [0x10010,2]\n    outputs:\n"
            "      - size: [1, 2, 2, 3]\n        eltype: quint8\n"
            "        file: /data/local/tmp/foo_1000b_0.dat\n"
            "      - size: [1, 1, 1, 1]\n        eltype: float32\n"
            "        file: /data/local/tmp/foo_1000b_1.dat\n"
            "      - size: [1, 1, 1, 1]\n        eltype: float32\n"
            "        file: /data/local/tmp/foo_1000b_2.dat\n"
            "    quantized_outputs: [0,1,2]\n")
    (tmp_path / "foo_graph.yaml").write_text(text)
    dump = read_dump(tmp_path / "foo_graph.yaml")
    assert dump.problems == []
    assert list(dump.nodes) == [0x1000A, 0x1000B]
    relu = dump.nodes[0x1000B]
    assert relu.op == "QuantizedRelu_8" and relu.inputs == ((0x1000A, 0), (0x10010, 2))
    assert [(o.dims, o.eltype) for o in relu.outputs] == [
        ((1, 2, 2, 3), "quint8"), ((1, 1, 1, 1), "float32"), ((1, 1, 1, 1), "float32")]
    # the device's path is on the phone: the .dat is looked up beside the yaml
    codes = np.arange(12, dtype=np.uint8)
    (tmp_path / "foo_1000b_0.dat").write_bytes(codes.tobytes())
    t = dump.load(relu, relu.outputs[0])
    assert dump.dat_path(relu.outputs[0]) == tmp_path / "foo_1000b_0.dat"
    assert t.shape == (1, 2, 2, 3) and np.array_equal(t.array.reshape(-1), codes)


def test_dump_of_the_same_run_compares_clean(tmp_path):
    yaml = _dumped(tmp_path, chain(), chain_input(), device_prefix="/sdcard/foo")
    found = compare_with_dump(chain(), read_dump(yaml))
    assert found.problems == []
    c = found.comparison
    assert c.first_divergence is None and c.outputs
    assert all(d.bit_identical and d.differing == 0 for d in c.outputs if d.metrics)
    assert c.unmatched_a == [] and c.unmatched_b == []
    assert c.a_name == "sim on the dump's inputs" and c.b_name == "device dump foo_graph.yaml"


def test_d32_outputs_compare_clean_without_their_padding(tmp_path):
    graph = Graph.load(D32_EXAMPLE)
    found = compare_with_dump(Graph.load(D32_EXAMPLE), read_dump(_dumped(tmp_path, graph)))
    assert found.problems == [] and found.comparison.first_divergence is None
    compared = [d for d in found.comparison.outputs if d.metrics]
    assert compared and all(d.bit_identical for d in compared)


def test_one_flipped_byte_is_found_at_its_node_and_element(tmp_path):
    yaml = _dumped(tmp_path, chain(), chain_input())
    dat = tmp_path / f"foo_{RELU_ID:x}_0.dat"
    data = bytearray(dat.read_bytes())
    data[37] ^= 0x01
    dat.write_bytes(bytes(data))
    first = compare_with_dump(chain(), read_dump(yaml)).comparison.first_divergence
    assert first is not None and first.node_id == RELU_ID and first.index == 0
    assert first.differing == 1
    assert first.first_index == tuple(int(i) for i in np.unravel_index(37, SHAPE))


def test_partial_dump_names_each_problem_and_compares_the_rest(tmp_path):
    yaml = _dumped(tmp_path, chain(), chain_input())
    (tmp_path / "foo_107_0.dat").unlink()                             # a missing .dat
    (tmp_path / "foo_108_0.dat").write_bytes(b"\0" * 12)               # a wrong size
    text = yaml.read_text().replace("optype: QuantizedRelu_8", "optype: SuperRelu_9")
    yaml.write_text(text)
    found = compare_with_dump(chain(), read_dump(yaml))
    problems = "\n".join(found.problems)
    assert "foo_107_0.dat (node 0x107 (QuantizedMaxPool_8), output 0): missing" in problems
    assert "foo_108_0.dat (node 0x108 (Dequantize), output 0): 12 bytes, but the yaml " \
           "says 1x2x2x8 float32 = 128 bytes" in problems
    assert "node 0x105: op 'SuperRelu_9' is not one Hexscope knows" in problems
    by_node = found.comparison.by_node()
    assert by_node[RELU_ID][0].differing == 0              # still compared, by id
    assert "missing" in by_node[0x107][0].note and not by_node[0x107][0].exceeds


def test_truncated_yaml_keeps_the_nodes_before_the_cut(tmp_path):
    yaml = _dumped(tmp_path, chain(), chain_input())
    text = yaml.read_text()
    yaml.write_text(text[:text.index("  0x107:") + 45])
    dump = read_dump(yaml)
    assert list(dump.nodes)[-1] == 0x107 and dump.nodes[0x107].outputs == ()
    assert any("is cut short" in p and "truncated" in p for p in dump.problems)
    c = compare_with_dump(chain(), dump).comparison
    assert c.by_node()[RELU_ID][0].differing == 0
    assert "0x108 'dequantize'" in c.unmatched_a


def test_nodes_only_the_device_made_are_listed_not_guessed(tmp_path):
    yaml = _dumped(tmp_path, chain(), chain_input())
    extra = ("  0x7f000001:\n    optype: Requantize_32to8\n    inputs:\n"
             "      - [0x105,0]\n    outputs:\n      - size: [1, 4, 4, 8]\n"
             "        eltype: quint8\n        file: foo_7f000001_0.dat\n")
    yaml.write_text(yaml.read_text() + extra)
    c = compare_with_dump(chain(), read_dump(yaml)).comparison
    assert c.unmatched_b == ["0x7f000001"] and c.first_divergence is None


def test_cli_compare_device_dump_exit_codes(tmp_path, capsys):
    graph_path = tmp_path / "g.hexgraph"
    chain().save(graph_path)
    np.save(tmp_path / "x.npy", chain_input())
    session = Session(chain())
    session.execute([chain_input()])
    yaml = write_dump(session, tmp_path)
    assert main(["compare", str(graph_path), "--device-dump", str(yaml)]) == 0
    assert "no output beyond 0 LSB (bit exact)" in capsys.readouterr().out
    dat = tmp_path / "foo_108_0.dat"
    dat.write_bytes(dat.read_bytes()[:-4])
    report = tmp_path / "r.json"
    assert main(["compare", str(graph_path), "--device-dump", str(yaml), "-q",
                 "--report", str(report)]) == 2
    schema = json.loads((ROOT / "resources" / "schemas" / "compare.schema.json").read_text())
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, schema)
    assert doc["exit_code"] == 2 and "problem(s) with the dump" in doc["runs"][0]["error"]
    assert ("foo_108_0.dat (node 0x108 (Dequantize), output 0): 124 bytes, but the yaml "
            "says 1x2x2x8 float32 = 128 bytes") in capsys.readouterr().err
    data = bytearray((tmp_path / "foo_105_0.dat").read_bytes())
    data[0] ^= 0x80
    (tmp_path / "foo_105_0.dat").write_bytes(bytes(data))
    assert main(["compare", str(graph_path), "--device-dump", str(yaml)]) == 1
    assert "first divergence: 0x105 'relu'" in capsys.readouterr().out
    (tmp_path / "empty_graph.yaml").write_text("")
    assert main(["compare", str(graph_path), "--device-dump",
                 str(tmp_path / "empty_graph.yaml")]) == 2
    assert "empty_graph.yaml: empty, no nodes" in capsys.readouterr().err


@pytest.mark.parametrize("cut", [10, 200, 333])
def test_any_cut_of_a_dump_gives_messages_not_tracebacks(tmp_path, cut):
    yaml = _dumped(tmp_path, chain(), chain_input())
    yaml.write_text(yaml.read_text()[:cut])
    found = compare_with_dump(chain(), read_dump(yaml))
    assert found.problems


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mangled_yaml_gives_problems_never_a_traceback(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("mangled")
    yaml = folder / "foo_graph.yaml"
    if not yaml.exists():
        session = Session(chain())
        session.execute([chain_input()])
        write_dump(session, folder, device_prefix="/data/local/tmp/foo")
    text = yaml.read_text()
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 12))
        text = text[:at] + data.draw(st.sampled_from(["", "x", "\n", ":", "0x", " ", "["])) \
            + text[at + cut:]
    yaml.write_text(text)
    dump = read_dump(yaml)
    for node in dump.nodes.values():
        for out in node.outputs:
            try:
                dump.load(node, out)
            except DumpProblem as exc:
                assert "node 0x" in str(exc)


def test_a_size_that_is_no_list_of_numbers_is_a_problem_on_its_line(tmp_path):
    # hypothesis found this one: a comma lost from a size line ("[1, 1 1, 1]") raised
    # ValueError: invalid literal for int() with base 10: ' 1 1'
    yaml = _dumped(tmp_path, chain(), chain_input())
    lines = yaml.read_text().split("\n")
    at = lines.index("  0x105:")
    k = next(i for i in range(at, len(lines)) if lines[i] == "      - size: [1, 1, 1, 1]")
    lines[k] = "      - size: [1, 1 1, 1]"
    yaml.write_text("\n".join(lines))
    dump = read_dump(yaml)
    assert dump.problems == [f"foo_graph.yaml line {k + 1}: node 0x105 output 1: size "
                             "[1, 1 1, 1] is not a list of whole numbers; not compared"]
    assert [o.index for o in dump.nodes[0x105].outputs] == [0, 2]
    found = compare_with_dump(chain(), dump)
    assert found.problems == dump.problems
    assert found.comparison.by_node()[RELU_ID][0].differing == 0     # the codes still compared
    # the sizes nnlib writes, and the same with other spacing, still read
    for size, dims in (("[1, 2, 2, 3]", (1, 2, 2, 3)), ("[ 1,2 ,3 ]", (1, 2, 3)),
                       ("[]", ())):
        lines[k] = f"      - size: {size}"
        yaml.write_text("\n".join(lines))
        again = read_dump(yaml)
        assert again.problems == [] and again.nodes[0x105].outputs[1].dims == dims


def test_a_lost_node_line_never_runs_the_graph_on_another_nodes_outputs(tmp_path):
    # without "  0x101:" the AutoQuantize's lines fall into the INPUT node above them
    yaml = _dumped(tmp_path, chain(), chain_input())
    lines = yaml.read_text().split("\n")
    k = lines.index("  0x101:")
    yaml.write_text("\n".join(lines[:k] + lines[k + 1:]))
    dump = read_dump(yaml)
    assert dump.nodes[0x100].op == "INPUT"
    assert (f"foo_graph.yaml line {k + 1}: node 0x100: a second optype 'AutoQuantize' (a node "
            "line lost?); 'INPUT' is kept") in dump.problems
    found = compare_with_dump(chain(), dump)
    assert any("the INPUT node 0x100 has 4 output(s), the graph's declares 1: the graph's "
               "own inputs are used" in p for p in found.problems)


def test_the_devices_own_conversion_ids_are_no_unmatched_nodes(tmp_path):
    # both prepares make the chain's Supernode d32 under the Relu's id 0x24; the
    # Convert_from_d32 after it gets an id of each prepare's own
    from hexscope.engine.prepare import prepare
    from support.supernode_graphs import chain_graph

    yaml = _dumped(tmp_path, chain_graph())
    ours = prepare(chain_graph())
    (conv,) = [i for i in ours.plan if ours.nodes[i].op == "Convert_from_d32"]
    text = yaml.read_text().replace(f"0x{conv:x}", "0x7f000002").replace(f"_{conv:x}_",
                                                                          "_7f000002_")
    yaml.write_text(text)
    (tmp_path / f"foo_{conv:x}_0.dat").rename(tmp_path / "foo_7f000002_0.dat")
    dump = read_dump(yaml)
    assert dump.nodes[0x24].op == "InputSupernode_8x8p8to8_outd32"
    assert dump.nodes[0x7F000002].op == "Convert_from_d32"
    c = compare_with_dump(chain_graph(), dump).comparison
    assert c.unmatched_a == [] and c.unmatched_b == [] and c.first_divergence is None
    assert c.by_node()[0x24][0].bit_identical
    # a node the device made that is no conversion is still listed
    yaml.write_text(text.replace("optype: Convert_from_d32", "optype: Requantize_32to8"))
    assert compare_with_dump(chain_graph(), read_dump(yaml)).comparison.unmatched_b == [
        "0x7f000002"]
