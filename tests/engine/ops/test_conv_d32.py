"""Issue 25's speed (branch sn26): the d32 Supernode's kernel that reads the d32 input where
it lies (``ivnni_d32``, :mod:`conv_d32`, :mod:`supernode_direct`) gives what the separate
steps give, byte for byte: the whole output memory (padding included), the run's range,
every column past the data, the windows that leave it; and the requantization it uses (t
clamped, then byte 4 of a 52-bit product) is the 64-bit one for every t and recip it
serves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.conv import supernode_hvx
from hexscope.engine.ops.conv.conv2d import output_window
from hexscope.engine.ops.conv.d32_input_reads import Zaps
from hexscope.engine.ops.conv.supernode_direct import d32_windows
from hexscope.engine.ops.kernels.conv_d32 import prepared_conv_d32, signed_filter
from hexscope.engine.ops.kernels.gemm import Window
from hexscope.engine.ops.kernels.supernode_requant import requantize_into_d32, scale
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor
from support.d32_tensors import d32_with_random_padding

_I32 = (-(2**31), 2**31 - 1)


def _clamps(r: int) -> tuple[int, int]:
    """The driver's clamp of t for recip ``r`` (conv_d32_defs.channel_terms)."""
    if r == 0:
        return _I32
    return -((1 << 30) // r), min(((1 << 39) - (1 << 30) - 1) // r, _I32[1])


def _code(t: int, r: int) -> int:
    """The 64-bit requantization: clamp((t r + 2**30) >> 31, 0, 255)."""
    return min(max((t * r + (1 << 30)) >> 31, 0), 255)


def _kernel_code(t: int, r: int) -> int:
    """What ivnni_d32 computes: t clamped, sign-extended to 64 bits, its low 52 bits times
    2r kept to 52 bits, plus 2**31, byte 4."""
    lo, hi = _clamps(r)
    tc = min(max(t, lo), hi)
    product = ((tc % (1 << 64)) % (1 << 52)) * (2 * r) % (1 << 52)
    return ((product + (1 << 31)) >> 32) & 0xFF


@settings(max_examples=400, deadline=None)
@given(r=st.one_of(st.integers(0, 2**31 - 1), st.sampled_from([0, 1, 2, 3, 255, 256, 2**30,
                                                                2**31 - 1])),
       t=st.integers(*_I32), near=st.integers(-3, 3), edge=st.sampled_from(["t", "lo", "hi"]))
def test_the_clamped_52_bit_product_gives_the_64_bit_code(r: int, t: int, near: int,
                                                          edge: str) -> None:
    # every recip fill_info_minmax_basics makes (0 .. 0x7FFFFFFF), any t, and the t at and
    # around the clamp's ends, where a rounding off by one would show
    lo, hi = _clamps(r)
    if edge != "t":
        t = min(max((lo if edge == "lo" else hi) + near, _I32[0]), _I32[1])
    assert _kernel_code(t, r) == _code(t, r)


def test_the_clamp_ends_are_codes_0_and_255_and_every_t_between_them_is_exact() -> None:
    # exhaustive over the t of small recips' whole clamped ranges (every code step)
    for r in (1, 2, 3, 5, 77, 1 << 20, 2**31 - 1, 1234567, 2**31 - 2):
        lo, hi = _clamps(r)
        assert _code(lo, r) == 0 and (hi == _I32[1] or _code(hi, r) == 255)
        assert _code(lo - 1, r) == 0 and (hi == _I32[1] or _code(hi + 1, r) == 255)
        ts = np.unique(np.clip(np.concatenate([np.arange(lo - 4, lo + 5000),
                                               np.arange(hi - 5000, hi + 5)]), *_I32))
        for t in ts[::7] if r < 8 else ts:
            assert _kernel_code(int(t), r) == _code(int(t), r), (r, t)


_PADDINGS = st.sampled_from([Padding.SAME, Padding.VALID])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(b=st.integers(1, 2), h=st.integers(1, 7), w=st.integers(1, 9), d=st.integers(1, 70),
       n=st.integers(1, 70), f=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       s=st.tuples(st.integers(1, 3), st.integers(1, 3)), padding=_PADDINGS,
       pads=st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 7),
                      st.integers(0, 1)),
       zf=st.integers(0, 255), zx=st.integers(-40, 300), shift=st.integers(0, 31),
       minmax_all=st.booleans(), fill=st.integers(-1, 255), zx_border=st.booleans(),
       seed=st.integers(0, 999))
def test_the_d32_kernel_equals_the_separate_steps(
        b: int, h: int, w: int, d: int, n: int, f: tuple[int, int], s: tuple[int, int],
        padding: Padding, pads: tuple[int, ...], zf: int, zx: int, shift: int,
        minmax_all: bool, fill: int, zx_border: bool, seed: int) -> None:
    """Every window, 1x1 to 3x3, strides 1-3, SAME and VALID, against the sums of
    supernode_hvx's separate steps (the columns past the data and the windows' padding read
    as the asm reads the memory: random padding bytes, or all zx) then
    requantize_into_d32: the whole output memory, the range in codes."""
    rng = np.random.default_rng(seed)
    hb, ha, wb, more = pads
    pad = D32Padding(hb, ha, wb, ((-(wb + w)) & 3) + 4 * more, 0, (-d) & 31)
    x = d32_with_random_padding(rng, (b, h, w, d), pad)
    if zx_border:
        raw = x.raw.copy()
        raw[x.padding_mask().reshape(-1)] = np.uint8(zx & 0xFF)
        x = Tensor(x.shape, DType.QUINT8, raw, Layout.D32, pad)
    rows = output_window(h, f[0], s[0], padding)
    cols = output_window(w, f[1], s[1], padding)
    assume(rows.out and cols.out)
    try:
        supernode_hvx.check_d32_padding(x, rows, cols)
    except KernelError:
        assume(False)
    channels = (n + 31) & ~31
    codes = np.clip(zf + rng.integers(-128, 128, (f[0], f[1], d, n)), 0, 255).astype(np.uint8)
    filt = Tensor.from_array(codes, DType.QUINT8).readonly()
    zaps, extra = supernode_hvx._zaps(x, rows, cols), supernode_hvx._extra_columns(cols, True)
    wide = Window(cols.n, cols.f, cols.s, cols.out + extra, cols.before)
    windows = d32_windows(x, f[0], f[1], rows, wide, cols.out, zaps, channels)
    mem_shape = (b, rows.out + 8, channels // 32, wide.out + 4, 32)
    run = prepared_conv_d32(codes.reshape(-1, d, n), zf, channels, -(-d // 4), windows,
                            x.raw.size, mem_shape)
    if run is None:
        pytest.skip("the VNNI / IFMA kernel or numba does not run here")
    folded = rng.integers(-2**33, 2**33, channels).astype(np.int64)     # past int32: wraps
    recip = rng.integers(0, 2**31, channels).astype(np.int64)
    recip[:3] = rng.choice([0, 1, 2**31 - 1], 3)
    mem = rng.integers(0, 256, mem_shape, dtype=np.uint8)
    ctx = KernelContext(1, "Supernode_8x8p32to8_d32", padding=padding)
    if not (rows.f == cols.f == rows.s == cols.s == 1 and not cols.before):
        # the separate steps read the windows' padding as zx itself where all of it holds
        # zx's low byte: direct_path serves such a run only for a zx that is a code
        zx = min(max(zx, 0), 254)
    # the buffer of zx and the per-channel terms kept by zx, then zx moved, then the same
    # arrays changed in place (the terms made again)
    for k, zx_run in enumerate((zx, zx, zx + 1, zx + 1, zx + 1)):
        if k == 3:
            folded[-1] += 12345
        if k == 4:
            recip[0] = (recip[0] + 99) % 2**31
        sums = supernode_hvx._all_sums(ctx, x, filt, rows, cols, zx_run, zf)
        want = mem.copy()
        lo, hi = requantize_into_d32(sums, cols.out, folded, recip, shift, minmax_all, True,
                                     want)
        if fill >= 0:
            want[:, :4] = want[:, -4:] = want[:, 4:-4, :, :4] = fill
        got = mem.copy()
        assert run(x.raw, zx_run, folded, recip, shift, minmax_all, got, fill) == (
            int(scale(lo, recip).min()), int(scale(hi, recip).max()))
        assert np.array_equal(got, want)


def test_a_filter_past_a_signed_byte_of_zf_or_a_recip_past_int32_is_not_served() -> None:
    rng = np.random.default_rng(2)
    x = d32_with_random_padding(rng, (1, 2, 4, 8), D32Padding(4, 4, 4, 0, 0, 24))
    rows, cols = output_window(2, 1, 1, Padding.VALID), output_window(4, 1, 1, Padding.VALID)
    windows = d32_windows(x, 1, 1, rows, cols, 4, Zaps(0, 0, 4, 0), 32)
    codes = np.full((1, 8, 3), 100, np.uint8)
    mem_shape = (1, 10, 1, 8, 32)
    assert signed_filter(codes, 228, 32, 8, 2) is not None      # 100 - 228 = -128
    assert prepared_conv_d32(codes, 229, 32, 2, windows, x.raw.size, mem_shape) is None
    codes[0, 0, 0] = 228
    assert prepared_conv_d32(codes, 100, 32, 2, windows, x.raw.size, mem_shape) is None
    run = prepared_conv_d32(codes, 101, 32, 2, windows, x.raw.size, mem_shape)
    if run is None:
        pytest.skip("the VNNI / IFMA kernel or numba does not run here")
    mem = rng.integers(0, 256, mem_shape, dtype=np.uint8)
    before = mem.copy()
    recip = np.ones(32, np.int64)
    recip[5] = 2**31                   # the caller's other pass serves it: nothing written
    assert run(x.raw, 3, np.zeros(32, np.int64), recip, 0, False, mem, 0) is None
    assert np.array_equal(mem, before)
    for bad in (np.zeros((1, 10, 1, 9, 32), np.uint8), np.zeros((1, 9, 1, 8, 32), np.uint8),
                np.zeros((1, 10, 2, 8, 32), np.uint8), np.zeros((1, 10, 1, 8, 32), np.int8)):
        with pytest.raises(ValueError, match="output memory"):
            run(x.raw, 3, np.zeros(32, np.int64), np.ones(32, np.int64), 0, False, bad, 0)
    with pytest.raises(ValueError, match="bytes"):
        run(x.raw[:-1], 3, np.zeros(32, np.int64), np.ones(32, np.int64), 0, False, mem, 0)
    with pytest.raises(ValueError, match="shift"):
        run(x.raw, 3, np.zeros(32, np.int64), np.ones(32, np.int64), 32, False, mem, 0)
    # windows reaching past the input or the output memory are refused at the set-up
    for bad in (windows._replace(inoff=windows.inoff + x.raw.size),
                windows._replace(outoff=windows.outoff + int(np.prod(mem_shape)))):
        with pytest.raises(ValueError, match="reach past"):
            prepared_conv_d32(codes, 101, 32, 2, bad, x.raw.size, mem_shape)


def _inputs(rng: np.random.Generator, x: Tensor, fh: int, fw: int, cout: int,
            out: tuple[float, float]) -> tuple[Tensor, ...]:
    def f(v: float) -> Tensor:
        return Tensor.from_array(np.array([v], np.float32)).readonly()

    # filter range [-1, 1]: zf 127, codes 0..254 (within a signed byte of it, as TFLite's
    # int8 weights are of their zero 128)
    filt = Tensor.from_array(rng.integers(0, 255, (fh, fw, x.shape[3], cout), dtype=np.uint8),
                             DType.QUINT8).readonly()
    bias = Tensor.from_array(rng.integers(-3000, 3000, (1, 1, 1, cout), dtype=np.int32),
                             DType.QINT32).readonly()
    return (filt, f(-1.5), f(2.0), f(-1.0), f(1.0), Tensor.shape_only((1, 1, 1, 1)), bias,
            f(-40.0), f(40.0), f(out[0]), f(out[1]))


@pytest.mark.parametrize("out", [(float("-inf"), float("inf")), (-2.0, 3.0), (0.0, 6.0)])
@pytest.mark.parametrize("filt", [(1, 1, 1), (3, 3, 2)])
def test_a_supernode_on_the_d32_kernel_equals_one_on_the_separate_steps(monkeypatch, out,
                                                                        filt) -> None:
    """Runs of the op (open ranges: the first try, then retries on the separate steps)
    with the kernel against the same runs with the separate steps only: a 1x1 convolution
    and a 3x3 one at stride 2 (SAME: windows over the padding), widths giving 0-3 columns
    past the data, random padding bytes, depth 40 (a partial second slice), the right
    padding that the columns past the data read zapped or not."""
    sn = "Supernode_8x8p32to8_d32"
    kernel = REGISTRY.get(sn).kernel
    rng = np.random.default_rng(7)
    fh, fw, stride = filt
    xs = [d32_with_random_padding(rng, (1, 5, w, 40), D32Padding(4, 4, 4, after, 0, 24))
          for w, after in ((8, 0), (7, 1), (6, 2), (5, 3), (5, 7))]
    rest = list(_inputs(rng, xs[0], fh, fw, 37, out))
    rest[5] = Tensor.shape_only((1, stride, stride, 1))
    calls = []
    real = supernode_hvx.direct_path

    def counted(*args):  # type: ignore[no-untyped-def]
        run = real(*args)
        if run is None:
            return None

        def wrapped(*a):  # type: ignore[no-untyped-def]
            got = run(*a)
            calls.append(got is not None)
            return got
        return wrapped

    def runs() -> list[list[tuple]]:
        ctx = KernelContext(1, sn, padding=Padding.SAME)
        return [[(t.shape, t.padding, t.raw.tobytes()) for t in kernel(ctx, x, *rest)]
                for x in (*xs, *xs)]

    monkeypatch.setattr(supernode_hvx, "direct_path", counted)
    got = runs()
    if not any(calls):
        pytest.skip("the VNNI / IFMA kernel or numba does not run here")
    monkeypatch.setattr(supernode_hvx, "direct_path", lambda *a: None)
    monkeypatch.setattr(supernode_hvx, "prepared_gemm_requant", lambda *a: None)
    monkeypatch.setattr(supernode_hvx, "patch_path", lambda *a: None)
    assert got == runs()


def test_the_d32_kernel_is_built_where_the_processor_has_it() -> None:
    """With AVX-512 VNNI, IFMA and VBMI (and the VNNI kernel on), ``ivnni_d32`` must compile:
    a failure would otherwise leave the slower passes in place and skip the tests above."""
    import llvmlite.binding as llvm

    from hexscope.engine.ops.kernels import igemm

    llvm.initialize_native_target()
    features = llvm.get_host_cpu_features()
    wanted = all(features.get(f) for f in ("avx512vnni", "avx512vl", "avx512ifma",
                                           "avx512vbmi"))
    if not (wanted and igemm.available8()):
        pytest.skip("no AVX-512 VNNI / IFMA / VBMI here, or the VNNI kernel is off")
    assert igemm.kernel_address_d32() != 0
