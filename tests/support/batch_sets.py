"""Small batch-run graphs and input sets shared by the --jobs and --scheduler tests."""

from __future__ import annotations

import textwrap

import numpy as np

from hexscope.engine.batch.records import InputSet
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import OutputDef
from hexscope.engine.tensor import Tensor

TIMING = {"seconds", "started", "wall_seconds", "time", "host"}


def _without_timings(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _sets(n: int, rng: np.random.Generator) -> list[InputSet]:
    return [InputSet(f"img{k:02d}", [Tensor.from_array(
        rng.standard_normal((1, 4, 4, 3)).astype(np.float32) * (k + 1))]) for k in range(n)]


def _graph() -> Graph:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 4, 4, 3), 4)])
    g.append_node(0x11, "AutoQuantize", inputs=[(0x10, 0)], outputs=3)
    g.append_node(0x12, "QuantizedRelu_8", inputs=[(0x11, 0), (0x11, 1), (0x11, 2)],
                  outputs=3)
    g.append_node(0x13, "OUTPUT", inputs=[(0x12, 0)])
    return g


DIE = textwrap.dedent('''
    import os
    from hexscope.engine.dtypes import DType
    from hexscope.engine.ops.registry import Category, Port, op

    @op("DieOnNegative_f", Category.USER, user=True,
        inputs=(Port("x", DType.FLOAT32),), outputs=(Port("y", DType.FLOAT32),))
    def die_on_negative_f(ctx, x):
        """Passes x through; its process dies when x holds a negative value."""
        if (x.array < 0).any():
            os._exit(3)
        return [x.array]
''')
