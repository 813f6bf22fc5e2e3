"""Issue 25's round 5 (branch speed25e): the passes fused into a neighbour's give what the
separate passes they replace give, byte for byte (random padding bytes, odd widths, depths
that are not multiples of 32)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.hexmath import level_size_zero
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv import supernode_hvx
from hexscope.engine.ops.conv.conv2d import output_window
from hexscope.engine.ops.kernels.d32_layout import unpack_d32, unpacker
from hexscope.engine.ops.kernels.gemm import Rhs, Window, prepared_gemm8
from hexscope.engine.ops.kernels.gemm_requant import (
    BLOCK_BYTES,
    d32_windower,
    prepared_gemm_requant,
)
from hexscope.engine.ops.kernels.supernode_requant import requantize_into_d32, scale
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor


def _d32(rng: np.random.Generator, shape: tuple[int, int, int, int], pad: D32Padding
         ) -> Tensor:
    """A d32 tensor whose padding holds random bytes."""
    x = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8), DType.QUINT8).to_d32(pad)
    mem = x.raw.copy()
    mask = x.padding_mask().reshape(-1)
    mem[mask] = rng.integers(0, 256, int(mask.sum()), dtype=np.uint8)
    return Tensor(shape, DType.QUINT8, mem, Layout.D32, pad)


_PADS = st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 7),
                  st.sampled_from([0, 8, 3]))


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 9),
                       st.integers(1, 70)), pads=_PADS, more=st.integers(0, 3),
       centre=st.booleans(), seed=st.integers(0, 999))
def test_a_centring_unpacker_equals_unpack_then_the_top_bit_flipped(
        shape: tuple[int, int, int, int], pads: tuple[int, ...], more: int, centre: bool,
        seed: int) -> None:
    hb, ha, wb, db = pads
    depth = shape[3]
    pad = D32Padding(hb, ha, wb, (-(wb + shape[2])) & 3, db, (-(db + depth)) & 31)
    x = _d32(np.random.default_rng(seed), shape, pad)
    unpack = unpacker(x.geometry.memory_shape, x.shape, x.padding, centre=centre,
                      width=shape[2] + more)
    assert unpack is not None
    want = unpack_d32(x.memory, x.shape, x.padding)
    if centre:
        want = want ^ np.uint8(128)         # the GEMM's centred rows: code - 128 as int8
    got = unpack(x.raw)
    assert got.shape == (*shape[:2], shape[2] + more, depth)
    assert np.array_equal(got[:, :, :shape[2]], want)
    assert np.array_equal(got[:, :, :shape[2]].view(np.int8).astype(np.int16),
                          want.view(np.int8).astype(np.int16))


def test_an_unpacker_narrower_than_the_data_is_refused() -> None:
    x = Tensor.from_array(np.zeros((1, 1, 4, 8), np.uint8), DType.QUINT8).to_d32()
    with pytest.raises(ValueError, match="width 3"):
        unpacker(x.geometry.memory_shape, x.shape, x.padding, width=3)


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 2), oh=st.integers(1, 5), ow=st.integers(1, 9), k=st.integers(1, 70),
       n=st.integers(1, 70), zero=st.integers(0, 255), coef=st.integers(0, 255),
       shift=st.integers(0, 31), fill=st.integers(0, 255), seed=st.integers(0, 999),
       minmax_all=st.booleans(), after=st.booleans())
def test_the_gemm_with_its_requantization_equals_the_gemm_then_requantize_into_d32(
        b: int, oh: int, ow: int, k: int, n: int, zero: int, coef: int, shift: int, fill: int,
        seed: int, minmax_all: bool, after: bool) -> None:
    # the requantization is in the kernel's register tiles (igemm_ir's _requant_tile): every
    # lane against the separate steps, the lanes past n (masked) and past the kernel's last
    # column block (n % 32 in 1..16) included, the extremes of s or t, of the data columns
    # or all of them
    rng = np.random.default_rng(seed)
    width = ow + ((-ow) & 3)            # the columns past the data, up to a multiple of 4
    m, channels = b * oh * width, (n + 31) & ~31
    rhs = Rhs.from_codes(rng.integers(0, 256, (k, n), dtype=np.uint8), zero)
    fused = prepared_gemm_requant(rhs, coef, (b, oh, width), ow, channels)
    gemm = prepared_gemm8(rhs, m, coef)
    if fused is None or gemm is None:
        pytest.skip("the VNNI kernel or numba does not run here")
    lhs = rng.integers(-128, 128, (m, k), dtype=np.int8)
    offsets = rhs.offsets(int(rng.integers(-200, 200)), coef)
    # folded biases past int32 (the kernels wrap them once), any recip
    folded = rng.integers(-2**33, 2**33, channels).astype(np.int64)
    # any recip up to 2**32 (the kernel multiplies in int64 lanes, as requantize_into_d32)
    recip = rng.integers(0, 2**32, channels).astype(np.int64)
    mem = rng.integers(0, 256, (b, oh + 8, channels // 32, width + 4, 32), dtype=np.uint8)
    want_mem = mem.copy()
    lo, hi = requantize_into_d32(gemm(lhs, offsets).reshape(b, oh, width, n), ow, folded,
                                 recip, shift, minmax_all, after, want_mem)
    got_lo, got_hi, low, high = fused(lhs, offsets, folded, recip, shift, minmax_all, after,
                                      mem)
    assert np.array_equal(mem, want_mem)            # the padding left as it was, too
    assert np.array_equal(got_lo, lo) and np.array_equal(got_hi, hi)
    # the range in codes, as supernode_hvx's _extremes reduces the lanes
    assert (low, high) == (int(scale(lo, recip).min()), int(scale(hi, recip).max()))
    # and with the fill of the padding the requantization does not write
    want_mem[:, :4] = want_mem[:, -4:] = want_mem[:, 4:-4, :, :4] = fill
    fused(lhs, offsets, folded, recip, shift, minmax_all, after, mem, fill)
    assert np.array_equal(mem, want_mem)


def test_the_fused_blocks_cover_a_layer_larger_than_one_block() -> None:
    rng = np.random.default_rng(3)
    b, oh, width, k, n = 1, 40, 36, 24, 40     # 40 x 36 x (24 + 64) bytes: over BLOCK_BYTES
    assert oh * width * (k + 64) > BLOCK_BYTES
    rhs = Rhs.from_codes(rng.integers(0, 256, (k, n), dtype=np.uint8), 7)
    fused = prepared_gemm_requant(rhs, 9, (b, oh, width), 35, 64)
    gemm = prepared_gemm8(rhs, b * oh * width, 9)
    if fused is None or gemm is None:
        pytest.skip("the VNNI kernel or numba does not run here")
    lhs = rng.integers(-128, 128, (b * oh * width, k), dtype=np.int8)
    offsets = rhs.offsets(5, 9)
    folded = rng.integers(-2**20, 2**20, 64).astype(np.int64)
    recip = rng.integers(1, 2**31 - 1, 64).astype(np.int64)
    mem = np.zeros((b, oh + 8, 2, width + 4, 32), np.uint8)
    want = mem.copy()
    ext = requantize_into_d32(gemm(lhs, offsets).reshape(b, oh, width, n), 35, folded, recip,
                              4, False, True, want)
    got = fused(lhs, offsets, folded, recip, 4, False, True, mem)
    assert np.array_equal(mem, want)
    assert all(np.array_equal(g, w) for g, w in zip(got[:2], ext, strict=True))


def test_an_output_memory_the_kernel_would_overrun_is_refused() -> None:
    # the kernel writes the codes by address: a memory of the wrong geometry never reaches it
    rng = np.random.default_rng(5)
    rhs = Rhs.from_codes(rng.integers(0, 256, (8, 40), dtype=np.uint8), 7)
    fused = prepared_gemm_requant(rhs, 9, (1, 3, 4), 4, 64)
    if fused is None:
        pytest.skip("the VNNI kernel or numba does not run here")
    lhs = rng.integers(-128, 128, (12, 8), dtype=np.int8)
    args = (lhs, rhs.offsets(5, 9), np.zeros(64, np.int64), np.ones(64, np.int64), 0, False,
            True)
    for bad in (np.zeros((1, 11, 2, 7, 32), np.uint8), np.zeros((1, 10, 2, 8, 32), np.uint8),
                np.zeros((1, 11, 1, 8, 32), np.uint8), np.zeros((1, 11, 2, 8, 32), np.int8),
                np.zeros((1, 11, 2, 16, 32), np.uint8)[:, :, :, ::2]):
        with pytest.raises(ValueError, match="output memory"):
            fused(*args, bad)
    fused(*args, np.zeros((1, 11, 2, 8, 32), np.uint8))
    # its tiles take 32 channels at a time: a depth that is not a d32 slice's multiple, or
    # below the filter's, is not served (the caller keeps the separate steps)
    assert prepared_gemm_requant(rhs, 9, (1, 3, 4), 4, 48) is None
    assert prepared_gemm_requant(rhs, 9, (1, 3, 4), 4, 32) is None


def _supernode_inputs(rng: np.random.Generator, x: Tensor, cout: int, out: tuple[float, float]
                      ) -> tuple[Tensor, ...]:
    def f(v: float) -> Tensor:
        return Tensor.from_array(np.array([v], np.float32)).readonly()

    filt = Tensor.from_array(rng.integers(0, 256, (1, 1, x.shape[3], cout), dtype=np.uint8),
                             DType.QUINT8).readonly()
    bias = Tensor.from_array(rng.integers(-3000, 3000, (1, 1, 1, cout), dtype=np.int32),
                             DType.QINT32).readonly()
    return (x, filt, f(-1.5), f(2.0), f(-0.8), f(0.7), Tensor.shape_only((1, 1, 1, 1)), bias,
            f(-40.0), f(40.0), f(out[0]), f(out[1]))


@pytest.mark.parametrize("out", [(float("-inf"), float("inf")), (-2.0, 3.0), (-0.01, 0.01),
                                 (0.0, float("inf"))])
def test_a_1x1_supernode_with_the_fused_pass_equals_one_without(monkeypatch, out) -> None:
    """Runs of the op (open ranges: the first try then retries on the separate steps) with
    the fused GEMM and requantization against the same runs with the separate steps only,
    widths giving 0-3 padding columns, random padding bytes, depth 40."""
    sn = "Supernode_8x8p32to8_d32"
    kernel = REGISTRY.get(sn).kernel
    rng = np.random.default_rng(5)
    xs = [_d32(rng, (1, 3, w, 40), D32Padding(4, 4, 4, (-(4 + w)) & 3, 0, 24))
          for w in (8, 7, 6, 5)]
    rest = _supernode_inputs(rng, xs[0], 37, out)[1:]

    def runs() -> list[tuple]:
        ctx = KernelContext(1, sn, padding=Padding.SAME)
        got = []
        for x in (*xs, *xs):
            outs = kernel(ctx, x, *rest)
            got.append([(t.shape, t.padding, t.raw.tobytes()) for t in outs])
        return got, ctx

    monkeypatch.setattr(supernode_hvx, "direct_path", lambda *a: None)   # test_conv_d32's
    got, ctx = runs()
    assert ctx.state["hvx_steady"].value.fused or \
        prepared_gemm_requant(Rhs.from_codes(np.zeros((4, 2), np.uint8)), 0, (1, 1, 4), 4,
                              32) is None
    monkeypatch.setattr(supernode_hvx, "prepared_gemm_requant", lambda *a: None)
    monkeypatch.setattr(supernode_hvx, "patch_path", lambda *a: None)
    want, ctx = runs()
    assert not ctx.state["hvx_steady"].value.fused
    assert got == want


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 2), h=st.integers(1, 5), w=st.integers(1, 9),
       d=st.sampled_from([3, 8, 13, 32, 40, 64]), more=st.integers(0, 3), n=st.integers(1, 40),
       pads=st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 7)),
       coef=st.integers(0, 255), fill=st.integers(-1, 255), seed=st.integers(0, 999))
def test_the_fused_pass_reading_a_d32_input_equals_it_on_the_unpacked_rows(
        b: int, h: int, w: int, d: int, more: int, n: int, pads: tuple[int, int, int],
        coef: int, fill: int, seed: int) -> None:
    """The rows unpacked and centred block by block from the d32 memory (random padding
    bytes), the columns past the data (read at given offsets, or zx) after them, against
    the whole-layer unpacker and the codes read in numpy."""
    rng = np.random.default_rng(seed)
    hb, ha, wb = pads
    x = _d32(rng, (b, h, w, d), D32Padding(hb, ha, wb, (-(wb + w)) & 3, 0, (-d) & 31))
    width, channels = w + more, (n + 31) & ~31
    # the columns past the data: codes read at any offsets of the input's bytes, or zx
    offsets = rng.integers(0, x.raw.size, (b, h, more, d)).astype(np.int64)
    zero = rng.random((b, h, more, d)) < 0.3
    zx = int(rng.integers(-300, 300))
    past = np.where(zero, np.uint8(zx & 0xFF), x.raw[offsets]).astype(np.uint8)
    rows = unpacker(x.geometry.memory_shape, x.shape, x.padding, centre=True, width=width)
    rhs = Rhs.from_codes(rng.integers(0, 256, (d, n), dtype=np.uint8), 77)
    flat = prepared_gemm_requant(rhs, coef, (b, h, width), w, channels)
    direct = prepared_gemm_requant(rhs, coef, (b, h, width), w, channels,
                                   (x.geometry.memory_shape, x.shape, x.padding))
    if flat is None or direct is None or rows is None:
        pytest.skip("the VNNI kernel or numba does not run here")
    lhs = rows(x.raw)
    lhs[:, :, w:] = past ^ np.uint8(128)
    column_offsets = rhs.offsets(int(rng.integers(-200, 200)), coef)
    folded = rng.integers(-2**33, 2**33, channels).astype(np.int64)
    recip = rng.integers(1, 2**31 - 1, channels).astype(np.int64)
    want = rng.integers(0, 256, (b, h + 8, channels // 32, width + 4, 32), dtype=np.uint8)
    got = want.copy()
    w_lo, w_hi, w_low, w_high = (np.copy(v) for v in flat(
        lhs.view(np.int8).reshape(-1, d), column_offsets, folded, recip, 5, False, True, want,
        fill))
    g_lo, g_hi, g_low, g_high = direct(x.raw, column_offsets, folded, recip, 5, False, True,
                                       got, fill, (offsets, zero) if more else None, zx)
    assert np.array_equal(got, want)
    assert np.array_equal(g_lo, w_lo) and np.array_equal(g_hi, w_hi)
    assert (g_low, g_high) == (w_low, w_high)


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 2), h=st.integers(1, 9), w=st.integers(1, 9),
       d=st.sampled_from([1, 3, 5, 32, 40]), f=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       same=st.booleans(), fill=st.integers(0, 255), seed=st.integers(0, 999))
def test_the_windows_gathered_from_a_d32_memory_equal_those_over_its_data(
        b: int, h: int, w: int, d: int, f: tuple[int, int], s: tuple[int, int], same: bool,
        fill: int, seed: int) -> None:
    """The strided Supernode's windows (gemm_requant.d32_windower: rows of overlapping
    windows, fx, fy, c order) against the windows over the unpacked data with the fill
    around it: random padding bytes (never read: taps outside the data read the fill),
    windows past the data, strides 1-3, depths that are not multiples of 32; and the
    GEMM requantizing them, read lda apart, against the same on each window's copy."""
    rng = np.random.default_rng(seed)
    x = _d32(rng, (b, h, w, d), D32Padding(4, 4, 4, (-(4 + w)) & 3, 0, (-d) & 31))
    pad = Padding.SAME if same else Padding.VALID
    rows, cols = output_window(h, f[0], s[0], pad), output_window(w, f[1], s[1], pad)
    assume(rows.out and cols.out)           # the pass serves outputs that are not empty
    # as the Supernode asks: the columns past the data up to a multiple of 4
    cols = Window(cols.n, cols.f, cols.s, cols.out + ((-cols.out) & 3), cols.before)
    made = d32_windower(x.geometry.memory_shape, x.shape, x.padding,
                        (rows.s, rows.before, rows.out, rows.f),
                        (cols.s, cols.before, cols.out, cols.f))
    if made is None:
        pytest.skip("numba does not run here")
    windower, lda = made
    # the windows over the data with the fill around it, (fx, fy, c) order
    hp = max(rows.before + h, (rows.out - 1) * rows.s + rows.f)
    wp = max(cols.before + w, (cols.out - 1) * cols.s + cols.f)
    image = np.full((b, hp, wp, d), fill, np.int16)
    image[:, rows.before:rows.before + h, cols.before:cols.before + w] = x.array
    want = np.stack([np.stack([image[:, fy:fy + (rows.out - 1) * rows.s + 1:rows.s,
                                     fx:fx + (cols.out - 1) * cols.s + 1:cols.s]
                               for fy in range(rows.f)], axis=3) for fx in range(cols.f)],
                    axis=3)
    k = rows.f * cols.f * d
    want = (want - 128).astype(np.int8).reshape(b * rows.out, cols.out, k)
    got = windower(x.raw, fill)
    assert np.array_equal(np.stack([got[:, ox * lda:ox * lda + k] for ox in range(cols.out)],
                                   axis=1), want)
    with pytest.raises(ValueError, match="fill"):
        windower(x.raw, 256)
    # the GEMM reading the windows where they lie, against it on their copies
    n = int(rng.integers(1, 40))
    channels = (n + 31) & ~31
    rhs = Rhs.from_codes(rng.integers(0, 256, (k, n), dtype=np.uint8), 77)
    shape = (b, rows.out, cols.out)
    ow = max(1, cols.out - int(rng.integers(0, 4)))
    strided = prepared_gemm_requant(rhs, 9, shape, ow, channels, lda=lda)
    flat = prepared_gemm_requant(rhs, 9, shape, ow, channels)
    if strided is None or flat is None:
        pytest.skip("the VNNI kernel or numba does not run here")
    args = (rhs.offsets(int(rng.integers(-200, 200)), 9),
            rng.integers(-2**33, 2**33, channels).astype(np.int64),
            rng.integers(1, 2**31 - 1, channels).astype(np.int64), 5, False, True)
    mem = rng.integers(0, 256, (b, rows.out + 8, channels // 32, cols.out + 4, 32),
                       dtype=np.uint8)
    mem_want = mem.copy()
    got_ext = strided(got, *args, mem, fill)
    want_ext = flat(np.ascontiguousarray(want.reshape(-1, k)), *args, mem_want, fill)
    assert np.array_equal(mem, mem_want)
    assert all(np.array_equal(g, v) for g, v in zip(got_ext, want_ext, strict=True))


@pytest.mark.parametrize("zx_padding", [True, False])
@pytest.mark.parametrize("geometry", [((3, 3), (2, 2), Padding.SAME), ((3, 3), (1, 1),
                                      Padding.SAME), ((3, 2), (2, 1), Padding.VALID)])
def test_a_strided_supernode_with_the_patch_pass_equals_one_without(
        monkeypatch, zx_padding: bool, geometry: tuple) -> None:
    """The op with the patches gathered and the GEMM requantizing (supernode_patches) against
    the separate steps: padding bytes that hold the input's zero code (the pass runs) or
    random ones (windows that read them: the pass hands over), open and fixed ranges (the
    retries take the separate steps)."""
    (fh, fw), (sh, sw), pad = geometry
    sn = "Supernode_8x8p32to8_d32"
    kernel = REGISTRY.get(sn).kernel
    rng = np.random.default_rng(11)
    zx = level_size_zero(-1.5, 2.0)[0]           # _supernode_inputs' input range
    xs = []
    for w in (9, 7, 6):
        x = _d32(rng, (1, 7, w, 3), D32Padding(4, 4, 4, (-(4 + w)) & 3, 0, 29))
        if zx_padding:
            x.raw[x.padding_mask().reshape(-1)] = zx
        xs.append(x)
    ran = []

    def runs(out: tuple[float, float]) -> list[tuple]:
        rest = list(_supernode_inputs(np.random.default_rng(3), xs[0], 37, out)[1:])
        rest[0] = Tensor.from_array(np.random.default_rng(4).integers(
            0, 256, (fh, fw, 3, 37), dtype=np.uint8), DType.QUINT8).readonly()
        rest[5] = Tensor.shape_only((1, sh, sw, 1))
        ctx = KernelContext(1, sn, padding=pad)
        return [[(t.shape, t.padding, t.raw.tobytes()) for t in kernel(ctx, x, *rest)]
                for x in (*xs, *xs)]

    real = supernode_hvx.patch_path

    def spy(*args):  # type: ignore[no-untyped-def]
        fused = real(*args)
        if fused is None:
            return None

        def call(*a):  # type: ignore[no-untyped-def]
            got = fused(*a)
            ran.append(got is not None)
            return got
        return call

    monkeypatch.setattr(supernode_hvx, "patch_path", spy)
    monkeypatch.setattr(supernode_hvx, "direct_path", lambda *a: None)   # test_conv_d32's
    outs = [(float("-inf"), float("inf")), (-2.0, 3.0)]
    got = [runs(out) for out in outs]
    if d32_windower((1, 9, 1, 16, 32), (1, 1, 8, 3), (4, 4, 4, 4, 0, 29), (1, 0, 1, 1),
                    (1, 0, 8, 1)) is not None and prepared_gemm_requant(
            Rhs.from_codes(np.zeros((4, 2), np.uint8)), 0, (1, 1, 4), 4, 32) is not None:
        # padding bytes of zx: the pass serves; random ones: where the windows read bytes
        # nnlib does not zap it hands over (both may happen across these widths)
        assert all(ran) if zx_padding else len(ran) > 0
    monkeypatch.setattr(supernode_hvx, "patch_path", lambda *a: None)
    assert got == [runs(out) for out in outs]
