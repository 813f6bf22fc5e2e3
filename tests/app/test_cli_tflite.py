"""hexscope import / info / validate with a .tflite model (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexscope.app.cli import main
from hexscope.engine.graph import Graph

pytest.importorskip("tflite", reason="the 'tflite' extra is not installed")
DATA = Path(__file__).resolve().parents[1] / "data" / "tflite"


def test_cli_import_tflite_writes_a_hexgraph_with_its_meta(tmp_path, capsys):
    out = tmp_path / "add.hexgraph"
    assert main(["import", str(DATA / "add.tflite"), "-o", str(out)]) == 0
    assert "imported 39 nodes" in capsys.readouterr().out
    g = Graph.load(out)
    meta = g.meta["tflite"]
    assert meta["model"] == "add.tflite" and meta["partition"] == [0, 1, 2]
    add = next(n for n in g if n.op == "QuantizedAdd_8p8to8")
    assert meta["op_index"][f"0x{add.node_id:x}"] == 2


def test_cli_info_tflite_lists_refused_operators_with_their_reason(capsys):
    code = main(["info", str(DATA / "resize_pad_mean.tflite")])
    out, err = capsys.readouterr()
    assert "operator 0 RESIZE_BILINEAR (v3): refused: version 3: the delegate takes " \
           "RESIZE_BILINEAR up to v2" in out
    assert "operator 1 PAD (v2): partition 0\n" in out
    assert "tflite refused: operator 0 RESIZE_BILINEAR" in out
    assert code == 0 and "stays on the CPU" in err


def test_cli_validate_bad_files_one_line_each(tmp_path, capsys):
    bad = tmp_path / "x.tflite"
    bad.write_bytes(b"\x00" * 64)
    for path in (bad, DATA / "bad_float.tflite", DATA / "bad_rank5.tflite"):
        assert main(["validate", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err


class _OffByThreeAfterPools:
    """A "device" that runs the simulator but adds 3 to every MaxPool code: where it parts
    from TFLite is its own doing."""

    name = "off-by-three"
    runs_graph = False

    def __init__(self) -> None:
        from hexscope.engine.backends.sim import SimBackend

        self._sim = SimBackend()

    def prepare(self, prepared):  # noqa: ANN001, ANN201
        self._sim.prepare(prepared)

    def run_node(self, node, spec, inputs, ctx):  # noqa: ANN001, ANN201
        import numpy as np

        out = list(self._sim.run_node(node, spec, inputs, ctx))
        if node.op.startswith("QuantizedMaxPool"):
            codes = np.asarray(out[0].array if hasattr(out[0], "array") else out[0])
            out[0] = np.minimum(codes.astype(np.int32) + 3, 255).astype(np.uint8)
        return out

    def close(self) -> None:
        self._sim.close()


def test_cli_compare_tflite_with_backend_b_compares_both_with_one_tflite_run(
        tmp_path, capsys, monkeypatch):
    # issue 27: --reference tflite with --backend-b: the simulator and a device, each against
    # TFLite; the device's own difference is named as the device's
    from hexscope.engine.backends import BACKENDS

    monkeypatch.setitem(BACKENDS, "off-by-three", _OffByThreeAfterPools)
    model, report = DATA / "pools.tflite", tmp_path / "r.json"
    code = main(["compare", str(model), "--reference", "tflite", "--backend-b", "off-by-three",
                 "--input", str(DATA / "pools.input.npy"), "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("A: sim   B: TFLite CPU") == 1 and "A: off-by-three   B: TFLite" in out
    assert "first divergence from TFLite: sim: none; off-by-three: 0x" in out
    assert "(QuantizedMaxPool_8) (off-by-three parts first: its own difference)" in out
    assert "compare FAILED: 2 runs (sim and off-by-three)" in out
    import json

    runs = json.loads(report.read_text())["runs"]
    assert [r["inputs"].rsplit(" on ", 1)[1] for r in runs] == ["sim", "off-by-three"]
    assert runs[0]["exceeding"] == 0 and runs[1]["first_divergence"]["op"] == "QuantizedMaxPool_8"
    assert runs[1]["outputs"][0]["metrics"]["max_lsb"] == pytest.approx(3.0)


def test_cli_compare_tflite_with_backend_b_on_the_same_graph_names_the_graph(capsys):
    # both backends part at the same tensor: the delegate's graph (conv_relu6's Relu6 bounds)
    code = main(["compare", str(DATA / "conv_relu6.tflite"), "--reference", "tflite",
                 "--backend-b", "sim", "-q"])
    out = capsys.readouterr().out
    assert code == 1
    assert "both part at the same tensor: the delegate's graph, not the backend" in out


def test_cli_compare_tflite_backend_b_errors(capsys):
    model = str(DATA / "pools.tflite")
    # an unreachable device: exit 3 naming it; --backend-b with another B: exit 2
    assert main(["compare", model, "--reference", "tflite", "--backend-b",
                 "dsp://127.0.0.1:1", "-q"]) == 3
    assert "pools.tflite on dsp://127.0.0.1:1: " in capsys.readouterr().err
    assert main(["compare", model, "--reference", "float", "--backend-b", "sim"]) == 2
    assert "--backend-b goes with --reference tflite only, not with --reference float" \
        in capsys.readouterr().err


def test_cli_compare_tflite_with_an_agent_as_backend_b(capsys):
    # the real path to a device: the delegate's graph uploaded to hexscope-agent (dsp://)
    from support.agent_process import running_agent

    with running_agent("--token", "t0ken") as agent:
        code = main(["compare", str(DATA / "pools.tflite"), "--reference", "tflite",
                     "--backend-b", agent.address, "--token", "t0ken", "-q"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"sim: none; {agent.address}: none (both follow TFLite)" in out


def test_cli_compare_tflite_stops_with_figures_at_a_node_nnlib_cannot_run(tmp_path, capsys):
    # the wake word's first DEPTHWISE_CONV_2D reads a width-1 d32 concat without left
    # padding (op_dwise_snode_8bit.c:716, checked before its 5x1 filter's width): the table
    # of what ran, then where and why it stopped, exit 2
    path = DATA / "wakeword_hey_jarvis.tflite"
    report = tmp_path / "r.json"
    code = main(["compare", str(path), "--reference", "tflite", "--input",
                 str(DATA / "wakeword_hey_jarvis.input.npy"), "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 2
    assert "0x21 'model/activation/Relu" in out and "no output beyond 1 LSB" in out
    (stopped,) = [line for line in out.splitlines() if line.startswith("stopped: ")]
    assert "node 0x31 (DepthwiseSupernode_8x8p32to8_d32, TFLite operator 21 " \
           "DEPTHWISE_CONV_2D (v3)" in stopped and "Need at least 1 left pad" in stopped
    assert stopped.endswith("Compared the 6 TFLite tensor(s) before it; 26 after it not "
                            "compared.")
    assert "compare FAILED: 1 input set(s), 0 output(s) beyond 1 LSB, 1 error(s)" in out
    import json
    run = json.loads(report.read_text())["runs"][0]
    assert len(run["outputs"]) == 6 and run["error"] == stopped.removeprefix("stopped: ")


def test_cli_info_of_a_saved_import_keeps_the_operators_the_dsp_cannot_run(tmp_path, capsys):
    # the .hexgraph keeps graph.meta['tflite']['device_refused'] (device_limits.py)
    out = tmp_path / "w.hexgraph"
    assert main(["import", str(DATA / "wakeword_hey_jarvis.tflite"), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["info", str(out)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("tflite the DSP cannot run: ")]
    assert [line.split(":")[1] for line in lines] == [
        f" operator {i} DEPTHWISE_CONV_2D" for i in (21, 26, 31, 36)]
    assert "its 21x1 filter" in lines[-1]
