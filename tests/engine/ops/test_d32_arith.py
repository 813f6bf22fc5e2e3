"""d32 add / sub / mul (quantized-ops spec §13-§16) on inputs whose padding holds garbage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine import Graph
from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import GraphError, NodeError
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

f32 = np.float32
NODE = 0x300
OPS = {"add": "QuantizedAdd_8p8to8_d32", "sub": "QuantizedSub_8p8to8_d32",
       "mul": "QuantizedMul_8x8to8_d32"}


def d32(codes, padding=None, fill=0xEE) -> Tensor:
    return Tensor.from_array(np.asarray(codes, np.uint8), DType.QUINT8).to_d32(padding, fill=fill)


def session(op: str, ranges, fixed=(), padding_fill=0xA5) -> Session:
    """INPUT(x, y) -> op(x, y, ranges..., fixed...) -> OUTPUT."""
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=2)
    for i, v in enumerate(list(ranges) + list(fixed)):
        g.append_const_node(0x200 + i, np.array([v], np.float32))
    n = len(ranges) + len(fixed)
    g.append_node(NODE, OPS.get(op, op), outputs=3,
                  inputs=[(0x100, 0), (0x100, 1)] + [(0x200 + i, 0) for i in range(n)])
    g.append_node(0x400, "OUTPUT", inputs=[(NODE, 0), (NODE, 1), (NODE, 2)])
    return Session(g, padding_fill=padding_fill)


def execute(s: Session, x, y):
    out = s.execute([x, y])
    return out[0], f32(out[1].scalar_value()), f32(out[2].scalar_value())


# --- an independent reference, written from the spec text, one element at a time --------------
def rndi(x) -> int:
    x = f32(x)
    return int(math.trunc(float(f32(x + f32(math.copysign(0.5, x))))))


def exp2(x) -> int:
    return int(np.frexp(f32(x))[1])


def zb(mn, mx):
    step = f32(f32(f32(mx) - f32(mn)) / f32(255))
    return min(255, max(0, rndi(f32(-f32(mn)) / step))), step


def r3(mn, mx, c):
    """§1.5 R3 table."""
    mn, mx = f32(mn), f32(mx)
    dif = f32(mx - mn)
    if not dif > 0 or mn == 0:
        return mn, mx
    z = f32(f32(f32(-255) * mn) / dif)
    zi = f32(math.floor(z))
    zf = f32(z - zi)
    if zf <= f32(6.1035156e-05) or zf >= f32(0.999938965):
        return mn, mx
    mnk, mxk = f32((zf - f32(1)) * mn), f32(zf * mx)
    zr = f32(zi + 1) if zf >= 0.5 else zi

    def new_max(k):
        return mn, f32(mn - f32(f32(f32(255) * mn) / f32(k)))

    def new_min(k):
        return f32(f32(mx * f32(k)) / f32(f32(k) - f32(255))), mx

    if c == 0:
        return new_max(zi) if zi >= 1 and (zi >= 254 or mnk >= mxk) else new_min(zi + 1)
    if c == 1:
        return new_max(zi) if zi >= 1 and (z >= 192.25 or f32(8 * mnk) > mxk) else new_min(zr)
    if c == 2:
        return new_max(zr) if z >= 63.75 and (zi >= 254 or mnk > f32(8 * mxk)) else \
            new_min(zi + 1)
    if z <= 63.75:
        return new_min(zr)
    if z >= 192.25:
        return new_max(zr)
    adj = f32(f32(f32(z - zr) * dif) * f32(1 / 255))
    return f32(mn + adj), f32(mx + adj)


class ScalingFailed(Exception):
    pass


class RefNode:
    """§13 for one node: prepare state, scalings, passes, tracking and the single re-run."""

    def __init__(self, op, fixed=()):
        self.op = op
        self.lo, self.hi, self.pc = f32(0), f32(0.5), 0
        if len(fixed) > 1 and f32(fixed[1]) < np.inf:
            self.pc |= 2
            self.hi = self.hi_spec = max(f32(0), f32(fixed[1]))
        if len(fixed) > 0 and f32(fixed[0]) > -np.inf:
            self.pc |= 1
            self.lo = self.lo_spec = min(f32(0), f32(fixed[0]))
            if self.pc == 3:
                self.hi = max(f32(self.lo + f32(1e-6)), self.hi)
                self.lo, self.hi = r3(self.lo, self.hi, 3)
        self.has_run = False
        self.last_ranges = None

    def run(self, x, y, ranges):
        ranges = [f32(r) for r in ranges]
        swap = any(dx == 1 and dy != 1 for dx, dy in zip(x.shape, y.shape, strict=True))
        a, b = (y, x) if swap else (x, y)
        rg = ranges[2:] + ranges[:2] if swap else ranges
        oper = "rsub" if swap and self.op == "sub" else self.op
        if b.size == 1 and self.pc == 0:
            return self._scalar(a, int(b.reshape(-1)[0]), rg, oper)
        if ranges != self.last_ranges:
            self._scaling(rg, oper)
            self.last_ranges = ranges
        b = np.broadcast_to(b, a.shape)
        codes, lo, hi = self._pass(a, b, oper)
        if self.pc != 3 and self._rerun(lo, hi, oper):
            codes, _, _ = self._pass(a, b, oper)
        return codes, self.lo, self.hi

    def _scaling(self, rg, oper):
        amin, amax, bmin, bmax = rg
        self.za, self.sa = zb(amin, amax)
        self.zb, self.sb = zb(bmin, bmax)
        if self.pc < 3:
            if oper == "mul":
                tmax = max(f32(amax * bmax), f32(amin * bmin))
                tmin = min(f32(amax * bmin), f32(amin * bmax))
            else:
                tmax, tmin = {"add": (amax + bmax, amin + bmin), "sub": (amax - bmin, amin - bmax),
                              "rsub": (bmax - amin, bmin - amax)}[oper]
            tmax = max(f32(tmax), f32(f32(tmin) + f32(0.001)))
            tmin = f32(tmin)
            if not self.has_run:
                lo, hi = f32(tmin / 8), f32(tmax / 8)
                if self.pc == 1:
                    lo, hi = self.lo_spec, max(f32(0), f32(self.lo_spec + f32(hi - lo)))
                elif self.pc == 2:
                    lo, hi = min(f32(0), f32(self.hi_spec - f32(hi - lo))), self.hi_spec
                self.lo, self.hi = r3(lo, hi, self.pc)
                self.has_run = True
            elif oper != "mul":
                self._one_32nd(tmin, tmax)
        self._derive(oper, self.pc == 3)

    def _one_32nd(self, tmin, tmax):
        cur = f32(self.hi - self.lo)
        d = f32(f32(tmax - tmin) - f32(32 * cur))
        if d > 0:
            r = f32(d / f32(32 * f32(f32(tmax - tmin) - cur)))
            if self.pc & 1:
                self.lo = self.lo_spec
            elif f32(f32(tmin - self.lo) * r) < 0:
                self.lo = f32(self.lo + f32(f32(tmin - self.lo) * r))
            if self.pc & 2:
                self.hi = self.hi_spec
            elif f32(f32(tmax - self.hi) * r) > 0:
                self.hi = f32(self.hi + f32(f32(tmax - self.hi) * r))
            self.lo, self.hi = r3(self.lo, self.hi, self.pc)

    def _derive(self, oper, fixed):
        osc = f32(f32(255) / f32(self.hi - self.lo))
        oz = f32(-self.lo * osc)
        if oper == "mul":   # §13.6
            self.rb = (((2 * self.za - 255) * (2 * self.zb - 255) + 256) >> 9) * 256
            self.rcp = f32(self.sa * self.sb)
            psf = f32(osc * self.rcp)
            self.rsh = min(-exp2(psf), 7)
            self.ps = max(-32768, min(32767, rndi(f32(f32(psf * f32(2.0 ** self.rsh)) * 32768))))
            adj = ((self.rb * self.ps + 16384) >> 15) + rndi(f32(oz * f32(2.0 ** self.rsh)))
            self.adj = (adj + 32768) % 65536 - 32768
            return
        asc, bsc = f32(osc * self.sa), f32(osc * self.sb)   # §13.5
        sv = f32(asc + bsc) if oper == "add" else max(asc, bsc)
        if oper == "sub":
            bsc = -bsc
        elif oper == "rsub":
            asc = -asc
        e = exp2(f32(sv * f32(16384 / 16380)))
        if e > 6 and (not fixed or e > 12):
            raise ScalingFailed
        self.rsh = min(6 - e, 7)
        self.under = fixed and self.rsh <= 0
        pre = 1 - self.rsh if self.under else 0
        self.A = rndi(f32(asc * f32(2.0 ** self.rsh * 256)))
        self.B = rndi(f32(bsc * f32(2.0 ** self.rsh * 256)))
        self.iz = (self.za * self.A + self.zb * self.B) >> (8 - pre)
        off = rndi(f32(oz * (2 if self.under else f32(2.0 ** self.rsh)))) - self.iz
        self.off = off if self.under else max(-32768, min(32767, off))
        self.netscale = f32(1 / f32(osc * f32(2.0 ** self.rsh)))

    def _pass(self, a, b, oper):
        out = np.empty(a.shape, np.uint8)
        track = []
        for idx in np.ndindex(a.shape):
            av, bv = int(a[idx]), int(b[idx])
            if oper == "mul":
                p = ((av - self.za) * (bv - self.zb) - self.rb + 32768) % 65536 - 32768
                q = max(-32768, min(32767, (p * self.ps + 16384) >> 15))
                v = max(-32768, min(32767, q + self.adj))
                y = (v + (1 << (self.rsh - 1))) >> self.rsh if self.rsh > 0 else v
                track.append(p)
            elif self.under:
                t = max(-2**31, min(2**31 - 1, av * self.A + bv * self.B)) >> (7 + self.rsh)
                y = (max(-32768, min(32767, t + self.off)) + 1) >> 1
            else:
                t = (av * self.A + bv * self.B) // 256
                v = max(-32768, min(32767, t + self.off))
                y = (v + ((1 << self.rsh) >> 1)) >> self.rsh
                track.append(t)
            out[idx] = max(0, min(255, y))
        zero = -self.rb if oper == "mul" else getattr(self, "iz", 0)
        return out, min(track + [zero]), max(track + [zero])

    def _rerun(self, lo, hi, oper):
        if oper == "mul":
            amin, amax = f32(f32(lo + self.rb) * self.rcp), f32(f32(hi + self.rb) * self.rcp)

            def code(p):
                q = ((p * self.ps + 16384) >> 15) + self.adj
                return (q + (1 << (self.rsh - 1))) >> self.rsh if self.rsh > 0 else q
            low, high = code(lo) < 0, code(hi) > 255
        else:
            amin = f32(f32(lo - self.iz) * self.netscale)
            amax = f32(f32(hi - self.iz) * self.netscale)
            low, high = amin < self.lo, amax > self.hi
        r = f32(amax - amin)
        r = f32(r + max(f32(f32(0.15) * r), f32(1e-4)))
        low, high = low and not self.pc & 1, high and not self.pc & 2
        if not (low or high):
            return False
        lo_new = min(f32(0), f32(amax - r)) if low else self.lo
        hi_new = max(f32(0), f32(amin + r)) if high else self.hi
        lo_new = self.lo_spec if self.pc & 1 else lo_new
        hi_new = self.hi_spec if self.pc & 2 else hi_new
        self.lo, self.hi = r3(lo_new, hi_new, self.pc) if lo_new < 0 else (lo_new, hi_new)
        self._derive(oper, False)
        return True

    def _scalar(self, a, code, rg, oper):
        """§13.3 with its special cases listed one by one."""
        amin, amax = rg[0], rg[1]
        za, sa = zb(amin, amax)
        zbb, sb = zb(rg[2], rg[3])
        bv = f32(f32(code - zbb) * sb)
        if oper == "mul":
            if bv > 0:
                return a.copy(), f32(amin * bv), f32(amax * bv)
            if bv == 0:
                return np.zeros_like(a), f32(amin * bv), f32(0.5)
            return 255 - a, f32(amax * bv), f32(amin * bv)
        bv = bv if oper == "add" else -bv
        nz = f32(za - f32(bv / sa))
        s, o = 32768, 0
        if -0.25 <= nz <= 255.25:
            lo = f32(f32(-rndi(nz)) * sa)
            hi = f32(lo + f32(amax - amin))
        else:
            lo, hi = (f32(0), f32(amax + bv)) if bv > 0 else (f32(amin + bv), f32(0))
            s = rndi(f32(f32(32768 * f32(amax - amin)) / f32(hi - lo)))
            if bv > 0:
                s = max(-32768, min(32767, s))
                o = 128 * 255 - ((255 * s) >> 8)
        if oper == "rsub":
            s, o, lo, hi = -s, 255 * 128 - o, -hi, -lo
        if abs(s) <= 128 and (o + 64) >> 7 == (255 * s + 256 * o + 16384) >> 15:
            s = 0
        s = max(-32768, min(32767, s))
        self.lo, self.hi = lo, hi
        if s == 0:
            return np.full_like(a, max(0, min(255, (o + 64) >> 7))), lo, hi
        if o == 0 and s >= 32704:
            return a.copy(), lo, hi
        if s == -32768 and o == 32640:
            return 255 - a, lo, hi
        y = (a.astype(np.int64) * s + o * 256 + 16384) >> 15
        return np.clip(y, 0, 255).astype(np.uint8), lo, hi


# --- hand-computed vectors --------------------------------------------------------------------
R_A = (-1.0, 0.9921875)        # step 1/128 exactly, zero code 128
R_B = (0.0, 2.55)              # code 50 stands for 0.5


def test_add_scalar_keeps_the_codes_and_shifts_the_range():
    # §13.3 Add: bv = 0.5, nz = 128 - 0.5 * 128 = 64 lies in [-0.25, 255.25]: codes kept,
    # out_min = -64/128 = -0.5, out_max = -0.5 + 1.9921875.
    x = np.arange(256, dtype=np.uint8).reshape(1, 2, 4, 32)
    z, mn, mx = execute(session("add", R_A + R_B), d32(x), d32([[[[50]]]]))
    assert (mn, mx) == (f32(-0.5), f32(1.4921875))
    np.testing.assert_array_equal(z.array, x)


def test_sub_with_scalar_x_is_a_reverse_subtract():
    # §13.3/§16 rsub: x = 0.5 (scalar) broadcasts to y, so a = y and b = x; bv = -0.5,
    # nz = 192, range (-1.5, 0.4921875); reversed: codes 255 - a, range (-0.4921875, 1.5).
    # e.g. y code 200 (0.5625): 0.5 - 0.5625 = -0.0625 = -0.4921875 + 55/128.
    y = np.arange(256, dtype=np.uint8).reshape(1, 2, 4, 32)
    z, mn, mx = execute(session("sub", R_B + R_A), d32([[[[50]]]]), d32(y))
    assert (mn, mx) == (f32(-0.4921875), f32(1.5))
    np.testing.assert_array_equal(z.array, 255 - y)


def test_add_scalar_outside_the_codes_squeezes_them():
    # §13.3 step 4: a = [0, 1] (zero code 0), b = 1.0: nz = -255 < -0.25, so out = (0, 2),
    # S = rndi(32768 * 1 / 2) = 16384, O = 32640 - (255*16384 >> 8) = 16320;
    # y = (a*16384 + 16320*256 + 16384) >> 15: a=0 -> 128, a=255 -> 255, a=100 -> 178.
    x = np.array([0, 100, 255], np.uint8).reshape(1, 1, 1, 3)
    z, mn, mx = execute(session("add", (0.0, 1.0, 0.0, 2.55)), d32(x), d32([[[[100]]]]))
    assert (mn, mx) == (f32(0.0), f32(2.0))
    np.testing.assert_array_equal(z.array.reshape(-1), [128, 178, 255])


def test_mul_scalar_negative_and_zero():
    # §13.3 Mul: bv < 0 gives 255 - a with swapped ends; bv == 0 gives zeros on (amin*0, 0.5),
    # and amin*0 is -0.0.
    x = np.arange(0, 256, 5, dtype=np.uint8).reshape(1, 1, 1, -1)
    s = session("mul", R_A + R_A)
    z, mn, mx = execute(s, d32(x), d32([[[[0]]]]))            # bv = -1
    assert (mn, mx) == (f32(-0.9921875), f32(1.0))
    np.testing.assert_array_equal(z.array, 255 - x)
    s = session("mul", R_A + (0.0, 2.55))
    z, mn, mx = execute(s, d32(x), d32([[[[0]]]]))            # bv = 0
    assert mn == 0 and np.signbit(mn) and mx == f32(0.5)
    assert not z.array.any()


def general_add_session():
    return session("add", (0.0, 255.0, 0.0, 255.0))


SMALL_X = np.array([[[[1, 2], [10, 5]]]], np.uint8)
SMALL_Y = np.array([[[[2, 3], [20, 40]]]], np.uint8)


def test_add_first_run_uses_an_eighth_of_the_extremes():
    # §13.4: Tmax = 510, Tmin = 0 -> (0, 63.75); §13.5: osc = 4, As = Bs = 4, sv = 8,
    # e = exp2(8.002) = 4, rsh = 2, A = B = 4*4*256 = 4096, iz = 0, off = 0.
    # t = 16 (a + b); y = (t + 2) >> 2 = 4 (a + b): sums 3, 5, 30, 45 -> 12, 20, 120, 180.
    # The tracked max 45 < 63.75: no re-run (§13.7).
    z, mn, mx = execute(general_add_session(), d32(SMALL_X), d32(SMALL_Y))
    assert (mn, mx) == (f32(0.0), f32(63.75))
    np.testing.assert_array_equal(z.array.reshape(-1), [12, 20, 120, 180])


def test_range_adapts_across_runs_and_prepare_resets_it():
    # §13.7: run 2 overflows the max (200 > 63.75): R = 200 + 0.15*200 = 230, new range
    # (0, 230), and the op runs once more with it. Run 3 keeps (0, 230) (state, §1.9).
    # Session.prepare() resets the node: the small data get (0, 63.75) again.
    s = general_add_session()
    _, mn, mx = execute(s, d32(SMALL_X), d32(SMALL_Y))
    assert (mn, mx) == (0, f32(63.75))
    big = np.array([[[[100, 0], [7, 1]]]], np.uint8)
    z, mn, mx = execute(s, d32(big), d32(big))
    assert (mn, mx) == (0, f32(230.0))
    deq = z.array.astype(np.float64) * 230 / 255
    np.testing.assert_allclose(deq.reshape(-1), [200, 0, 14, 2], atol=230 / 255)
    _, mn, mx = execute(s, d32(SMALL_X), d32(SMALL_Y))
    assert (mn, mx) == (0, f32(230.0))
    s.prepare()
    _, mn, mx = execute(s, d32(SMALL_X), d32(SMALL_Y))
    assert (mn, mx) == (0, f32(63.75))


def test_one_32nd_rule_widens_the_range_when_input_ranges_change():
    # §13.4 later scalings: from (0, 63.75) with x now on (0, 25500): Tmax - Tmin = 25755,
    # d = 25755 - 32*63.75 = 23715 > 0, the max moves by (25755 - 63.75) * r = d / 32,
    # so out_max = 63.75 + 741.09375 = 804.84375 (zero data: no re-run).
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=3)
    g.append_const_node(0x200, np.array([0.0], np.float32))
    g.append_const_node(0x201, np.array([255.0], np.float32))
    g.append_node(NODE, OPS["add"], outputs=3, inputs=[(0x100, 0), (0x100, 1), (0x200, 0),
                                                        (0x100, 2), (0x200, 0), (0x201, 0)])
    g.append_node(0x400, "OUTPUT", inputs=[(NODE, 1), (NODE, 2)])
    s = Session(g)
    zeros = d32(np.zeros((1, 1, 2, 2)))
    assert [t.scalar_value() for t in s.execute([zeros, zeros, np.float32([255.0])])] == \
        [0.0, 63.75]
    mn, mx = (t.scalar_value() for t in s.execute([zeros, zeros, np.float32([25500.0])]))
    assert mn == 0.0 and mx == pytest.approx(804.84375, rel=1e-6)


def test_fixed_range_saturates_and_never_moves():
    # §16: both ends fixed -> R3(c=3) at prepare, no tracking, no re-run. Range (0, 10) with
    # steps 1: osc = 25.5, sv = 51, e = 6, rsh = 0, so under-range mode (§13.5) with pre = 1:
    # A = B = 6528, t = (a*A + b*B) >> 7, y = (t + 1) >> 1: sum 3 -> 153 -> 77,
    # sum 5 -> 255 -> 128; sums 30 and 45 saturate to 255. The range stays (0, 10).
    s = session("add", (0.0, 255.0, 0.0, 255.0), fixed=(0.0, 10.0))
    for _ in range(2):
        z, mn, mx = execute(s, d32(SMALL_X), d32(SMALL_Y))
        assert (mn, mx) == (0, f32(10.0))
        np.testing.assert_array_equal(z.array.reshape(-1), [77, 128, 255, 255])


def test_infinite_fixed_ends_mean_free():
    # §13.1: -inf on input 6 and +inf on input 7 mean "not fixed".
    s = session("add", (0.0, 255.0, 0.0, 255.0), fixed=(-np.inf, np.inf))
    z, mn, mx = execute(s, d32(SMALL_X), d32(SMALL_Y))
    assert (mn, mx) == (0, f32(63.75))
    np.testing.assert_array_equal(z.array.reshape(-1), [12, 20, 120, 180])


def test_output_padding_and_undefined_bytes():
    # op_add_d32.c: height/width padding of the full operand a, no depth-before padding,
    # depth-after to a's slice count; the padding holds the session's fill byte.
    pa = D32Padding(2, 3, 1, 2, 10, 17)
    x = d32(np.ones((1, 2, 5, 5)), pa, fill=1)
    y = d32(np.ones((1, 1, 1, 5)), D32Padding(0, 0, 0, 3, 0, 27), fill=2)
    s = session("add", (-1.0, 1.0, -1.0, 1.0), padding_fill=0x3C)
    z, _, _ = execute(s, x, y)
    assert z.shape == (1, 2, 5, 5)
    assert z.padding == D32Padding(2, 3, 1, 2, 0, 27)
    assert np.all(z.memory[z.padding_mask()] == 0x3C)


def test_a_slice_of_padding_only_is_not_passed_on():
    """setup_elementwise_strategy (op_add_d32.c) gives the output depth-after padding
    tinA.nd32 * 32 - depth, nd32 being the slices of a that hold data, (d_before + depth +
    31) / 32 (tensor_addressing_d32, nn_graph_types.h), not D_tot / 32: depth 30 after
    depth-before 5 gives depth-after 34 (2 slices), and the next add, whose input's second
    slice is padding only, gives 1 slice again. A scalar-0 mul memsets height * tout.nd32
    d32 rows (tensor_copy_scaled_d32)."""
    s = session("add", (-1.0, 1.0, -1.0, 1.0))
    z, _, _ = execute(s, d32(np.ones((1, 2, 3, 30)), D32Padding(0, 0, 4, 1, 5, 29)),
                      d32(np.ones((1, 2, 3, 30)), D32Padding(0, 0, 4, 1, 5, 29)))
    assert z.padding == D32Padding(0, 0, 4, 1, 0, 34)
    z2, _, _ = execute(session("add", (-1.0, 1.0, -1.0, 1.0)), z, z)
    assert z2.padding == D32Padding(0, 0, 4, 1, 0, 2)
    m = session("mul", R_A + (0.0, 2.55), padding_fill=0x3C)
    zero, _, _ = execute(m, z, d32([[[[0]]]]))
    assert zero.padding == D32Padding(0, 0, 4, 1, 0, 2)
    mem = zero.memory                                    # (B, H_tot, slices, W_tot, 32)
    assert np.all(mem[0, :, 0, 4:7] == 0)                # the valid pixels, depth padding too


def test_scalar_fill_writes_the_memset_span():
    # tensor_copy_scaled_d32: a fill (scale 0) memsets from the vector holding (h=0, w=0)
    # to the last valid vector of the last row; rows above and below keep the fill byte.
    x = d32(np.full((1, 2, 3, 40), 7), D32Padding(1, 1, 4, 1, 0, 24), fill=1)
    s = session("mul", R_A + (0.0, 2.55), padding_fill=0x3C)
    z, _, _ = execute(s, x, d32([[[[0]]]]))
    padded = z.padded_array()
    assert np.all(padded[0, 1:3, 4:8, :] == 0)          # valid rows incl. depth padding
    assert np.all(padded[0, 0] == 0x3C) and np.all(padded[0, 3] == 0x3C)


def test_aliases_and_arity():
    assert REGISTRY.canonical("QuantizedAdd_8x8to8_d32") == "QuantizedAdd_8p8to8_d32"
    assert REGISTRY.canonical("QuantizedSub_8x8to8_d32") == "QuantizedSub_8p8to8_d32"
    assert REGISTRY.get("QuantizedMul_8x8to8_d32").inputs.arity == (6, 6)
    assert REGISTRY.get("QuantizedAdd_8p8to8_d32").inputs.arity == (6, 8)
    with pytest.raises(GraphError):
        session("mul", (0.0, 1.0, 0.0, 1.0), fixed=(0.0,))


# --- errors -----------------------------------------------------------------------------------
def test_flat_input_is_rejected():
    flat = Tensor.from_array(np.zeros((1, 1, 2, 4), np.uint8), DType.QUINT8)
    with pytest.raises(NodeError, match="unsupported broadcast mode.*2nd tensor not d32"):
        execute(session("add", (0.0, 1.0, 0.0, 1.0)), d32(np.zeros((1, 1, 2, 4))), flat)


@pytest.mark.parametrize("xs, ys", [((1, 2, 1, 8), (1, 1, 3, 8)),   # both directions
                                    ((1, 2, 3, 8), (1, 2, 4, 8))])  # neither is 1
def test_incompatible_shapes_are_rejected(xs, ys):
    with pytest.raises(NodeError, match="unsupported broadcast mode"):
        execute(session("mul", (0.0, 1.0, 0.0, 1.0)), d32(np.zeros(xs)), d32(np.zeros(ys)))


def test_tiny_fixed_range_fails_scaling():
    # §13.5: steps 1 into (0, 0.01): osc = 25500, e = 15 > 12 -> "scaling failed".
    s = session("add", (0.0, 255.0, 0.0, 255.0), fixed=(0.0, 0.01))
    with pytest.raises(NodeError, match="scaling failed"):
        execute(s, d32(SMALL_X), d32(SMALL_Y))


def test_garbage_in_input_padding_does_not_change_the_output():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, (2, 3, 5, 40), dtype=np.uint8)
    y = rng.integers(0, 256, (2, 1, 5, 40), dtype=np.uint8)
    outs = []
    for fill in (0x00, 0xFF):
        s = session("sub", (-1.0, 2.0, -3.0, 1.0))
        outs.append([execute(s, d32(x, D32Padding(1, 2, 3, 0, 6, 18), fill),
                             d32(y, D32Padding(0, 1, 2, 1, 0, 24), fill)) for _ in range(2)])
    for (za, *ra), (zb_, *rb) in zip(outs[0], outs[1], strict=True):
        np.testing.assert_array_equal(za.array, zb_.array)
        assert ra == rb


# --- property tests against the reference -----------------------------------------------------
def steps_range(draw_lo: int, draw_step: float):
    """A proper range (integer zero code): min = -z*step, max = (255 - z)*step."""
    return float(f32(-draw_lo * draw_step)), float(f32((255 - draw_lo) * draw_step))


proper = st.builds(steps_range, st.integers(0, 255), st.sampled_from([1 / 128, 0.01, 0.05, 0.3]))
loose = st.tuples(st.floats(-3, 0, width=32), st.floats(0.0625, 3, width=32))


@st.composite
def cases(draw):
    op = draw(st.sampled_from(["add", "sub", "mul"]))
    big = [draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 5)),
           draw(st.integers(1, 40))]
    small = [d if draw(st.booleans()) else 1 for d in big]
    if draw(st.booleans()):
        big, small = small, big          # x broadcasts to y (swap, rsub for Sub)
    rx = draw(st.one_of(proper, loose))
    ry = draw(st.one_of(proper, loose))
    fixed = ()
    if op != "mul":
        fixed = draw(st.sampled_from([(), (-np.inf,), (-np.inf, np.inf), (-2.0,),
                                      (-np.inf, 3.0), (-1.5, 2.5), (0.0, 4.0),
                                      (-40.0, 40.0), (-np.inf, 50.0), (-60.0,),
                                      (-0.05, 0.05)]))
    return op, tuple(big), tuple(small), rx + ry, fixed, draw(st.integers(0, 2**32 - 1))


def pad_for(shape, rng):
    wb, db = int(rng.integers(0, 5)), int(rng.integers(0, 32))
    return D32Padding(int(rng.integers(0, 3)), int(rng.integers(0, 3)), wb,
                      (-(wb + shape[2])) % 4, db, (-(db + shape[3])) % 32)


@settings(max_examples=40, deadline=None)
@given(cases())
def test_matches_reference_over_three_runs(case):
    """Run 1 and 2 share input ranges (tracking and the re-run), run 3 widens them (the 1/32
    rule for add/sub, a re-scale for mul); each run's codes and range match the reference."""
    op, xs, ys, ranges, fixed, seed = case
    rng = np.random.default_rng(seed)
    s = fed_session(op, fixed)
    ref = RefNode(op, fixed)
    for k, scale in enumerate((1.0, 1.0, 3.0)):
        run_ranges = [float(f32(r * scale)) for r in ranges]
        x = rng.integers(0, 256, xs, dtype=np.uint8)
        y = rng.integers(0, 256, ys, dtype=np.uint8)
        feed = [d32(x, pad_for(xs, rng), 0x5A), d32(y, pad_for(ys, rng), 0xC3)] + [
            np.float32([r]) for r in run_ranges]
        try:
            want = ref.run(x, y, run_ranges)
        except ScalingFailed:
            with pytest.raises(NodeError, match="scaling failed"):
                s.execute(feed)
            return
        z, mn, mx = s.execute(feed)
        assert (mn.scalar_value(), mx.scalar_value()) == (want[1], want[2]), f"run {k + 1}"
        np.testing.assert_array_equal(z.array, want[0], err_msg=f"run {k + 1}")


def fed_session(op: str, fixed) -> Session:
    """Ranges come from INPUT, so they can change between executions of one session."""
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=6)
    for i, v in enumerate(fixed):
        g.append_const_node(0x200 + i, np.array([v], np.float32))
    g.append_node(NODE, OPS[op], outputs=3, inputs=[(0x100, k) for k in range(6)]
                  + [(0x200 + i, 0) for i in range(len(fixed))])
    g.append_node(0x400, "OUTPUT", inputs=[(NODE, 0), (NODE, 1), (NODE, 2)])
    return Session(g)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["add", "sub"]), proper, proper, st.integers(0, 2**32 - 1))
def test_free_range_holds_the_true_values(op, rx, ry, seed):
    """After the re-run the output range covers the results: each dequantized code is within
    about one output step of the exact float result (an independent check of §13.5-§13.7)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (1, 2, 3, 33), dtype=np.uint8)
    y = rng.integers(0, 256, (1, 2, 1, 33), dtype=np.uint8)
    z, mn, mx = execute(session(op, rx + ry), d32(x), d32(y))

    def value(codes, r):
        step = (r[1] - r[0]) / 255
        return (codes.astype(np.float64) - round(-r[0] / step)) * step

    exact = value(x, rx) + (value(y, ry) if op == "add" else -value(y, ry))
    step = (float(mx) - float(mn)) / 255
    got = value(z.array, (float(mn), float(mx)))
    assert np.all(np.abs(got - exact) <= 1.01 * step + 1e-6)


def test_mul_shift_at_or_below_zero_is_flagged_and_matches_the_reference():
    # §13.6: Mul keeps its range between runs and has no 1/32 rule, so after the input
    # ranges grow 100x, psf >= 0.5 and rsh <= 0 on the first pass: the device's shift is
    # unconfirmed; the simulator applies none (as the C re-run test) and warns.
    s = fed_session("mul", ())
    ref = RefNode("mul")
    x = np.array([[[[10, 200], [128, 0]]]], np.uint8)
    small, grown = [-1.0, 0.9921875] * 2, [-100.0, 99.21875] * 2
    for ranges in (small, grown):
        want = ref.run(x, x, ranges)
        z, mn, mx = s.execute([d32(x), d32(x)] + [np.float32([r]) for r in ranges])
        np.testing.assert_array_equal(z.array, want[0])
        assert (mn.scalar_value(), mx.scalar_value()) == (want[1], want[2])
    assert any("unconfirmed" in w for w in s.result(NODE).warnings)


@pytest.mark.parametrize("name", ["QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32",
                                  "QuantizedMul_8x8to8_d32"])
def test_registry_doc_has_the_op_text_and_the_shared_engine_notes(name):
    # The palette shows REGISTRY docs: each op's own text, then the engine notes (§13).
    doc = REGISTRY.get(name).doc
    assert doc.splitlines()[0] == REGISTRY.get(name).summary
    assert "setup_elementwise_strategy" in doc and "scaling failed" in doc
    assert doc.index("Quantized-ops spec §1") < doc.index("Output: a d32 tensor")


@pytest.mark.parametrize("op", sorted(OPS))
def test_an_output_larger_than_its_declared_size_fails_the_node(op):
    """op_add_d32.c setup_elementwise_strategy: tensor_out_prepare_padded_d32 fails with
    "failure preparing output" when the padded result does not fit max_size (d32 widening,
    graph spec §1.4); the message names both sizes."""
    from hexscope.engine.nodes import OutputDef

    x = d32(np.arange(2 * 2 * 24, dtype=np.uint8).reshape(1, 2, 2, 24))
    needed = execute(session(op, (0.0, 1.0, 0.0, 1.0)), x, x)[0].nbytes
    for sizes, fits in (((1, 1, 2, 24), False), ((1, 2, 2, 24), True)):
        capacity = OutputDef(sizes, 1).capacity(d32_output=True)
        assert (capacity >= needed) is fits
        g = Graph()
        g.append_node(0x100, "INPUT", outputs=2)
        for i, v in enumerate((0.0, 1.0, 0.0, 1.0)):
            g.append_const_node(0x200 + i, np.array([v], np.float32))
        g.append_node(NODE, OPS[op], outputs=[OutputDef(sizes, 1), OutputDef((1, 1, 1, 1), 4),
                                              OutputDef((1, 1, 1, 1), 4)],
                      inputs=[(0x100, 0), (0x100, 1)] + [(0x200 + i, 0) for i in range(4)])
        g.append_node(0x400, "OUTPUT", inputs=[(NODE, 0), (NODE, 1), (NODE, 2)])
        if fits:
            assert Session(g).execute([x, x])[0].nbytes == needed
            continue
        with pytest.raises(NodeError) as info:
            Session(g).execute([x, x])
        assert info.value.node_id == NODE
        assert f"failure preparing output: output 0 needs {needed} bytes" in str(info.value)
        assert f"holds {capacity} bytes" in str(info.value)
