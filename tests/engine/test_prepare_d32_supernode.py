"""Prepare's d32 conversion of the Supernodes (nnlib prepare.c convert_to_depth32 with
depth32_replacement_op and do_convert_to_short_conv) and the d32 ops it makes
(op_supernode_new.c, op_dwise_snode_8bit.c)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph, Session
from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import Layout
from hexscope.engine.errors import GraphError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare

SN = "Supernode_8x8p32to8"


def _graph(depth: int = 8, stride: tuple[int, int] = (1, 1), n: int = 2, hw: int = 5,
           scales: bool = False, second: bool = False, padding: str = "SAME",
           out_range: tuple[float, float] = (-6.0, 6.0)) -> Graph:
    """INPUT 0x10 → Supernode_8x8p32to8 0x40 [→ Supernode_8x8p32to8 0x41] → OUTPUT 0x50."""
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, hw, hw, depth), 1)])
    for nid, v in ((0x11, -1.0), (0x12, 1.0), (0x13, -2.0), (0x14, 2.0), (0x18, out_range[0]),
                   (0x19, out_range[1])):
        g.append_const_node(nid, np.array([v], np.float32))
    rng = np.random.default_rng(depth)
    g.append_const_node(0x15, rng.integers(0, 256, (3, 3, depth, n), dtype=np.uint8))
    g.append_const_node(0x16, shape=(1, stride[0], stride[1], 1))
    g.append_const_node(0x17, np.arange(n, dtype=np.int32).reshape(1, 1, 1, n) * 50)
    g.append_const_node(0x1A, np.full((1, 1, 1, n), 0.5, np.float32))
    g.append_const_node(0x1B, rng.integers(0, 256, (3, 3, n, n), dtype=np.uint8))

    def sn(nid: int, src: int, wts: int, d: int) -> None:
        oh = -(-hw // stride[0]) if padding == "SAME" else (hw - 3) // stride[0] + 1
        ow = -(-hw // stride[1]) if padding == "SAME" else (hw - 3) // stride[1] + 1
        inputs = [(src, 0), (wts, 0), (0x11, 0), (0x12, 0), (0x13, 0), (0x14, 0), (0x16, 0),
                  (0x17, 0), (0x13, 0), (0x14, 0), (0x18, 0), (0x19, 0)]
        if scales:
            inputs.append((0x1A, 0))
        g.append_node(nid, SN, inputs=inputs, padding=padding,
                      outputs=[OutputDef((1, oh, ow, n), 1), OutputDef(), OutputDef()])
        del d
    sn(0x40, 0x10, 0x15, depth)
    last = 0x40
    if second:
        sn(0x41, 0x40, 0x1B, n)
        last = 0x41
    g.append_node(0x50, "OUTPUT", inputs=[(last, 0)])
    return g


def _ops(p) -> list[str]:
    return [p.nodes[i].op for i in p.plan]


def _x(g: Graph) -> np.ndarray:
    shape = g.node(0x10).outputs[0].max_sizes
    return (np.arange(int(np.prod(shape))) * 37 % 256).astype(np.uint8).reshape(shape)


def test_a_supernode_becomes_its_d32_form_between_the_conversions():
    g = _graph(depth=8)
    p = prepare(g)
    assert _ops(p) == ["INPUT", "Convert_to_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32",
                       "OUTPUT"]
    sn = p.nodes[0x40]
    assert p.nodes[sn.inputs[0][0]].inputs == ((0x10, 0),) and sn.inputs[1:] == \
        g.node(0x40).inputs[1:]
    assert p.nodes[p.plan[3]].inputs == ((0x40, 0),)
    reason = p.rewrite_of(0x40).reason
    assert "becomes Supernode_8x8p32to8_d32" in reason and "convert_to_depth32" in reason


# supernode_utils.h setup_initial_output_range: a fixed range with min < 0 is moved so that 0
# is a code (adjust_minmax_for_zero_with_constraints, both ends fixed): [-6, 6] has zero at
# code 127.5, both ends move down by half a step, 0.5 x 12 / 255, to zero at code 128
MOVED = (float(np.float32(-6 - 6 / 255)), float(np.float32(6 - 6 / 255)))


def _device_codes(x: np.ndarray, w: np.ndarray, stride: tuple[int, int] = (1, 1),
                  zx: int = 127) -> np.ndarray:
    """What nnlib's HVX Supernode_8x8p32to8_d32 (and the input Supernode) computes for
    _graph's 3x3 SAME filters, by hand: the zero codes of [-1, 1] and [-2, 2] are 127
    (get_qu8_level_size_zero: the float32 step 2/255 rounds up, so 1/step = 127.49999...),
    the moved range's is 128; the window's padding before is the input size's
    (nn_pad_compute_outsize_and_pad); the exact sums of (x - zx)(w - 127) (padding adds 0),
    times the product step, plus the bias (n x 50 in steps of 4 / 2**32), in steps of the
    moved output range, offset by 128 and rounded (the fixed-point gain x 2**31 rounded at
    bit 31 gives the same codes here)."""
    (h, wd), (sh, sw), n = x.shape[1:3], stride, w.shape[3]
    oh, ow = -(-h // sh), -(-wd // sw)
    top, left = ((oh - 1) * sh + 3 - h) // 2, ((ow - 1) * sw + 3 - wd) // 2
    xs = np.pad(x[0].astype(np.int64) - zx, ((top, 3 + sh * oh), (left, 3 + sw * ow), (0, 0)))
    wc = w.astype(np.int64) - 127
    sums = np.array([[np.tensordot(xs[i * sh:i * sh + 3, j * sw:j * sw + 3], wc, 3)
                      for j in range(ow)] for i in range(oh)])
    real = sums * (2 / 255) * (4 / 255) + np.arange(n) * 50 * (4 / 2**32)
    return np.clip(np.floor(real / ((MOVED[1] - MOVED[0]) / 255) + 128.5), 0, 255)[None]


def test_the_d32_form_computes_what_the_devices_hvx_op_does_in_its_own_padding():
    g = _graph(depth=8, hw=5, n=3)
    s = Session(g)
    (y,) = s.execute([_x(g)])
    np.testing.assert_array_equal(y.array, _device_codes(_x(g), g.node(0x15).const.array))
    assert (float(s.output(0x40, 1).array.reshape(-1)[0]),
            float(s.output(0x40, 2).array.reshape(-1)[0])) == MOVED
    # the flat op (the _ref: zero codes 128, the range kept) differs by up to 3 codes
    (flat_y,) = Session(g, fusions=False).execute([_x(g)])
    assert 0 < np.abs(flat_y.array.astype(int) - y.array).max() <= 3
    d32 = s.output(0x40)
    assert d32.layout is Layout.D32
    # supernode_recalculate_strategy: 4 rows above and below, 4 columns left, (-5) & 3 = 3
    # right, depth 3 padded to 32 after
    assert d32.padding == D32Padding(4, 4, 4, 3, 0, 29)


def test_a_small_input_depth_makes_the_input_supernode_but_an_odd_stride_stays_flat():
    p = prepare(_graph(depth=3, stride=(2, 2)))
    assert _ops(p) == ["INPUT", "InputSupernode_8x8p32to8_outd32", "Convert_from_d32", "OUTPUT"]
    assert p.nodes[0x40].inputs[0] == (0x10, 0)                    # flat in
    assert _ops(prepare(_graph(depth=3, stride=(1, 3)))) == ["INPUT", SN, "OUTPUT"]
    assert _ops(prepare(_graph(depth=4, stride=(1, 5))))[2] == "Supernode_8x8p32to8_d32"
    # a ChannelScale (13 inputs) keeps it from the input Supernode
    assert _ops(prepare(_graph(depth=3, scales=True)))[2] == "Supernode_8x8p32to8_d32"


def test_the_input_supernode_computes_what_the_devices_hvx_op_does():
    g = _graph(depth=3, stride=(2, 2), hw=6)
    (y,) = Session(g).execute([_x(g)])
    np.testing.assert_array_equal(y.array, _device_codes(_x(g), g.node(0x15).const.array,
                                                         (2, 2)))
    # the flat _ref's window starts 2 rows and columns up-left (its padding before is the
    # output size's): far from it
    (flat,) = Session(g, fusions=False).execute([_x(g)])
    assert np.abs(flat.array.astype(int) - y.array).max() > 50


def test_two_supernodes_in_a_row_pass_d32_between_them():
    p = prepare(_graph(depth=8, n=8, second=True))
    # the second reads the first's d32 output: no Convert_from/Convert_to between them
    assert _ops(p) == ["INPUT", "Convert_to_d32", "Supernode_8x8p32to8_d32",
                       "Supernode_8x8p32to8_d32", "Convert_from_d32", "OUTPUT"]
    assert p.nodes[0x41].inputs[0] == (0x40, 0)
    g = _graph(depth=8, n=8, second=True)
    (y,) = Session(g).execute([_x(g)])
    first = _device_codes(_x(g), g.node(0x15).const.array)
    # the second reads the first's codes (its input range inputs are _graph's [-1, 1])
    np.testing.assert_array_equal(y.array, _device_codes(first, g.node(0x1B).const.array))


def test_channel_scales_stay_an_input_of_the_d32_supernode():
    g = _graph(depth=8, scales=True)
    (y,) = Session(g).execute([_x(g)])
    p = prepare(g)
    assert p.nodes[0x40].op == "Supernode_8x8p32to8_d32"
    # not folded: remove_unimplemented_channelscale runs after convert_to_depth32 and skips
    # the d32 Supernodes (prepare.c:1422-1446, 4926-4930); the op applies them
    assert p.nodes[0x40].inputs[12] == g.node(0x40).inputs[12]
    assert y.shape == (1, 5, 5, 2)


def test_weights_that_are_not_const_fail_prepare_naming_the_node():
    g = _graph(depth=8)
    node = g.node(0x40)
    g.replace_node(node.with_(inputs=(node.inputs[0], (0x10, 0), *node.inputs[2:])))
    with pytest.raises(GraphError, match="0x40 .Supernode_8x8p32to8.: supernode weights not "
                                         "found, or not const"):
        prepare(g)


def test_the_input_supernode_refuses_what_its_code_does_not_handle():
    for depth, stride, message in ((8, (1, 1), "input depth > 4"),
                                   (3, (1, 5), "Add support for stride > 4")):
        g = _graph(depth=depth, stride=stride)
        g.replace_node(g.node(0x40).with_(op="InputSupernode_8x8p32to8_outd32"))
        with pytest.raises(Exception, match=message):
            Session(g, fusions=False).execute([_x(g)])


def test_after_a_d32_supernode_a_small_depth_one_takes_the_flat_tensor():
    # the second's input depth is 2: the input Supernode, which reads flat data
    p = prepare(_graph(depth=8, n=2, second=True))
    assert _ops(p) == ["INPUT", "Convert_to_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32",
                       "InputSupernode_8x8p32to8_outd32", "Convert_from_d32", "OUTPUT"]


def test_as_authored_nothing_is_converted():
    assert _ops(prepare(_graph(depth=8), fusions=False)) == ["INPUT", SN, "OUTPUT"]


def test_a_supernode_left_flat_gets_a_note_where_the_devices_hvx_code_refuses_it():
    # depth 3 with stride width 3: stays flat; 3 x 3 x 3 = 27 taps, not a multiple of 32
    g = _graph(depth=3, stride=(1, 3))
    assert not prepare(g).notes
    g.replace_node(g.node(0x10).with_(outputs=(OutputDef((2, 5, 5, 3), 1),)))
    (note,) = prepare(g).notes
    assert note.startswith("0x40:") and "Batch size > 1 not supported with odd in depth" in note
    # an 8-bit bias whose range passes 2**30 output steps (step 2/255 x 4/255 here)
    g = _graph(depth=3, stride=(1, 3), hw=12)
    g.append_const_node(0x1C, np.full((1, 1, 1, 2), 128, np.uint8))
    g.append_const_node(0x1D, np.array([2.0**30 * 2 * 4 / 255 / 255 * 1.01], np.float32))
    node = g.node(0x40)
    ins = list(node.inputs)
    ins[7], ins[9] = (0x1C, 0), (0x1D, 0)
    g.replace_node(node.with_(op="Supernode_8x8p8to8", inputs=tuple(ins)))
    (note,) = prepare(g).notes
    assert "bias magnitude too large" in note


def test_the_channel_scales_multiply_each_channel_as_load_channel_scales_does():
    """The 13th input of a d32 Supernode scales each channel's multiplier by k and its bias by
    1/k (op_supernode_new.c ``load_channel_scales``); the weights are not refolded (the old
    model folded the scales into the weights, as the flat ``_ref`` would not). With a fixed
    output range a channel whose scale is 1.0 keeps the unscaled run's codes, the others move;
    the node's state carries nothing from one set of scales to the next."""
    from hexscope.engine.dtypes import DType
    from hexscope.engine.ops.context import KernelContext
    from hexscope.engine.ops.registry import REGISTRY
    from hexscope.engine.tensor import Tensor

    rng = np.random.default_rng(3)
    kernel = REGISTRY.get("Supernode_8x8p32to8_d32").kernel

    def f(v: float) -> Tensor:
        return Tensor.from_array(np.array([v], np.float32)).readonly()

    x = Tensor.from_array(rng.integers(0, 256, (1, 4, 4, 8), dtype=np.uint8),
                          DType.QUINT8).to_d32().readonly()
    rest = [Tensor.from_array(rng.integers(0, 256, (3, 3, 8, 4), dtype=np.uint8),
                              DType.QUINT8).readonly(), f(-1.0), f(1.0), f(-2.0), f(2.0),
            Tensor.shape_only((1, 1, 1, 1)),
            Tensor.from_array(np.arange(4, dtype=np.int32) * 50, DType.QINT32).readonly(),
            f(-2.0), f(2.0), f(-6.0), f(6.0)]
    half, other, ones = (Tensor.from_array(np.array(v, np.float32)).readonly()
                         for v in ([0.5, 0.25, 1.0, 0.75], [1.0, 0.5, 0.5, 0.125],
                                   [1.0, 1.0, 1.0, 1.0]))

    def run(ctx, *scales):
        y, lo, hi = kernel(ctx, x, *rest, *scales)
        return y.to_flat().array, lo.array.tolist(), hi.array.tolist()

    plain = run(KernelContext(0, "x"))
    ctx = KernelContext(1, "Supernode_8x8p32to8_d32")
    first = run(ctx, half)
    assert first[1:] == plain[1:]           # a fixed range does not move
    same = first[0] == plain[0]
    assert same[..., 2].all() and not same[..., [0, 1, 3]].all(axis=(0, 1, 2)).any()
    np.testing.assert_array_equal(run(ctx, half)[0], first[0])
    second = run(ctx, other)[0]
    np.testing.assert_array_equal(second, run(KernelContext(2, "x"), other)[0])
    assert (second[..., 0] == plain[0][..., 0]).all() and not (second == first[0]).all()
    np.testing.assert_array_equal(run(ctx, half)[0], first[0])
    np.testing.assert_array_equal(run(KernelContext(3, "x"), ones)[0], plain[0])
