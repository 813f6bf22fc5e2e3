"""Which input padding columns the d32 Supernodes read as the input's zero code (nnlib zaps
them before the run) and which they read as they are in memory.

``supernode_execute_workitem_startwork`` zaps the right padding only when it does not start a
vector (``work->zap_right_size && (right_ptr_l % 128)``, supernode_utils.h:880) and
``padzap_part`` (padzap_d32.S) never leaves its first vector, holding ``size`` mod 4 columns
(4 for a multiple of 4). Hand vectors: codes 1 over a range of one unit a code, a 1x3 filter
of ones, SAME, the padding filled with 200, the output range [0, 255] (one unit a code), so
a column's code is its window's sum: 2 at an edge read as zero, 202 where the padding is read
as it is. Every vector below is also what nnlib's HVX build gives under qemu-hexagon
(docs/oracle-hvx.md). The depthwise Supernode (``dwise_supernode_execute``) asks the same
zaps of the same code, for the whole width padding.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv.d32_input_reads import Zaps, read_area, zap_span
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor

OP = "Supernode_8x8p8to8_d32"


def _f(v: float) -> Tensor:
    return Tensor.from_array(np.array([v], np.float32).reshape(1, 1, 1, 1))


def _run(w: int, pad: tuple[int, int, int, int, int, int]) -> list[int]:
    p = D32Padding(*pad)
    ht, wt, dt = 1 + p.h_before + p.h_after, w + p.w_before + p.w_after, 32
    mem = np.full((1, ht, 1, wt, dt), 200, np.uint8)
    mem[0, p.h_before, 0, p.w_before:p.w_before + w, 0] = 1
    x = Tensor((1, 1, w, 1), DType.QUINT8, mem.reshape(-1), Layout.D32, p)
    filt = Tensor.from_array(np.ones((1, 3, 1, 1), np.uint8), DType.QUINT8)
    bias = Tensor.from_array(np.full((1, 1, 1, 1), 128, np.uint8), DType.QUINT8)
    defs = (OutputDef((1, 1, w, 1), 1), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4))
    ctx = KernelContext(node_id=1, op=OP, padding=Padding.SAME, output_defs=defs,
                        input_refs=tuple((100 + k, 0) for k in range(12)))
    y, _, _ = REGISTRY.get(OP).kernel(ctx, x, filt, _f(0), _f(255), _f(0), _f(255),
                                      Tensor.shape_only((1, 1, 1, 1)), bias, _f(-1), _f(1),
                                      _f(0), _f(255))
    return [int(v) for v in np.asarray(y.array).reshape(-1)]


@pytest.mark.parametrize(("w", "pad", "want"), [
    # the right padding starts a vector: not zapped, the last window reads 200
    (4, (4, 4, 4, 4, 0, 31), [2, 3, 3, 202]),
    # it starts inside one: zapped as far as the filter reaches (one column)
    (5, (4, 4, 4, 3, 0, 31), [2, 3, 3, 3, 2]),
    (4, (4, 4, 6, 6, 0, 31), [202, 3, 3, 2]),
    # a left padding of 6 is zapped for 6 mod 4 = 2 columns: the one next to the data keeps 200
    (5, (4, 4, 6, 1, 0, 31), [202, 3, 3, 3, 2]),
    # both: a left padding of 5 zaps one column, the right padding starts a vector
    (3, (4, 4, 5, 4, 0, 31), [202, 3, 202]),
    (6, (4, 4, 3, 3, 0, 31), [2, 3, 3, 3, 3, 2]),
])
def test_the_windows_read_the_padding_nnlib_does_not_zap(w, pad, want):
    assert _run(w, pad) == want


DW = "DepthwiseSupernode_8x8p32to8_d32"


def _run_dwise(h: int, w: int, fh: int, pad: tuple[int, int, int, int, int, int],
               out_range: tuple[float, float] = (0.0, 255.0)) -> list[list[int]]:
    p = D32Padding(*pad)
    ht, wt = h + p.h_before + p.h_after, w + p.w_before + p.w_after
    mem = np.full((1, ht, 1, wt, 32), 50, np.uint8)
    mem[0, p.h_before:p.h_before + h, 0, p.w_before:p.w_before + w, 0] = 1
    x = Tensor((1, h, w, 1), DType.QUINT8, mem.reshape(-1), Layout.D32, p)
    filt = Tensor.from_array(np.ones((fh, 3, 1, 1), np.uint8), DType.QUINT8)
    bias = Tensor.from_array(np.zeros((1, 1, 1, 1), np.int32), DType.INT32)
    defs = (OutputDef((1, h, w, 1), 1), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4))
    ctx = KernelContext(node_id=1, op=DW, padding=Padding.SAME, output_defs=defs,
                        input_refs=tuple((100 + k, 0) for k in range(12)))
    y, lo, hi = REGISTRY.get(DW).kernel(ctx, x, filt, _f(0), _f(255), _f(0), _f(255),
                                        Tensor.shape_only((1, 1, 1, 1)), bias, _f(-2.0**31),
                                        _f(2.0**31), _f(out_range[0]), _f(out_range[1]))
    codes = np.asarray(y.array).reshape(h, w).tolist()
    if out_range != (0.0, 255.0):
        codes.append([float(np.asarray(t.array).reshape(-1)[0]) for t in (lo, hi)])
    return codes


@pytest.mark.parametrize(("h", "w", "fh", "pad", "want"), [
    # 2x3 (dwconv2dbbb_s1_3xN_asm): the last column reads the unzapped right padding (50);
    # the second row's window reaches the bottom padding, which is zapped
    (2, 4, 2, (4, 4, 4, 4, 0, 31), [[4, 6, 6, 104], [2, 3, 3, 52]]),
    # 3x3 (dwconv2dbbb_s1_3x3_asm)
    (3, 4, 3, (4, 4, 4, 4, 0, 31), [[4, 6, 6, 104], [6, 9, 9, 156], [4, 6, 6, 104]]),
    # left padding 6: its column next to the data is not zapped; the right one (1) is
    (2, 5, 2, (4, 4, 6, 1, 0, 31), [[104, 6, 6, 6, 4], [52, 3, 3, 3, 2]]),
    (3, 3, 3, (4, 4, 5, 4, 0, 31), [[104, 6, 104], [156, 9, 156], [104, 6, 104]]),
])
def test_the_depthwise_windows_read_the_padding_nnlib_does_not_zap(h, w, fh, pad, want):
    assert _run_dwise(h, w, fh, pad) == want


def _dwise_lanes(pad: tuple[int, int, int, int, int, int], fh: int = 2
                 ) -> tuple[Tensor, ...]:
    p = D32Padding(*pad)
    h, w = 2, 4
    ht, wt = h + p.h_before + p.h_after, w + p.w_before + p.w_after
    slices = (p.d_before + 1 + p.d_after) // 32
    mem = np.full((1, ht, slices, wt, 32), 50, np.uint8)
    mem[0, p.h_before:p.h_before + h, 0, p.w_before:p.w_before + w, p.d_before] = 2
    x = Tensor((1, h, w, 1), DType.QUINT8, mem.reshape(-1), Layout.D32, p)
    filt = Tensor.from_array(np.ones((fh, 3, 1, 1), np.uint8), DType.QUINT8)
    bias = Tensor.from_array(np.zeros((1, 1, 1, 1), np.int32), DType.INT32)
    defs = (OutputDef((1, h, w, 1), 1), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4))
    ctx = KernelContext(node_id=1, op=DW, padding=Padding.SAME, output_defs=defs,
                        input_refs=tuple((100 + k, 0) for k in range(12)))
    return REGISTRY.get(DW).kernel(ctx, x, filt, _f(0), _f(255), _f(0), _f(255),
                                   Tensor.shape_only((1, 1, 1, 1)), bias, _f(-2.0**31),
                                   _f(2.0**31), _f(0), _f(255))


def test_with_depth_padding_before_the_asm_pairs_memory_lanes_with_filter_channels():
    """Input lane p meets filter channel p (dwise_rearrange_weights): with one padding lane
    before, the filter's only channel (ones) convolves the padding (50 where not zapped)
    into the output's padding lane 0, and the data lane meets the filter's zero code: 0."""
    y, _, _ = _dwise_lanes((4, 4, 4, 4, 1, 30))
    p = y.padding
    mem = np.asarray(y.raw).reshape(1, 2 + p.h_before + p.h_after, 1,
                                    4 + p.w_before + p.w_after, 32)
    rows, cols = slice(p.h_before, p.h_before + 2), slice(p.w_before, p.w_before + 4)
    assert (p.d_before, p.d_after) == (1, 30)
    assert mem[0, rows, 0, cols, 0].tolist() == [[200, 255, 255, 255], [100, 150, 150, 150]]
    assert np.asarray(y.array).reshape(-1).tolist() == [0] * 8


@pytest.mark.parametrize(("pad", "fh", "message"), [
    ((4, 4, 4, 4, 0, 63), 2, "filter depth must match input depth"),
    ((4, 0, 4, 4, 0, 31), 3, "inadequate top/bottom padding"),
])
def test_the_depthwise_refuses_the_padding_nnlib_refuses(pad, fh, message):
    with pytest.raises(KernelError, match=message):
        _dwise_lanes(pad, fh)


@pytest.mark.parametrize(("out_max", "want", "top"), [
    (255.0, [[201, 255, 255, 200], [201, 255, 255, 255]], 255.0),
    # an open maximum grows from the group's first column alone: 201 -> quarter octave 256
    (float("inf"), [[200, 255, 255, 199], [200, 255, 255, 255]], 256.0),
])
def test_an_output_of_width_0_still_computes_one_group_of_4_columns(out_max, want, top):
    """A 1x2 filter over one column (VALID): no output column, but the asm computes 4, over
    the unzapped right padding (200), and stores each row's into the next line's left
    padding (the last row's into the first bottom padding row); under QEMU the same."""
    p = D32Padding(4, 4, 4, 3, 0, 31)
    mem = np.full((1, 10, 1, 8, 32), 200, np.uint8)
    mem[0, 4:6, 0, 4, 0] = 1
    x = Tensor((1, 2, 1, 1), DType.QUINT8, mem.reshape(-1), Layout.D32, p)
    filt = Tensor.from_array(np.ones((1, 2, 1, 1), np.uint8), DType.QUINT8)
    bias = Tensor.from_array(np.full((1, 1, 1, 1), 128, np.uint8), DType.QUINT8)
    defs = (OutputDef((1, 2, 1, 1), 1), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4))
    ctx = KernelContext(node_id=1, op=OP, padding=Padding.VALID, output_defs=defs,
                        input_refs=tuple((100 + k, 0) for k in range(12)))
    y, _, hi = REGISTRY.get(OP).kernel(ctx, x, filt, _f(0), _f(255), _f(0), _f(255),
                                       Tensor.shape_only((1, 1, 1, 1)), bias, _f(-1), _f(1),
                                       _f(0), _f(out_max))
    assert y.shape == (1, 2, 0, 1)
    out = np.asarray(y.raw).reshape(10, 4, 32)
    assert out[5:7, :, 0].tolist() == want
    assert float(np.asarray(hi.array).reshape(-1)[0]) == top


def test_a_window_past_a_zapped_bottom_row_reads_the_next_row_as_it_is():
    """The width padding column of a 2x3 SAME window over 3 columns (right padding 1):
    its top taps read the data (1), the zapped right padding and, past the line, the zapped
    first bottom padding row (0); its bottom taps, in that zapped row, read past its line
    into the second bottom padding row, which nnlib does not zap (200): 1 + 200. Under QEMU
    the same."""
    p = D32Padding(4, 4, 4, 1, 0, 31)
    mem = np.full((1, 9, 1, 8, 32), 200, np.uint8)
    mem[0, 4, 0, 4:7, 0] = 1
    x = Tensor((1, 1, 3, 1), DType.QUINT8, mem.reshape(-1), Layout.D32, p)
    filt = Tensor.from_array(np.ones((2, 3, 1, 1), np.uint8), DType.QUINT8)
    bias = Tensor.from_array(np.full((1, 1, 1, 1), 128, np.uint8), DType.QUINT8)
    defs = (OutputDef((1, 1, 3, 1), 1), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4))
    ctx = KernelContext(node_id=1, op=OP, padding=Padding.SAME, output_defs=defs,
                        input_refs=tuple((100 + k, 0) for k in range(12)))
    y, _, _ = REGISTRY.get(OP).kernel(ctx, x, filt, _f(0), _f(255), _f(0), _f(255),
                                      Tensor.shape_only((1, 1, 1, 1)), bias, _f(-1), _f(1),
                                      _f(0), _f(255))
    assert np.asarray(y.raw).reshape(9, 8, 32)[4, 4:8, 0].tolist() == [2, 3, 2, 201]


def test_past_a_batch_s_last_line_the_windows_read_the_next_batch():
    """As above with one padding row above and below and two batches: batch 0's bottom
    taps read past the zapped bottom row into batch 1's top padding row, which nnlib does
    not zap (no window reaches above): 1 + 200. Under QEMU the same (batch 1's read past
    the tensor's memory, which is not modelled)."""
    p = D32Padding(1, 1, 4, 1, 0, 31)
    mem = np.full((2, 3, 1, 8, 32), 200, np.uint8)
    mem[:, 1, 0, 4:7, 0] = 1
    x = Tensor((2, 1, 3, 1), DType.QUINT8, mem.reshape(-1), Layout.D32, p)
    filt = Tensor.from_array(np.ones((2, 3, 1, 1), np.uint8), DType.QUINT8)
    bias = Tensor.from_array(np.full((1, 1, 1, 1), 128, np.uint8), DType.QUINT8)
    defs = (OutputDef((2, 1, 3, 1), 1), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4))
    ctx = KernelContext(node_id=1, op=OP, padding=Padding.SAME, output_defs=defs,
                        input_refs=tuple((100 + k, 0) for k in range(12)))
    y, _, _ = REGISTRY.get(OP).kernel(ctx, x, filt, _f(0), _f(255), _f(0), _f(255),
                                      Tensor.shape_only((1, 1, 1, 1)), bias, _f(-1), _f(1),
                                      _f(0), _f(255))
    assert np.asarray(y.raw).reshape(2, 9, 8, 32)[0, 4, 4:8, 0].tolist() == [2, 3, 2, 201]


def test_a_depthwise_output_range_without_0_runs_from_the_calloc_d_range():
    """dwise_supernode_check ignores setup_initial_output_range's refusal of [0.5, 1]
    (op_dwise_snode_8bit.c:860): the node runs from [0, 0] with both ends free and no first
    guess. Its gain is then NaN: shamt 129, which the asm's shift takes mod 32 (1), and
    recip 0x7FFFFFFF (about 1), so each code is twice the sum (the first depthwise vector
    doubled; max 208: no retry) and the range stays [0, 0]. Under QEMU the same."""
    assert _run_dwise(2, 4, 2, (4, 4, 4, 4, 0, 31), (0.5, 1.0)) == [
        [8, 12, 12, 208], [4, 6, 6, 104], [0.0, 0.0]]


@pytest.mark.parametrize(("start", "size", "want"), [
    (0, 4, range(0, 4)), (0, 5, range(0, 1)), (0, 7, range(0, 3)), (6, 1, range(6, 7)),
    (5, 4, range(5, 8)), (6, 6, range(6, 8)), (4, 0, range(0)),
])
def test_padzap_part_stays_in_its_first_vector_with_size_mod_4_columns(start, size, want):
    assert zap_span(start, size) == want


@given(st.integers(1, 2), st.integers(1, 4), st.integers(1, 6), st.integers(1, 40),
       st.integers(0, 4), st.integers(0, 7), st.integers(0, 31), st.integers(0, 3))
@settings(max_examples=40, deadline=None)
def test_the_data_area_reads_as_the_tensor_s_values(b, h, w, d, hb, wb, db, seed):
    """read_area over the data rows and columns is the tensor's logical values, whatever
    the padding and the zaps."""
    pad = D32Padding(hb, 4 - hb % 4, wb, (-(wb + w)) % 4, db % 32 if d < 32 else 0,
                     (-(d + (db % 32 if d < 32 else 0))) % 32)
    rng = np.random.default_rng(seed)
    x = Tensor.from_array(rng.integers(0, 256, (b, h, w, d), dtype=np.uint8), DType.QUINT8)
    x32 = x.to_d32(pad, 77)
    got = read_area(x32, Zaps(1, 1, wb, 3), 5, (0, h), (0, w))
    assert np.array_equal(got, x.array)


def test_an_output_of_width_0_asks_no_right_padding_zapped():
    """A 1x3 filter over one column (VALID, right padding 3, filled with 20): nnlib asks no
    padding after for it (required_w_after 0), so nothing on the right is zapped and the
    group's first window reads 1 + 20 + 20; past the row, the next row's zapped left
    padding (row 0) or the unzapped bottom padding (row 1). Under QEMU the same."""
    p = D32Padding(4, 4, 4, 3, 0, 31)
    mem = np.full((1, 10, 1, 8, 32), 20, np.uint8)
    mem[0, 4:6, 0, 4, 0] = 1
    x = Tensor((1, 2, 1, 1), DType.QUINT8, mem.reshape(-1), Layout.D32, p)
    filt = Tensor.from_array(np.ones((1, 3, 1, 1), np.uint8), DType.QUINT8)
    bias = Tensor.from_array(np.full((1, 1, 1, 1), 128, np.uint8), DType.QUINT8)
    defs = (OutputDef((1, 2, 1, 1), 1), OutputDef((1, 1, 1, 1), 4), OutputDef((1, 1, 1, 1), 4))
    ctx = KernelContext(node_id=1, op=OP, padding=Padding.VALID, output_defs=defs,
                        input_refs=tuple((100 + k, 0) for k in range(12)))
    y, _, _ = REGISTRY.get(OP).kernel(ctx, x, filt, _f(0), _f(255), _f(0), _f(255),
                                      Tensor.shape_only((1, 1, 1, 1)), bias, _f(-1), _f(1),
                                      _f(0), _f(255))
    out = np.asarray(y.raw).reshape(10, 4, 32)
    assert out[5:7, :, 0].tolist() == [[41, 60, 40, 20], [41, 60, 60, 60]]
