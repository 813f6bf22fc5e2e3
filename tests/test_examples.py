"""The bundled example graphs load, validate, run to the end on the simulator, and are what
packaging/make_examples.py builds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hexscope.engine import Graph, RunStatus, Session
from hexscope.engine.inputs import make_inputs
from hexscope.engine.io.hexgraph import graph_document
from hexscope.engine.validate import errors, validate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.hexgraph"))


pytestmark = pytest.mark.usefixtures("bundled_plugins")     # padding_demo's user op


def test_there_are_at_least_three_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_to_the_end(path):
    g = Graph.load(path)
    assert errors(validate(g)) == []
    s = Session(g)
    s.set_inputs(make_inputs(g, base_dir=path.parent))
    finished = s.run()
    assert finished.status is RunStatus.FINISHED, finished.message
    assert all(s.result(i) is not None for i in s.plan)


def load_builder():
    spec = importlib.util.spec_from_file_location("make_examples",
                                                  ROOT / "packaging" / "make_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["classic_quantized", "d32_pipeline", "float_lookup"])
def test_example_files_are_up_to_date(name):
    built = getattr(load_builder(), name)()
    saved = Graph.load(ROOT / "resources" / "examples" / f"{name}.hexgraph")
    assert graph_document(saved)[0] == graph_document(built)[0]
