"""Prepare folds a flat Supernode's ChannelScale (input 12) into its weights (nnlib prepare.c
remove_unimplemented_channelscale → prepare_utils.c handle_channelscaled_supernode), after its
d32 conversion: a Supernode that becomes Supernode_*_d32 keeps its scales."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph, Session
from hexscope.engine.errors import GraphError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.prepare import prepare
from hexscope.engine.prepare.channelscale import rescale_weights

W = np.array([200, 50, 128, 0, 255, 140], np.uint8).reshape(1, 1, 3, 2)


def _graph(scales, weights=W, *, shared=False, wrange=(-1.0, 1.0),
           op="Supernode_8x8p32to8_ref"):
    """INPUT 0x10 (1x2x2x3) → Supernode 0x40 (13 inputs) → OUTPUT 0x50. The ``_ref`` stays
    flat (depth32_replacement_op has no case for it), so prepare folds its scales."""
    g = Graph()
    cin, cout = weights.shape[2], weights.shape[3]
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 2, 2, cin), 1)])
    for nid, v in ((0x11, 0.0), (0x12, 6.0), (0x13, wrange[0]), (0x14, wrange[1]),
                   (0x17, -2.0**31 * 6 / 255 * 2 / 255), (0x18, 2.0**31 * 6 / 255 * 2 / 255),
                   (0x19, -np.inf), (0x1A, np.inf)):
        g.append_const_node(nid, np.array([v], np.float32))
    g.append_const_node(0x15, weights)
    g.append_const_node(0x16, None, shape=(1, 1, 1, 1))
    bias = np.arange(cout, dtype=np.int32) if "8x8p32" in op \
        else np.full(cout, 128, np.uint8)
    g.append_const_node(0x1B, bias.reshape(1, 1, 1, cout))
    g.append_const_node(0x1C, np.asarray(scales, np.float32).reshape(1, 1, 1, -1))
    g.append_node(0x40, op, inputs=[(0x10, 0), (0x15, 0), (0x11, 0), (0x12, 0), (0x13, 0),
                                    (0x14, 0), (0x16, 0), (0x1B, 0), (0x17, 0), (0x18, 0),
                                    (0x19, 0), (0x1A, 0), (0x1C, 0)],
                  outputs=[OutputDef((1, 2, 2, cout), 1), OutputDef(), OutputDef()],
                  padding="SAME")
    g.append_node(0x50, "OUTPUT", inputs=[(0x40, 0)])
    if shared:
        g.append_node(0x51, "OUTPUT", inputs=[(0x15, 0)])
    return g


def test_per_channel_scales_rescale_the_weights_by_hand():
    # range [-1, 1]: zero code round(1 * 255 / 2) = 128 (half away from zero). Scale 0.5:
    # q = 32768 - 16384 = 16384; w = 200: ((72 * 16384 + 16384) >> 15) = 36 -> 164;
    # w = 128 -> 128; w = 255: (127 * 16384 + 16384) >> 15 = 64 -> 191.
    # Scale 1.0: q = 0, unchanged. Scale 0.25: q = 24576; w = 50: (-78 * 24576 + 16384)
    # >> 15 = -58 (floor) -> 108, w = 0: -96 -> 96, w = 140: 9 -> 131.
    got = rescale_weights(W, np.array([0.5, 0.25], np.float32), -1.0, 1.0)
    assert got.reshape(-1).tolist() == [164, 108, 128, 96, 191, 131]
    assert rescale_weights(W, np.array([1.0, 1.0], np.float32), -1.0, 1.0).tobytes() == \
        W.tobytes()


def test_prepare_folds_the_scales_and_gives_input_12_a_one():
    p = prepare(_graph([0.5, 0.25]))
    sn = p.nodes[0x40]
    assert sn.inputs[1] == (0x15, 0)           # the only reader: rewritten in place
    assert p.nodes[0x15].const.array.reshape(-1).tolist() == [164, 108, 128, 96, 191, 131]
    one = p.nodes[sn.inputs[12][0]]
    assert one.const.array.reshape(-1).tolist() == [1.0] and sn.inputs[12][0] >= 0xFFFFFFF0
    why = p.rewrite_of(0x40)
    assert why.kind == "replaced" and "ChannelScale folded" in why.reason


def test_weights_with_another_reader_are_copied():
    p = prepare(_graph([0.5, 0.25], shared=True))
    new = p.nodes[0x40].inputs[1][0]
    assert new != 0x15 and p.nodes[0x15].const.array.tobytes() == W.tobytes()
    assert p.nodes[new].const.array.reshape(-1).tolist() == [164, 108, 128, 96, 191, 131]


def test_one_scale_scales_the_weight_range_and_1_0_changes_nothing():
    p = prepare(_graph([0.5]))
    sn = p.nodes[0x40]
    lo, hi = (float(p.nodes[sn.inputs[k][0]].const.array.reshape(-1)[0]) for k in (4, 5))
    assert (lo, hi) == (-0.5, 0.5)
    assert prepare(_graph([1.0])).nodes[0x40].inputs[12] == (0x1C, 0)


@pytest.mark.parametrize("scales, wrange, match", [
    ([0.5, 0.25], (0.5, 1.0), "bad weight range"),
    ([0.5, 0.25, 0.1], (-1.0, 1.0), "does not match"),
    ([1e-7], (-1.0, 1.0), "won't scale"),
])
def test_what_the_device_refuses_fails_prepare_naming_the_node(scales, wrange, match):
    with pytest.raises(GraphError, match=match) as err:
        prepare(_graph(scales, wrange=wrange))
    assert "0x40" in str(err.value)


def test_a_run_uses_the_folded_weights():
    # the 13-input node runs as the 12-input one over the weights rescaled by hand
    x = np.random.default_rng(1).integers(0, 256, (1, 2, 2, 3), dtype=np.uint8)
    folded = Session(_graph([0.5, 0.25])).execute([x])[0]
    g = _graph([1.0], weights=rescale_weights(W, np.array([0.5, 0.25], np.float32), -1, 1))
    plain = Session(g).execute([x])[0]
    unscaled = Session(_graph([1.0])).execute([x])[0]
    assert folded.array.tobytes() == plain.array.tobytes() != unscaled.array.tobytes()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0.0625, 1.0, width=32), min_size=1, max_size=6), st.data())
def test_rescaled_weights_are_the_scaled_reals_within_one_code(scales, data):
    # (w' - z) ~ (w - z) * scale: the fold keeps each weight's real value times its
    # channel's scale, to within rounding (half a code, plus the saturation at 0 and 255)
    depth = len(scales)
    codes = np.array(data.draw(st.lists(st.integers(0, 255), min_size=depth * 3,
                                        max_size=depth * 3)), np.uint8).reshape(1, 3, 1, depth)
    got = rescale_weights(codes, np.array(scales, np.float32), -1.0, 1.0).astype(float)
    want = 128 + (codes.astype(float) - 128) * np.array(scales)
    assert np.all(np.abs(got - want) <= 1.0)


def test_a_supernode_that_becomes_d32_keeps_its_scales():
    # nnlib's prepare runs remove_unimplemented_channelscale after convert_to_depth32
    # (prepare.c:4926-4930), and try_unimplemented_channelscale leaves Supernode_*_d32 alone
    # (commented out of its list, prepare.c:1428-1429): the d32 op applies the scales as
    # multipliers (load_channel_scales). Hexscope folded them before the conversion.
    p = prepare(_graph([0.5, 0.25], op="Supernode_8x8p32to8"))
    sn = p.nodes[0x40]
    assert sn.op == "Supernode_8x8p32to8_d32"
    assert sn.inputs[1] == (0x15, 0) and sn.inputs[12] == (0x1C, 0)
    assert p.nodes[0x15].const.array.tobytes() == W.tobytes()
    assert "ChannelScale folded" not in p.rewrite_of(0x40).reason
    # as authored (no d32 conversion) the flat op folds them, as the library with
    # test_no_d32conv does
    flat = prepare(_graph([0.5, 0.25], op="Supernode_8x8p32to8"), fusions=False)
    assert flat.nodes[0x15].const.array.reshape(-1).tolist() == [164, 108, 128, 96, 191, 131]


def test_an_authored_input_supernode_is_folded_as_the_library_folds_it():
    # InputSupernode_8x8p32to8_outd32 is in try_unimplemented_channelscale's list
    # (prepare.c:1430-1431); prepare never makes one of a 13-input Supernode
    # (depth32_replacement_op: n_inputs < 13), but a graph may hold one
    p = prepare(_graph([0.5, 0.25], op="InputSupernode_8x8p32to8_outd32"))
    assert p.nodes[0x15].const.array.reshape(-1).tolist() == [164, 108, 128, 96, 191, 131]
    assert "ChannelScale folded" in p.rewrite_of(0x40).reason
