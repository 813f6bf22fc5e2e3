"""Fixtures the batch tests share."""

from __future__ import annotations

import pytest

from hexscope.engine.ops import REGISTRY
from hexscope.engine.plugins import load_plugin
from support.batch_sets import DIE


@pytest.fixture
def dying_op(tmp_path):
    """A plugin op whose kernel kills its process (a crashing worker), loaded for one test."""
    path = tmp_path / "die_plugin.py"
    path.write_text(DIE)
    specs = load_plugin(path)
    yield
    for spec in specs:
        REGISTRY.unregister(spec.name)
