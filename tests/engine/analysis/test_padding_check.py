"""The padding check (issue 5): nodes whose valid output depends on d32 padding bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexscope.engine import DType, Graph, InputError, Layout, Tensor
from hexscope.engine.analysis.padding_check import check_padding
from hexscope.engine.inputs import InputSource, set_input_sources
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY, Category, Port, op
from hexscope.engine.plugins import load_plugin

PLUGIN = Path(__file__).resolve().parents[3] / "resources" / "plugins" / "peek_left.py"
TO_D32, FROM_D32, SUM_ALL = "TestPadCheckToD32", "TestPadCheckFromD32", "TestPadCheckSumAll"


def _load_peek_plugin() -> None:
    """Load the example plugin once per process (its op lands in the global registry)."""
    if "PeekLeft_8_d32" not in REGISTRY:
        load_plugin(PLUGIN)


@pytest.fixture(scope="module", autouse=True)
def toy_ops():
    """Three user ops: flat -> d32 (padding left undefined), d32 -> flat, and a d32 op that
    sums the WHOLE buffer, padding included (a reader of every padding byte)."""
    d32 = Port("x", DType.QUINT8, layout=Layout.D32)

    @op(TO_D32, Category.USER, user=True, d32_output=True, inputs=(Port("x", DType.QUINT8),),
        outputs=(Port("y", DType.QUINT8, layout=Layout.D32),))
    def to_d32(ctx: KernelContext, x: Tensor):
        """Test op: to d32 with the default padding."""
        return (x.to_d32(fill=ctx.padding_fill),)

    @op(FROM_D32, Category.USER, user=True, inputs=(d32,), outputs=(Port("y", DType.QUINT8),))
    def from_d32(ctx: KernelContext, x: Tensor):
        """Test op: back to flat."""
        return (x.to_flat(),)

    @op(SUM_ALL, Category.USER, user=True, inputs=(d32,), outputs=(Port("y", DType.INT32),))
    def sum_all(ctx: KernelContext, x: Tensor):
        """Test op: sum of every byte of the buffer."""
        return (np.array([[[[int(x.buffer.astype(np.int64).sum())]]]], np.int32),)

    _load_peek_plugin()
    yield
    for name in (TO_D32, FROM_D32, SUM_ALL):
        REGISTRY.unregister(name)


def _graph(middle: str | None) -> Graph:
    """INPUT -> to d32 -> [middle] -> from d32 -> OUTPUT, input 1x5x6x3 quint8."""
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 5, 6, 3), 1)])
    g.append_node(0x101, TO_D32, inputs=[(0x100, 0)], outputs=[OutputDef((1, 5, 6, 3), 1)])
    src = 0x101
    if middle == "peek":
        g.append_const_node(0x10, np.array([0.0], np.float32))
        g.append_const_node(0x11, np.array([1.0], np.float32))
        g.append_node(0x102, "PeekLeft_8_d32", inputs=[(0x101, 0), (0x10, 0), (0x11, 0)],
                      outputs=[OutputDef((1, 5, 6, 3), 1), OutputDef((1, 1, 1, 1), 4),
                               OutputDef((1, 1, 1, 1), 4)])
        src = 0x102
    g.append_node(0x103, FROM_D32, inputs=[(src, 0)], outputs=[OutputDef((1, 5, 6, 3), 1)])
    g.append_node(0x104, "OUTPUT", inputs=[(0x103, 0)])
    return g


def _input(rng) -> np.ndarray:
    # Values 1..254 so that neither pattern (0x00, 0xFF) can hide behind the data in a max.
    return rng.integers(1, 255, (1, 5, 6, 3)).astype(np.uint8)


def test_check_padding_clean_graph_has_no_readers(rng):
    report = check_padding(_graph(None), [_input(rng)])
    assert report.readers == []
    assert report.d32_outputs == 1            # the to-d32 output had its padding set
    assert "no node reads padding" in report.lines()


def test_check_padding_finds_the_peeking_plugin_op(rng):
    x = _input(rng)
    report = check_padding(_graph("peek"), [x])
    assert report.readers == [0x102]
    finding = report.findings[0]
    assert finding.op == "PeekLeft_8_d32" and finding.outputs == (0,)
    # Independent count: with pattern 0x00 the max at w = 0 is the element, with 0xFF it is
    # 255; every w = 0 element (5 rows x 3 channels) differs, nothing else does.
    assert finding.changed == 5 * 3 and finding.total == x.size
    assert finding.first == (0, 0, 0, 0)
    # The conversion back to flat changes too, but only because its input did.
    assert report.inherited == [0x103]
    assert any("0x102 PeekLeft_8_d32" in line for line in report.lines())


def test_check_padding_reports_an_op_that_reads_all_padding(rng):
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=[OutputDef((1, 2, 3, 5), 1)])
    g.append_node(0x101, TO_D32, inputs=[(0x100, 0)], outputs=[OutputDef((1, 2, 3, 5), 1)])
    g.append_node(0x102, SUM_ALL, inputs=[(0x101, 0)], outputs=[OutputDef((1, 1, 1, 1), 4)])
    g.append_node(0x103, "OUTPUT", inputs=[(0x102, 0)])
    x = rng.integers(0, 256, (1, 2, 3, 5)).astype(np.uint8)
    report = check_padding(g, [x], patterns=(0x00, 0x01, 0xFF))
    assert report.readers == [0x102]
    assert report.findings[0].changed == 1


def test_check_padding_default_inputs_come_from_the_saved_sources():
    g = _graph("peek")
    set_input_sources(g, [InputSource(kind="random", dtype="uint8", low=1, high=254, seed=3)])
    assert check_padding(g).readers == [0x102]


def test_check_padding_rejects_a_single_pattern(rng):
    with pytest.raises(InputError, match="two different patterns"):
        check_padding(_graph(None), [_input(rng)], patterns=(0x00, 0x100))
