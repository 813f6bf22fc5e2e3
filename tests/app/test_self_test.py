"""hexscope --self-test, from the checkout and from a wheel installed in a fresh venv."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[2]


def test_the_self_test_passes_and_says_what_it_checked(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "hexscope.app", "--self-test"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "match an independent engine run byte for byte" in proc.stdout
    assert proc.stdout.rstrip().endswith("self-test: passed")


def test_a_result_that_differs_from_the_engine_fails_it_naming_the_node():
    from hexscope.app.self_test import EXAMPLE, _compare
    from hexscope.engine import Graph, Session
    from hexscope.engine.executor import NodeResult
    from hexscope.engine.inputs import make_inputs
    from hexscope.engine.tensor import Tensor

    path = ROOT / "resources" / "examples" / EXAMPLE
    graph = Graph.load(path)
    session = Session(graph)
    session.set_inputs(make_inputs(graph, path.parent))
    session.run()
    node_id = session.plan[-2]
    old = session.executor.trace[node_id]
    bad = Tensor.from_array(np.asarray(old.outputs[0].array) ^ 1) if \
        old.outputs[0].dtype.size == 1 else Tensor.from_array(np.asarray(old.outputs[0].array) + 1)
    session.executor.trace[node_id] = NodeResult((bad, *old.outputs[1:]), old.seconds,
                                                 old.warnings)
    out = io.StringIO()
    assert _compare(session, str(path), out) == 1
    assert f"FAILED: node 0x{node_id:x} output 0 differs" in out.getvalue()


@pytest.mark.skipif(os.environ.get("HEXSCOPE_SKIP_WHEEL_TEST") == "1",
                    reason="HEXSCOPE_SKIP_WHEEL_TEST=1")
def test_a_wheel_installed_in_a_fresh_venv_passes_the_self_test(tmp_path):
    """The wheel carries every package and resource: nothing is read from the checkout."""
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(dist), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next(dist.glob("hexscope-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)],
                               capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr[-3000:]
    run = subprocess.run([str(env_dir / "bin" / "hexscope"), "--self-test"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert "self-test: passed" in run.stdout
    where = subprocess.run([str(python), "-c", "import hexscope.app, sys; "
                            "print(hexscope.app.__file__)"], capture_output=True, text=True,
                           cwd=tmp_path)
    assert str(env_dir) in where.stdout             # the wheel's copy ran, not the checkout
