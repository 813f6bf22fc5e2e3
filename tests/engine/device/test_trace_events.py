"""`hexscope run --trace`: Chrome trace-event JSON, validated against the format (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np

from hexscope.app.cli import main
from hexscope.engine import Session
from hexscope.engine.device.trace_events import slices_from_session, trace_document
from support.compare_graphs import chain, chain_input
from support.supernode_graphs import chain_graph

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "resources" / "schemas" / "trace_events.schema.json").read_text())


def _slices(doc: dict) -> list[dict]:
    return [e for e in doc["traceEvents"] if e["ph"] == "X"]


def test_run_trace_has_one_slice_per_node_run_and_validates(tmp_path, capsys):
    graph = tmp_path / "g.hexgraph"
    chain().save(graph)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "x.npy", chain_input())
    out = tmp_path / "t.json"
    assert main(["run", str(graph), "--inputs-dir", str(tmp_path / "in"), "--trace",
                 str(out), "-q", "-j", "1"]) == 0
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    session = Session(chain())
    session.execute([chain_input()])
    ran = [i for i in session.plan if session.result(i) is not None]
    slices = _slices(doc)
    assert [int(s["args"]["node"], 16) for s in slices] == ran
    assert [s["name"] for s in slices] == [session.prepared.nodes[i].op for i in ran]
    relu = next(s for s in slices if s["args"]["node"] == "0x105")
    assert relu["args"]["label"] == "relu" and relu["args"]["outputs"][0] == [1, 4, 4, 8]
    assert relu["args"]["inputs"][0] == [1, 4, 4, 8] and "device_cycles" not in relu["args"]
    # end to end on the simulator's clock: each slice starts where the last ended
    for a, b in zip(slices, slices[1:], strict=False):
        assert a["ts"] + a["dur"] <= b["ts"] and b["ts"] - (a["ts"] + a["dur"]) < 0.002
    assert not [e for e in doc["traceEvents"] if e["ph"] == "C"]     # no cycles known
    names = {e["name"]: e["args"] for e in doc["traceEvents"] if e["ph"] == "M"}
    assert "g.hexgraph" in names["process_name"]["name"]
    assert "simulator clock" in names["thread_name"]["name"]


def test_imported_cycles_go_in_args_and_on_a_counter_track_never_as_time(tmp_path, capsys):
    graph = tmp_path / "g.hexgraph"
    chain_graph().save(graph)
    (tmp_path / "perf.txt").write_text(
        "Total 2 nodes.\nTotal 900 cycles.\n"
        "node,0x10,in,INPUT,executions,1,cycles,100,11.111111 %,cum_cycles,100,11.111111 %\n"
        "node,0x24,c,InputSupernode_8x8p8to8_outd32,executions,1,cycles,800,88.888889 %,"
        "cum_cycles,900,"
        "100.000000 %\n")
    assert main(["import-profile", str(graph), str(tmp_path / "perf.txt")]) == 0
    out = tmp_path / "t.json"
    assert main(["run", str(graph), "--trace", str(out), "-q", "-j", "1"]) == 0
    capsys.readouterr()
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    by_node = {s["args"]["node"]: s for s in _slices(doc)}
    sn = by_node["0x24"]
    # the chain's Supernode runs in its d32 form, as on the device, under the Relu's id
    assert sn["name"] == "InputSupernode_8x8p8to8_outd32" and sn["args"]["device_cycles"] == 800
    assert "perf.txt" in sn["args"]["device_cycles_from"]
    assert sn["args"]["fused"] == ["0x20", "0x21", "0x22", "0x23"]
    counters = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    assert {e["name"] for e in counters} == {"device cycles (a count, not time)"}
    # INPUT, the Supernode, prepare's Convert_from_d32 after it and OUTPUT (no cycles for
    # either: the device reports its own conversion under an id of its own), the end
    assert [s["name"] for s in _slices(doc)][2] == "Convert_from_d32"
    assert "device_cycles" not in _slices(doc)[2]["args"]
    assert [e["args"]["cycles"] for e in counters] == [100, 800, 0, 0, 0]


def test_a_session_trace_validates_and_names_its_cycles_source():
    session = Session(chain())
    session.execute([chain_input()])
    run = slices_from_session(session, {0x105: 4242}, "perf.txt")
    doc = trace_document([run], "chain", "sim")
    jsonschema.validate(doc, SCHEMA)
    relu = next(s for s in _slices(doc) if s["args"]["node"] == "0x105")
    assert relu["args"]["device_cycles"] == 4242
    assert relu["args"]["device_cycles_from"] == "perf.txt"
    assert len(_slices(doc)) == len(session.plan)


def test_the_schema_refuses_a_slice_without_its_node():
    bad = {"traceEvents": [{"ph": "X", "name": "Add", "pid": 1, "tid": 1, "ts": 0, "dur": 1,
                            "args": {}}]}
    try:
        jsonschema.validate(bad, SCHEMA)
    except jsonschema.ValidationError as exc:
        assert "'node' is a required property" in str(exc)
    else:
        raise AssertionError("validated")


def _batch(counter_kind: str):
    from hexscope.engine.batch.records import BatchResult, NodeRecord, Outcome, RunRecord

    result = BatchResult("g", "dsp://phone:5599", device={"counter": counter_kind})
    run = RunRecord("set 1", [], Outcome.PASSED)
    run.nodes = [NodeRecord(0x100, "INPUT", "x", "done", 1e-5, [{"shape": [1, 4, 4, 8]}],
                            device_counter=700),
                 NodeRecord(0x105, "QuantizedRelu_8", "relu", "done", 2e-5,
                            [{"shape": [1, 4, 4, 8]}], device_counter=1234),
                 NodeRecord(0x107, "QuantizedMaxPool_8", "pool", "not-run")]
    result.runs = [run]
    return result


def test_a_devices_cycles_go_in_args_but_an_agents_simulated_ns_do_not():
    from hexscope.engine.device.trace_events import slices_from_batch
    from hexscope.engine.prepare import prepare

    prepared = prepare(chain())
    doc = trace_document(slices_from_batch(_batch("cycles"), prepared), "g", "dsp")
    jsonschema.validate(doc, SCHEMA)
    slices = _slices(doc)
    assert [s["args"]["node"] for s in slices] == ["0x100", "0x105"]     # not-run: no slice
    assert slices[1]["args"]["device_cycles"] == 1234
    assert slices[1]["args"]["device_cycles_from"] == "dsp://phone:5599"
    assert slices[1]["args"]["outputs"] == [[1, 4, 4, 8]]
    assert slices[1]["args"]["inputs"][0] == []            # 0x101 has no record: unknown
    assert slices[1]["dur"] == 20.0                     # the host's time, not the cycles
    ns = trace_document(slices_from_batch(_batch("simulated-ns"), prepared), "g", "dsp")
    assert all("device_cycles" not in s["args"] for s in _slices(ns))
    assert not [e for e in ns["traceEvents"] if e["ph"] == "C"]
