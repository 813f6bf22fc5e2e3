"""QuantizedMul_8x8to8 (quantized-ops spec §12) and QuantizedAdd_8p8to8 (§15, §13.4-§13.7)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import adjust_with_constraints
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.elementwise.arith import quantized_add_8p8to8, quantized_mul_8x8to8
from hexscope.engine.ops.kernels.addsub_range import OutRange, set_before_run
from hexscope.engine.ops.kernels.d32_engine import (
    Oper,
    addsub_codes,
    addsub_intermediate,
    addsub_scaling,
)
from hexscope.engine.quant import adjust_range_for_zero
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

f32 = np.float32


def _t(codes) -> Tensor:
    a = np.asarray(codes, np.uint8)
    return Tensor.from_array(a if a.ndim == 4 else a.reshape(1, 1, 1, -1))


def _mul(a, b, ar, br, ctx=None):
    ctx = ctx or KernelContext(node_id=0x50, op="QuantizedMul_8x8to8")
    s = Tensor.scalar
    y, lo, hi = quantized_mul_8x8to8(ctx, _t(a), _t(b), s(ar[0]), s(ar[1]), s(br[0]), s(br[1]))
    return np.asarray(y), lo.item(), hi.item()


def _rndi(x: float) -> int:
    s = f32(f32(x) + f32(math.copysign(0.5, float(x))))
    return int(s) if s == s else -1


def _zb(mn: float, mx: float) -> tuple[int, f32]:
    step = f32(f32(f32(mx) - f32(mn)) / f32(255.0))
    return min(255, max(0, _rndi(f32(f32(-f32(mn)) / step)))), step


# --- QuantizedMul_8x8to8 --------------------------------------------------------------------

def test_mul_scalar_shortcut_copies_zeroes_or_inverts() -> None:
    a = [0, 10, 200, 255]
    # §12: b range (0, 2), zb = 0, code 255 -> c = 255, factor 255 * (2/255) = 2: copy, range x2.
    y, lo, hi = _mul(a, [255], (-1.0, 3.0), (0.0, 2.0))
    assert y.ravel().tolist() == a and (lo, hi) == (-2.0, 6.0)
    # c == 0: all zero, range (0, 1).
    y, lo, hi = _mul(a, [0], (-1.0, 3.0), (0.0, 2.0))
    assert y.ravel().tolist() == [0, 0, 0, 0] and (lo, hi) == (0.0, 1.0)
    # b range (-2, 0): zb = 255, code 0 -> factor -2: 255 - a, range swapped.
    y, lo, hi = _mul(a, [0], (-1.0, 3.0), (-2.0, 0.0))
    assert y.ravel().tolist() == [255, 245, 55, 0] and (lo, hi) == (-6.0, 2.0)
    # A scalar (B is not): the same rule from A's side, output shaped like B.
    y, lo, hi = _mul([255], a, (0.0, 2.0), (-1.0, 3.0))
    assert y.ravel().tolist() == a and (lo, hi) == (-2.0, 6.0)


def test_mul_general_case_hand_vector() -> None:
    # §12: steps 1, zeros 0: p = [10, 21]; range [0, 21] (R2: min 0, no change);
    # scaleby = 255/21 = 12.142857, exp 4 -> rsh 10, scale = rndi(12434.29) = 12434, offs 512;
    # y = (p*12434 + 512) >> 10 = [121, 255].
    y, lo, hi = _mul([2, 3], [5, 7], (0.0, 255.0), (0.0, 255.0))
    assert y.ravel().tolist() == [121, 255]
    assert (lo, hi) == (0.0, 21.0)


def test_mul_gain_is_capped_at_16() -> None:
    # §12 step 5: p = [1, 0]; the gain 255 exceeds 16, so scaleby = 16, ols = 1/16, range
    # (0, 255/16); rsh = 9, scale 8192, offs 256: y = [(8192+256) >> 9, 256 >> 9] = [16, 0].
    y, lo, hi = _mul([1, 0], [1, 0], (0.0, 255.0), (0.0, 255.0))
    assert y.ravel().tolist() == [16, 0] and (lo, hi) == (0.0, 15.9375)


def test_mul_all_zero_products_bump_the_max() -> None:
    # §12 step 2: pmin == pmax == 0 -> pmax = 4; then the cap of 16 gives (0, 15.9375).
    y, lo, hi = _mul([0, 0], [9, 200], (0.0, 255.0), (0.0, 255.0))
    assert not y.any() and (lo, hi) == (0.0, 15.9375)


def test_mul_broadcasts_and_rejects_incompatible_shapes() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (1, 2, 1, 3))
    b = rng.integers(0, 256, (1, 1, 4, 3))
    y, lo, hi = _mul(a, b, (-1.0, 2.0), (-3.0, 1.0))
    ref, rlo, rhi = _ref_mul(np.broadcast_to(a, (1, 2, 4, 3)), np.broadcast_to(b, (1, 2, 4, 3)),
                             (-1.0, 2.0), (-3.0, 1.0))
    assert y.shape == (1, 2, 4, 3) and np.array_equal(y, ref) and (lo, hi) == (rlo, rhi)
    with pytest.raises(KernelError, match="incompatible shapes"):
        _mul(np.zeros((1, 1, 2, 3)), np.zeros((1, 1, 3, 3)), (0.0, 1.0), (0.0, 1.0))


def test_mul_reads_an_input_without_elements_as_code_0_and_warns() -> None:
    """§12: a 0 against a 1 is "1 on one side" and the output takes the larger, so B (no
    elements) is read past its end: simulated as code 0, with a warning (it once returned an
    empty tensor, numpy's broadcast, without a word)."""
    a = np.random.default_rng(3).integers(0, 256, (1, 1, 2, 3))
    ctx = KernelContext(node_id=0x52, op="QuantizedMul_8x8to8")
    y, lo, hi = _mul(a, np.zeros((0, 1, 2, 3)), (-1.0, 2.0), (-3.0, 1.0), ctx)
    ref, rlo, rhi = _mul(a, np.zeros((1, 1, 2, 3)), (-1.0, 2.0), (-3.0, 1.0))
    assert y.shape == (1, 1, 2, 3) and np.array_equal(y, ref) and (lo, hi) == (rlo, rhi)
    assert any("has no elements" in w and "reads past the end of b" in w for w in ctx.warnings)


def test_mul_prepare_check_on_the_declared_output_size() -> None:
    # §12: the declared output must hold 1 .. 2^25 elements.
    for sizes in ((1, 1, 1, 2 ** 25 + 1), (1, 0, 4, 4)):
        ctx = KernelContext(node_id=0x51, op="QuantizedMul_8x8to8",
                            output_defs=(OutputDef(sizes), OutputDef(), OutputDef()))
        with pytest.raises(KernelError, match="plausible max output size"):
            _mul([1, 2], [3, 4], (0.0, 1.0), (0.0, 1.0), ctx)
    ok = KernelContext(node_id=0x52, op="QuantizedMul_8x8to8",
                       output_defs=(OutputDef((1, 1, 1, 2 ** 25)), OutputDef(), OutputDef()))
    assert _mul([1, 2], [3, 4], (0.0, 1.0), (0.0, 1.0), ok)[0].shape == (1, 1, 1, 2)


def _ref_mul(a, b, ar, br):
    """§12 general case written out per element with Python integers."""
    za, sa = _zb(*ar)
    zb, sb = _zb(*br)
    sp = f32(sa * sb)
    p = [(int(x) - za) * (int(y) - zb) for x, y in zip(a.ravel(), b.ravel(), strict=True)]
    pmin, pmax = min(0, min(p)), max(0, max(p))
    pmax += 4 if pmin == pmax else 0
    lo, hi = (f32(v) for v in adjust_range_for_zero(f32(f32(pmin) * sp), f32(f32(pmax) * sp)))
    ols = f32(f32(hi - lo) / f32(255.0))
    zo = min(255, max(0, _rndi(f32(f32(-lo) / ols))))
    if f32(sp * f32(0.0625)) < ols:
        k = f32(sp / ols)
    else:
        k, ols = f32(16.0), f32(sp * f32(0.0625))
        lo, hi = f32(f32(-zo) * ols), f32(f32(255 - zo) * ols)
    e = math.frexp(float(k))[1]
    rsh = min(14 - e, 23)
    m = _rndi(f32(k * f32(2.0 ** rsh)))
    out = [min(255, (((q - pmin) * m + ((2 * zo + 1) << (rsh - 1)) + pmin * m) >> rsh) & 0xFFFF)
           for q in p]
    return np.array(out, np.uint8).reshape(a.shape), float(lo), float(hi)


_RNG = st.tuples(st.floats(-8, 0, width=32), st.floats(0.125, 16, width=32)).map(
    lambda r: (r[0], r[0] + r[1]))


@settings(max_examples=40, deadline=None)
@given(ar=_RNG, br=_RNG, n=st.integers(2, 40), seed=st.integers(0, 2 ** 16))
def test_mul_matches_a_loop_reference_and_the_real_product(kernels, ar, br, n, seed) -> None:
    # on the compiled kernels (mul_bounds, mul_codes) and on numpy (the kernels fixture)
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 256, (1, 1, 1, n)), rng.integers(0, 256, (1, 1, 1, n))
    y, lo, hi = _mul(a, b, ar, br)
    ref, rlo, rhi = _ref_mul(a, b, ar, br)
    assert np.array_equal(y, ref) and (lo, hi) == (rlo, rhi)
    za, sa = _zb(*ar)
    zb, sb = _zb(*br)
    real = (a - za) * float(sa) * (b - zb) * float(sb)
    step = (hi - lo) / 255
    zero = round(-lo / step)
    assert np.abs((y.astype(float) - zero) * step - real).max() <= 1.01 * step


# --- R3 and the add's range set-up ---------------------------------------------------------

@pytest.mark.parametrize(("mn", "mx", "c", "expected"), [
    (-1.3, 10.6, 1, (-1.307489, 10.6)),     # the source's own example (§24.1 #4): z -> 28
    (-1.3, 10.6, 0, (-1.307489, 10.6)),     # zi = 27, mnk < mxk: min out to 28
    (-1.3, 10.6, 2, (-1.307489, 10.6)),     # z < 63.75: min out
    (-5.0, 1.0, 1, (-5.0, 1.014151)),       # z = 212.5 >= 192.25: max out to zi = 212
    (-5.0, 5.1, 3, (-4.990588, 5.109412)),  # both ends shift by (z - 126) * 10.1 / 255
    (-1.0, 1.007874, 0, (-1.0, 1.007874)),  # zero code already integral
    (0.0, 3.0, 0, (0.0, 3.0)),              # min 0: no change
])
def test_r3_hand_vectors(mn, mx, c, expected) -> None:
    got = adjust_with_constraints(mn, mx, c)
    assert got == pytest.approx(expected, rel=2e-6)


def test_add_first_range_is_an_eighth_of_the_theoretical_one() -> None:
    # §13.4: ranges (-1, 1) and (-2, 3): T = (-3, 4), 1/8 -> (-0.375, 0.5); R3 c=0:
    # z = 109.29, mnk >= mxk -> max out: -0.375 + 255*0.375/109 = 0.5022936.
    # The flat add runs the §13 engine's range rules (§15), shared with the d32 ops.
    st_ = OutRange(f32(0.0), f32(0.5), precalc=0)
    set_before_run(st_, f32(-3.0), f32(4.0), later_rule=True)
    assert st_.has_run_before
    assert (st_.out_min, st_.out_max) == pytest.approx((-0.375, 0.5022936), rel=1e-6)


def test_add_scaling_hand_vector() -> None:
    # §13.5: steps 1, zeros 0, output (0, 510): osc = 0.5, sv = 1 -> exp 1, rsh 5,
    # A = B = 0.5 * 32 * 256 = 4096, offset 0: y = (((a + b) * 16) + 16) >> 5.
    # The flat add's scaling is the d32 engine's with op = add (§15).
    sc = addsub_scaling(0, f32(1.0), 0, f32(1.0), f32(0.0), f32(510.0), Oper.ADD, False)
    assert (sc.a_scale, sc.b_scale, sc.rsh, sc.offset, sc.underrange) == (4096, 4096, 5, 0, False)
    a, b = np.array([1, 0, 255, 100]), np.array([2, 0, 255, 51])
    y, t = addsub_codes(a, b, sc), addsub_intermediate(a, b, sc)
    assert y.tolist() == [2, 0, 255, 76] and t.tolist() == [48, 0, 8160, 2416]


# --- QuantizedAdd_8p8to8 ---------------------------------------------------------------------

def _add(ctx, a, b, ar, br, fixed=()):
    s = Tensor.scalar
    y, lo, hi = quantized_add_8p8to8(ctx, _t(a), _t(b), s(ar[0]), s(ar[1]), s(br[0]), s(br[1]),
                                     *(s(v) for v in fixed))
    return np.asarray(y.array if isinstance(y, Tensor) else y), f32(lo.item()), f32(hi.item())


class _RefAdd:
    """§15 flat direct path, written out per element (R3 from the hand-tested helper)."""

    def __init__(self, fixed=()):
        lo = f32(fixed[0]) if fixed else f32(-np.inf)
        hi = f32(fixed[1]) if len(fixed) > 1 else f32(np.inf)
        self.minf, self.maxf = lo != -np.inf, hi != np.inf
        self.spec = (lo, hi)
        self.lo = lo if self.minf else f32(0.0)
        self.hi = hi if self.maxf else f32(0.5)
        self.ran = False
        if self.minf and self.maxf:
            self.lo, self.hi = adjust_with_constraints(self.lo, self.hi, 3)
            self.ran = True

    def c(self) -> int:
        return int(self.minf) + 2 * int(self.maxf)

    def scaling(self, za, sa, zb, sb, fixed):
        osc = f32(f32(255.0) / f32(self.hi - self.lo))
        oz = f32(-self.lo * osc)
        af, bf = f32(osc * sa), f32(osc * sb)
        e = math.frexp(float(f32(f32(af + bf) * f32(16384 / 16380))))[1]
        if e > 6 and (not fixed or e > 12):
            raise KernelError("scaling failed")
        rsh = min(6 - e, 7)
        pre = 1 - rsh if fixed and rsh <= 0 else 0
        big_a = _rndi(f32(af * f32(2.0 ** rsh * 256)))
        big_b = _rndi(f32(bf * f32(2.0 ** rsh * 256)))
        iz = (za * big_a + zb * big_b) >> (8 - pre)
        off = _rndi(f32(oz * f32(2.0 if pre else 2.0 ** rsh))) - iz
        off = off if pre else max(-32768, min(32767, off))
        return big_a, big_b, rsh, pre, iz, off, f32(f32(1.0) / f32(osc * f32(2.0 ** rsh)))

    @staticmethod
    def codes(a, b, sc):
        big_a, big_b, rsh, pre, _, off, _ = sc
        ys, ts = [], []
        for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True):
            s = x * big_a + y * big_b
            if pre:
                t = s >> (7 + rsh)
                v = max(-32768, min(32767, t + off))
                ys.append(max(0, min(255, (v + 1) >> 1)))
            else:
                t = s // 256
                v = max(-32768, min(32767, t + off))
                ys.append(max(0, min(255, (v + ((1 << rsh) >> 1)) >> rsh)))
            ts.append(t)
        return ys, ts

    def run(self, a, b, ar, br):
        za, sa = _zb(*ar)
        zb, sb = _zb(*br)
        fixed = self.minf and self.maxf
        if not fixed:
            self._range(f32(f32(ar[0]) + f32(br[0])), f32(f32(ar[1]) + f32(br[1])))
        sc = self.scaling(za, sa, zb, sb, fixed)
        ys, ts = self.codes(a, b, sc)
        if not self.maxf and self._rerun(sc, ts):
            ys, _ = self.codes(a, b, self.scaling(za, sa, zb, sb, False))
        return ys, self.lo, self.hi

    def _range(self, tmin, tmax):
        tmax = max(tmax, f32(tmin + f32(0.001)))
        if not self.ran:
            lo8, hi8 = f32(f32(0.125) * tmin), f32(f32(0.125) * tmax)
            if self.minf:
                self.lo, self.hi = self.spec[0], max(f32(0), f32(self.spec[0] + f32(hi8 - lo8)))
            elif self.maxf:
                self.lo, self.hi = min(f32(0), f32(self.spec[1] - f32(hi8 - lo8))), self.spec[1]
            else:
                self.lo, self.hi = lo8, hi8
            self.lo, self.hi = adjust_with_constraints(self.lo, self.hi, self.c())
            self.ran = True
            return
        span, cur = f32(tmax - tmin), f32(self.hi - self.lo)
        d = f32(span - f32(32 * cur))
        if d > 0:
            r = f32(d / f32(32 * f32(span - cur)))
            lo_adj, hi_adj = f32(f32(tmin - self.lo) * r), f32(f32(tmax - self.hi) * r)
            self.lo = self.spec[0] if self.minf else (
                f32(self.lo + lo_adj) if lo_adj < 0 else self.lo)
            self.hi = self.spec[1] if self.maxf else (
                f32(self.hi + hi_adj) if hi_adj > 0 else self.hi)
            self.lo, self.hi = adjust_with_constraints(self.lo, self.hi, self.c())

    def _rerun(self, sc, ts):
        iz, net = sc[4], sc[6]
        amin = f32(f32(min(ts + [iz]) - iz) * net)
        amax = f32(f32(max(ts + [iz]) - iz) * net)
        span = f32(amax - amin)
        span = f32(span + max(f32(f32(0.15) * span), f32(1e-4)))
        lo, hi, moved = self.lo, self.hi, False
        if not self.minf and amin < lo:
            lo, moved = min(f32(0), f32(amax - span)), True
        if not self.maxf and amax > hi:
            hi, moved = max(f32(0), f32(amin + span)), True
        if not moved:
            return False
        self.lo = self.spec[0] if self.minf else lo
        self.hi = self.spec[1] if self.maxf else hi
        if self.lo < 0:
            self.lo, self.hi = adjust_with_constraints(self.lo, self.hi, self.c())
        return True


_FIXED = st.sampled_from([(), (-np.inf, np.inf), (-2.0,), (-np.inf, 3.0), (-4.0, 6.0),
                          (-0.5, 0.75), (-0.02, 0.03)])


@settings(max_examples=40, deadline=None)
@given(ar=_RNG, br=_RNG, fixed=_FIXED, n=st.integers(1, 300), seed=st.integers(0, 2 ** 16),
       runs=st.integers(1, 3))
def test_add_flat_path_matches_a_loop_reference_over_runs(kernels, ar, br, fixed, n, seed,
                                                          runs) -> None:
    # on the compiled kernel (addsub_normal) and on numpy (the kernels fixture)
    rng = np.random.default_rng(seed)
    ctx = KernelContext(node_id=0x60, op="QuantizedAdd_8p8to8")
    ref = _RefAdd(fixed)
    for _ in range(runs):           # the state carries over between executions (§1.9)
        a, b = rng.integers(0, 256, (1, 1, 1, n)), rng.integers(0, 256, (1, 1, 1, n))
        try:
            want = ref.run(a, b, ar, br)
        except KernelError:
            with pytest.raises(KernelError, match="scaling failed"):
                _add(ctx, a, b, ar, br, fixed)
            return
        y, lo, hi = _add(ctx, a, b, ar, br, fixed)
        assert (y.ravel().tolist(), lo, hi) == (want[0], f32(want[1]), f32(want[2]))


def test_add_result_is_close_to_the_real_sum() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 256, (1, 8, 8, 16)), rng.integers(0, 256, (1, 8, 8, 16))
    ctx = KernelContext(node_id=0x61, op="QuantizedAdd_8p8to8")
    for _ in range(2):
        y, lo, hi = _add(ctx, a, b, (-1.0, 1.0), (-2.0, 3.0))
        za, sa = _zb(-1.0, 1.0)
        zb, sb = _zb(-2.0, 3.0)
        real = (a - za) * float(sa) + (b - zb) * float(sb)
        step = (float(hi) - float(lo)) / 255
        assert np.abs(float(lo) + y * step - real).max() <= 0.75 * step
        assert lo <= real.min() and hi >= real.max()     # the re-run widened the range


def test_add_with_only_max_fixed_never_tracks() -> None:
    # §15 quirk: max fixed -> no tracking and no re-run; overflowing sums saturate, and the
    # range stays the first guess: min = min(0, 1 - (T/8 span)) nudged by R3 (c = 2).
    ctx = KernelContext(node_id=0x62, op="QuantizedAdd_8p8to8")
    a = np.full((1, 1, 1, 4), 255)
    y, lo, hi = _add(ctx, a, a, (-1.0, 1.0), (-1.0, 1.0), (-np.inf, 1.0))
    want_lo, want_hi = adjust_with_constraints(f32(min(0.0, 1.0 - 0.5)), f32(1.0), 2)
    assert (lo, hi) == (want_lo, want_hi) and hi == 1.0
    assert y.ravel().tolist() == [255] * 4      # the real sum 2 is beyond the max: saturated


def test_add_fixed_range_tiny_uses_under_range_mode_then_fails_when_too_tiny() -> None:
    # §13.5 under-range: both ends fixed at (-0.0213, 0.0317) -> R3 c=3 -> (-0.0212, 0.0318);
    # za = 113, zb = 117; the gain exponent is 7 > 6, allowed when fixed: rsh = -1, pre = 2,
    # A = 5364, B = 4801, off = -18043. E.g. a = 115, b = 116: t = (115*5364 + 116*4801)
    # >> 6 = 18340; y = (18340 - 18043 + 1) >> 1 = 149.
    ctx = KernelContext(node_id=0x63, op="QuantizedAdd_8p8to8")
    ar, br, fixed = (-0.987, 1.234), (-0.911, 1.077), (-0.0213, 0.0317)
    y, lo, hi = _add(ctx, [112, 113, 114, 115, 113], [117, 117, 117, 116, 118], ar, br, fixed)
    assert y.ravel().tolist() == [60, 102, 144, 149, 140]
    assert (lo, hi) == (f32(-0.0212), f32(0.0318))
    ctx = KernelContext(node_id=0x64, op="QuantizedAdd_8p8to8")
    a = np.array([[[[127, 128, 129, 130]]]])
    with pytest.raises(KernelError, match="scaling failed"):
        _add(ctx, a, a, (-1.0, 1.0), (-1.0, 1.0), (-1e-5, 1e-5))


def test_add_state_persists_across_executions_and_resets_on_prepare() -> None:
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=2)
    for k, v in enumerate((-1.0, 1.0, -1.0, 1.0)):
        g.append_const_node(0x101 + k, np.array([v], np.float32))
    g.append_node(0x110, "QuantizedAdd_8x8to8",        # the seed spelling resolves (§0)
                  inputs=[(0x100, 0), (0x100, 1), (0x101, 0), (0x102, 0), (0x103, 0),
                          (0x104, 0)], outputs=3)
    g.append_node(0x120, "OUTPUT", inputs=[(0x110, 0), (0x110, 1), (0x110, 2)])
    small = np.array([[[[120, 130, 128, 127]]]], np.uint8)
    big = np.array([[[[0, 255, 255, 0]]]], np.uint8)
    s = Session(g)
    first = [t.array.item() for t in s.execute([small, small])[1:]]
    s.execute([big, big])                       # widens the range (tracking + re-run)
    after = [t.array.item() for t in s.execute([small, small])[1:]]
    assert after[1] - after[0] > first[1] - first[0]
    s.prepare()
    again = [t.array.item() for t in s.execute([small, small])[1:]]
    assert again == first


def test_add_alias_and_arity() -> None:
    spec = REGISTRY.get("QuantizedAdd_8x8to8")
    assert spec.name == "QuantizedAdd_8p8to8"
    assert [spec.inputs.allows(n) for n in (5, 6, 7, 8, 9)] == [False, True, True, True, False]


def _ref_broadcast_once(big, small, brng, srng, gmin, gmax):
    """§15 broadcast kernel for one guess, per element."""
    sbig, ssmall = f32(brng[1] - brng[0]), f32(srng[1] - srng[0])
    alpha = f32(sbig / ssmall)
    ia = int(f32(f32(128) * alpha))
    kappa = f32(f32(f32(128) * alpha) + f32(f32(f32(f32(255) * brng[0])
                                                + f32(f32(255) * srng[0])) / ssmall))
    lmin, lmax = f32(f32(gmin * f32(255)) / ssmall), f32(f32(gmax * f32(255)) / ssmall)
    step = f32(lmax - lmin)
    rc = int(min(f32(f32(255 * 32768) / step), f32(32767)))
    o = int(f32(f32(f32(f32(255) * lmin) / step) - f32(0.5)))
    zs, ys = [], []
    for x, y in zip(big.ravel().tolist(), small.ravel().tolist(), strict=True):
        z = max(-32768, min(32767, ((x - 128) * ia + 64) >> 7)) + y + int(kappa)
        z = (z + 32768) % 65536 - 32768
        v = max(-32768, min(32767, (z * rc + 16384) >> 15)) - o
        ys.append(max(0, min(255, (v + 32768) % 65536 - 32768)))
        zs.append(z)
    return (ys, f32(f32(f32(min(zs)) * ssmall) / f32(255)),
            f32(f32(f32(max(zs)) * ssmall) / f32(255)))


def test_add_depth_broadcast_matches_the_spec_kernel() -> None:
    rng = np.random.default_rng(8)
    a = rng.integers(0, 256, (1, 3, 2, 5))
    b = rng.integers(0, 256, (1, 3, 2, 1))
    ctx = KernelContext(node_id=0x65, op="QuantizedAdd_8p8to8")
    y, lo, hi = _add(ctx, a, b, (-1.0, 3.0), (-0.5, 0.5))
    # a has the larger step: big = a, small = b broadcast along depth. Retry to convergence.
    gmin, gmax = f32(0.0), f32(0.5)
    bb = np.broadcast_to(b, a.shape)
    brng, srng = (f32(-1.0), f32(3.0)), (f32(-0.5), f32(0.5))
    for _ in range(64):
        ys, dmin, dmax = _ref_broadcast_once(a, bb, brng, srng, gmin, gmax)
        if dmax > gmax:
            gmax = f32(dmax * f32(1.2))
        elif dmin < gmin:
            gmin = f32(dmin * f32(1.2))
        elif f32(gmax - gmin) < f32(brng[1] - brng[0]):
            gmax = f32(f32(brng[1] - brng[0]) + gmin)
        else:
            break
    assert y.shape == a.shape and y.ravel().tolist() == ys
    assert (lo, hi) == (gmin, gmax)
    assert ctx.warnings == []


def test_add_height_broadcast_reads_as_the_device_does_and_warns() -> None:
    ctx = KernelContext(node_id=0x66, op="QuantizedAdd_8p8to8")
    a = np.full((1, 4, 1, 2), 128)
    b = np.full((1, 1, 1, 2), 128)
    y, _, _ = _add(ctx, a, b, (-1.0, 1.0), (-1.0, 1.0))
    assert y.shape == (1, 4, 1, 2)
    assert any("reads past the end" in w for w in ctx.warnings)
    with pytest.raises(KernelError, match="incompatible shapes"):
        _add(ctx, np.zeros((1, 1, 2, 3)), np.zeros((1, 1, 3, 3)), (0.0, 1.0), (0.0, 1.0))


@pytest.mark.parametrize(("a_shape", "b_shape", "out"), [
    ((1, 1, 1, 1), (1, 1, 1, 0), (1, 1, 1, 1)), ((1, 1, 1, 1), (0, 2, 3, 4), (1, 2, 3, 4))])
def test_add_broadcast_of_an_input_without_elements_reads_zeros_and_warns(a_shape, b_shape,
                                                                           out) -> None:
    """§15: the output takes the larger dimension, and expand reads an input with no elements
    entirely past its end: simulated as 0 with the warning (it once raised IndexError)."""
    ctx = KernelContext(node_id=0x67, op="QuantizedAdd_8p8to8")
    y, _, _ = _add(ctx, np.full(a_shape, 200), np.zeros(b_shape), (-1.0, 1.0), (-1.0, 1.0))
    assert y.shape == out and y.dtype == np.uint8
    assert any("reads past the end" in w for w in ctx.warnings)


def test_add_broadcast_output_is_tagged_qint8_as_the_device_tags_it() -> None:
    """op_add.c: the broadcast path prepares its output with NN_TYPE_QINT8, the flat path with
    NN_TYPE_QUINT8; the bytes are quint8 codes either way, and the ops after it read them as
    such. Views and reports show the device's tag; arithmetic keeps the codes' type."""
    from hexscope.engine.batch.stats import tensor_stats
    from hexscope.engine.dtypes import DType

    s = Tensor.scalar
    ctx = KernelContext(node_id=0x68, op="QuantizedAdd_8p8to8")
    a, b = _t(np.full((1, 2, 2, 4), 130)), _t(np.full((1, 2, 2, 1), 90))
    y, lo, hi = quantized_add_8p8to8(ctx, a, b, s(-1.0), s(1.0), s(-1.0), s(1.0))
    lo, hi = Tensor.from_array(lo), Tensor.from_array(hi)
    assert y.device_dtype is DType.QINT8 and y.dtype is DType.QUINT8
    assert y.describe().startswith("qint8 (quint8 codes) 1x2x2x4")
    assert y.copy().device_dtype is DType.QINT8
    assert tensor_stats(y, 0, [y, lo, hi])["dtype"] == "qint8"
    flat, _, _ = quantized_add_8p8to8(ctx, a, a, s(-1.0), s(1.0), s(-1.0), s(1.0))
    flat = Tensor.from_array(flat)          # the executor wraps a kernel's array likewise
    assert flat.device_dtype is DType.QUINT8 and flat.describe().startswith("quint8 1x2x2x4")
    # the same codes, read as quint8 by the op after it: the tag changes no arithmetic
    relu = REGISTRY.get("QuantizedRelu_8").kernel
    untagged = Tensor.from_array(np.array(y.array))
    tagged_out = relu(KernelContext(node_id=0x69, op="QuantizedRelu_8"), y, lo, hi)
    plain_out = relu(KernelContext(node_id=0x69, op="QuantizedRelu_8"), untagged, lo, hi)
    assert all(np.array_equal(np.asarray(t), np.asarray(u))
               for t, u in zip(tagged_out, plain_out, strict=True))
