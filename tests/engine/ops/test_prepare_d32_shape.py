"""The notes prepare gives for the shape/resize ops nnlib's prepare would move to d32
(prepare.c ``depth32_replacement_op``; engine/prepare/d32_shape.py)."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare


def _graph(op: str, params: list[np.ndarray], out: tuple[int, int, int, int],
           src_op: str = "INPUT", n_out: int = 3, same_wire: bool = False) -> Graph:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 8, 8, 64), 1)])
    src = 0x10
    if src_op == "Convert_from_d32":
        g.append_node(0x11, "Convert_to_d32", inputs=[(0x10, 0)],
                      outputs=[OutputDef((1, 8, 8, 64), 1)])
        g.append_node(0x12, "Convert_from_d32", inputs=[(0x11, 0)],
                      outputs=[OutputDef((1, 8, 8, 64), 1)])
        src = 0x12
    ids = []
    for k, p in enumerate(params):
        g.append_const_node(0x100 + k, p)
        ids.append((0x100 + k, 0))
    inputs = {"QuantizedPad_8": [(src, 0), ids[0], ids[1], ids[2]],
              "MirrorPad_8": [(src, 0), ids[2], ids[0], ids[1]],
              "QuantizedSplit_8": [(src, 0) if same_wire else ids[2], (src, 0), ids[0], ids[1]],
              "DepthToSpace_8": [(src, 0), ids[2], ids[0], ids[1]],
              "QuantizedResizeBilinear_8": [(src, 0), ids[2], ids[0], ids[1]]}[op]
    outs = [OutputDef(out, 1)] * (n_out - 2) + [OutputDef((1, 1, 1, 1), 4)] * 2
    g.append_node(0x20, op, inputs=inputs, outputs=outs)
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, k) for k in range(n_out)])
    return g


RANGE = [np.array([0.0], np.float32), np.array([1.0], np.float32)]


def _notes(g: Graph) -> list[str]:
    return [n for n in prepare(g).notes if n.startswith("0x20:")]


def test_pad_fed_from_d32_without_depth_padding_is_noted_when_run_as_authored():
    pads = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)
    g = _graph("QuantizedPad_8", [*RANGE, pads], (1, 10, 10, 64), "Convert_from_d32")
    (note,) = [n for n in prepare(g, fusions=False).notes if n.startswith("0x20:")]
    assert "QuantizedPad_8_d32" in note and "depth32_replacement_op" in note
    # flat input, or depth padding: stays flat on the device too
    assert not _notes(_graph("QuantizedPad_8", [*RANGE, pads], (1, 10, 10, 64)))
    depth = np.array([[0, 0], [0, 0], [0, 0], [0, 1]], np.int32)
    assert not _notes(_graph("QuantizedPad_8", [*RANGE, depth], (1, 8, 8, 65),
                             "Convert_from_d32"))


def test_mirror_pad_reads_its_max_as_the_pads_so_stays_flat():
    pads = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)
    assert not _notes(_graph("MirrorPad_8", [*RANGE, pads], (1, 10, 10, 64),
                             "Convert_from_d32"))


def _authored_notes(g: Graph) -> list[str]:
    return [n for n in prepare(g, fusions=False).notes if n.startswith("0x20:")]


def test_split_on_depth_is_noted_as_authored_and_on_width_not():
    # prepared, the split is rewritten to QuantizedSplit_8_d32 (test_prepare_d32_forms.py)
    axis = np.array([3], np.int32)
    assert _authored_notes(_graph("QuantizedSplit_8", [*RANGE, axis], (1, 8, 8, 32), n_out=4))
    assert _authored_notes(_graph("QuantizedSplit_8", [*RANGE, axis], (1, 8, 8, 32), n_out=4,
                                  same_wire=True))
    width = np.array([2], np.int32)
    assert not _authored_notes(_graph("QuantizedSplit_8", [*RANGE, width], (1, 8, 4, 64),
                                      n_out=4))


def test_depth_to_space_needs_depth_32_multiples():
    # prepared, it is rewritten to DepthToSpace_8_d32 (test_prepare_d32_shape_forms.py)
    assert _authored_notes(_graph("DepthToSpace_8", [*RANGE, np.array([2], np.int32)],
                                  (1, 16, 16, 16)))
    assert not _authored_notes(_graph("DepthToSpace_8", [*RANGE, np.array([4], np.int32)],
                                      (1, 32, 32, 4)))


def test_resize_bilinear_of_depth_over_2_is_noted():
    # prepared, it is rewritten to QuantizedResizeBilinear_8_d32 (test_prepare_d32_shape_forms)
    size = np.array([16, 16], np.int32)
    assert _authored_notes(_graph("QuantizedResizeBilinear_8", [*RANGE, size],
                                  (1, 16, 16, 64)))
    assert not _authored_notes(_graph("QuantizedResizeBilinear_8", [*RANGE, size],
                                      (1, 16, 16, 2)))


def test_pad_fed_from_d32_is_rewritten_and_runs_the_same_values():
    from hexscope.engine.session import Session

    pads = np.array([[0, 0], [1, 1], [1, 2], [0, 0]], np.int32)
    g = _graph("QuantizedPad_8", [*RANGE, pads, np.array([0.5], np.float32)][:3],
               (1, 10, 11, 64), "Convert_from_d32")
    p = prepare(g)
    assert p.nodes[0x20].op == "QuantizedPad_8_d32" and p.nodes[0x20].inputs[0] == (0x11, 0)
    assert p.nodes[0x12].inputs == ((0x20, 0),)              # the converter moved after it
    assert p.nodes[0x30].inputs[0] == (0x12, 0)
    assert p.plan.index(0x12) == p.plan.index(0x20) + 1
    kinds = {r.node_id: r.kind for r in p.rewrites}
    assert kinds[0x20] == "replaced" and kinds[0x12] == "replaced"
    assert not _notes(g)                                     # rewritten, so no note
    x = np.random.default_rng(1).integers(0, 256, (1, 8, 8, 64), dtype=np.uint8)
    out = Session(g).execute([x])
    want = np.pad(x, ((0, 0), (1, 1), (1, 2), (0, 0)), constant_values=0)
    np.testing.assert_array_equal(np.asarray(out[0].array), want)
    # run as authored: no rewrite
    assert prepare(g, fusions=False).nodes[0x20].op == "QuantizedPad_8"


def test_every_avg_pool_becomes_the_d32_op_the_device_runs():
    # depth32_replacement_op: "case OP_QuantizedAvgPool_8: return OP_QuantizedAvgPool_8_d32",
    # whatever feeds it; op_avgpool_d32.c sums in 32 bits where the flat op's 16-bit lanes
    # wrap (a global pool of MediaPipe's selfie segmentation was 185 codes from TFLite):
    # prepare runs it (tests/engine/test_prepare_avgpool_d32.py); as authored, a note
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 16, 16, 8), 1)])
    for k, v in enumerate((0.0, 1.0)):
        g.append_const_node(0x100 + k, np.array([v], np.float32))
    g.append_const_node(0x102, None, shape=(1, 16, 16, 1))
    g.append_const_node(0x103, None, shape=(1, 16, 16, 1))
    g.append_node(0x20, "QuantizedAvgPool_8",
                  inputs=[(0x10, 0), (0x100, 0), (0x101, 0), (0x102, 0), (0x103, 0)],
                  outputs=[OutputDef((1, 1, 1, 8), 1), OutputDef((1, 1, 1, 1), 4),
                           OutputDef((1, 1, 1, 1), 4)], padding="VALID")
    g.append_node(0x30, "OUTPUT", inputs=[(0x20, 0)])
    assert not _notes(g) and prepare(g).nodes[0x20].op == "QuantizedAvgPool_8_d32"
    (note,) = [n for n in prepare(g, fusions=False).notes if n.startswith("0x20:")]
    assert "QuantizedAvgPool_8_d32 on the device" in note and "16-bit sums wrap" in note
