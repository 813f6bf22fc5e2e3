"""Neutral tensor description shared by both sides, and the bit-exact comparison."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# nnlib's NN_TYPE_* codes (Hexscope's DType uses the same numbers, plus QINT32 = 107)
TYPES = {"u8": 2, "i8": 1, "i32": 7, "f32": 8, "u16": 6, "i16": 5, "void": 0}
NP = {"u8": np.uint8, "i8": np.int8, "i32": np.int32, "f32": np.float32, "u16": np.uint16,
      "i16": np.int16, "void": np.uint8}
SIZE = {"u8": 1, "i8": 1, "i32": 4, "f32": 4, "u16": 2, "i16": 2, "void": 4}


@dataclass
class T:
    """A tensor: logical NHWC data (or None for shape-only), its type and, for d32, its
    padding in Hexscope's order (h_before, h_after, w_before, w_after, d_before, d_after).
    ``qint32`` marks int32 data that Hexscope types as QINT32 (the C side has no such tag)."""
    shape: tuple[int, int, int, int]
    dtype: str
    data: np.ndarray | None
    d32: tuple[int, ...] | None = None
    qint32: bool = False
    d32_fill: int = 0

    @classmethod
    def of(cls, arr, dtype: str, qint32: bool = False) -> T:
        a = np.asarray(arr, dtype=NP[dtype])
        shape = (1,) * (4 - a.ndim) + a.shape
        return cls(tuple(int(x) for x in shape), dtype, a.reshape(shape), qint32=qint32)

    @classmethod
    def f(cls, v: float) -> T:
        return cls.of(np.array([v], np.float32), "f32")

    @classmethod
    def i(cls, v: int) -> T:
        return cls.of(np.array([v], np.int32), "i32")

    @classmethod
    def shape_only(cls, shape) -> T:
        return cls(tuple(shape), "void", None)

    def memory(self) -> np.ndarray:
        """Bytes in memory order (d32 padding filled with d32_fill)."""
        if self.data is None:
            return np.zeros(0, np.uint8)
        if self.d32 is None:
            return np.ascontiguousarray(self.data, NP[self.dtype]).reshape(-1).view(np.uint8)
        hb, ha, wb, wa, db, da = self.d32
        b, h, w, d = self.shape
        ht, wt, dt = hb + h + ha, wb + w + wa, db + d + da
        mem = np.full((b, ht, dt // 32, wt, 32), self.d32_fill, NP[self.dtype])
        padded = np.full((b, ht, wt, dt), self.d32_fill, NP[self.dtype])
        padded[:, hb:hb + h, wb:wb + w, db:db + d] = self.data
        mem[:] = padded.reshape(b, ht, wt, dt // 32, 32).transpose(0, 1, 3, 2, 4)
        return mem.reshape(-1).view(np.uint8)


@dataclass
class Out:
    """One output as a side produced it."""
    shape: tuple[int, int, int, int]
    dtype: str | None
    raw: np.ndarray            # bytes in memory order, data_size long
    d32: tuple[int, ...] | None = None
    full: np.ndarray | None = None   # the whole allocation (data + tail), when known

    def logical(self) -> np.ndarray:
        dt = NP.get(self.dtype or "u8", np.uint8)
        b, h, w, d = self.shape
        if self.d32 is None:
            n = b * h * w * d
            return self.raw[: n * np.dtype(dt).itemsize].view(dt).reshape(self.shape)
        hb, ha, wb, wa, db, da = self.d32
        ht, wt, dt_ = hb + h + ha, wb + w + wa, db + d + da
        mem = self.raw[: b * ht * wt * dt_].view(dt).reshape(b, ht, dt_ // 32, wt, 32)
        padded = mem.transpose(0, 1, 3, 2, 4).reshape(b, ht, wt, dt_)
        return padded[:, hb:hb + h, wb:wb + w, db:db + d]


@dataclass
class Result:
    ok: bool                         # the op succeeded
    outs: list[Out] = field(default_factory=list)
    error: str = ""
    kind: str = ""                   # "", "error", "stub", "crash"
    warnings: list[str] = field(default_factory=list)
    ub: tuple = (0, "")              # C side: undefined float->int conversions not emulated
    guard: tuple = (0, 0)            # C side: bytes written before / after a buffer
    hexconv: tuple = (0, 0, 0)       # C side: conversions emulated as Hexagon's, stepped, failed


def fbits(x: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(x, np.float32).reshape(-1).view(np.uint32)]


def compare(c: Result, h: Result, *, float_outputs: tuple[int, ...] = (),
            ignore_outputs: tuple[int, ...] = (), compare_padding: bool = False,
            tail: bool = False, layout_only_c_stub: bool = False) -> list[str]:
    """Differences between the C oracle's result and Hexscope's, as readable strings.
    Empty list = bit-exact (data bytes, min/max float bits, shapes, d32 padding amounts)."""
    diffs: list[str] = []
    if layout_only_c_stub and c.kind == "stub" and h.ok:
        # C decided the output layout, then reached its HVX copy loop: compare the layout
        for k, (co, ho) in enumerate(zip(c.outs, h.outs)):
            if co.shape != ho.shape:
                diffs.append(f"out{k} shape: C {co.shape} / Hexscope {ho.shape}")
            if (co.d32 is None) != (ho.d32 is None) or (co.d32 and tuple(co.d32) != tuple(ho.d32)):
                diffs.append(f"out{k} layout/padding: C {co.d32} / Hexscope {ho.d32}")
        return diffs
    if c.ok != h.ok:
        diffs.append(f"status: C {'ok' if c.ok else 'fails: ' + c.error[:160]} / "
                     f"Hexscope {'ok' if h.ok else 'fails: ' + h.error[:160]}")
        return diffs
    if not c.ok:
        return diffs
    for k, (co, ho) in enumerate(zip(c.outs, h.outs)):
        if k in ignore_outputs:
            continue
        if co.shape != ho.shape:
            diffs.append(f"out{k} shape: C {co.shape} / Hexscope {ho.shape}")
            continue
        if (co.d32 is None) != (ho.d32 is None):
            diffs.append(f"out{k} layout: C {'d32' if co.d32 else 'flat'} / Hexscope "
                         f"{'d32' if ho.d32 else 'flat'}")
            continue
        if co.d32 is not None and tuple(co.d32) != tuple(ho.d32):
            diffs.append(f"out{k} d32 padding: C {tuple(co.d32)} / Hexscope {tuple(ho.d32)}")
            continue
        if co.dtype != ho.dtype and {co.dtype, ho.dtype} <= {"u8", "i8"}:
            diffs.append(f"[note] out{k} type tag: C {co.dtype} / Hexscope {ho.dtype} (bytes compared)")
            co = Out(co.shape, ho.dtype, co.raw, co.d32, co.full)
        cl, hl = co.logical(), ho.logical()
        if cl.tobytes() != hl.tobytes():
            cb = cl.reshape(-1).view(np.uint8) if cl.dtype != np.uint8 else cl.reshape(-1)
            n_el = cl.size
            ce, he = cl.reshape(-1), hl.reshape(-1)
            if ce.dtype.kind == "f":
                bad = np.nonzero(ce.view(np.uint32) != he.view(np.uint32))[0]
            else:
                bad = np.nonzero(ce != he)[0]
            first = bad[:4]
            samples = ", ".join(f"[{int(i)}] C={ce[i]!r} H={he[i]!r}" for i in first)
            extra = ""
            if ce.dtype.kind in "iu" and bad.size:
                dmax = int(np.max(np.abs(ce[bad].astype(np.int64) - he[bad].astype(np.int64))))
                extra = f", max |diff| {dmax}"
            elif ce.dtype.kind == "f" and bad.size:
                ulp = np.abs(ce[bad].view(np.int32).astype(np.int64)
                             - he[bad].view(np.int32).astype(np.int64))
                extra = f", max ulp {int(ulp.max())}"
            diffs.append(f"out{k} data: {bad.size}/{n_el} elements differ{extra}; {samples}")
        if compare_padding and co.d32 is not None:
            cr = co.full if tail and co.full is not None else co.raw
            hr = ho.full if tail and ho.full is not None else ho.raw
            if tail and cr.size != hr.size:
                diffs.append(f"out{k} buffer incl. tail: C {cr.size} bytes / Hexscope {hr.size}")
            n = min(cr.size, hr.size)
            if cr[:n].tobytes() != hr[:n].tobytes():
                bad = np.nonzero(cr[:n] != hr[:n])[0]
                where = "tail" if bad[0] >= co.raw.size else "padding"
                diffs.append(f"out{k} memory incl. padding{'/tail' if tail else ''}: {bad.size} bytes "
                             f"differ, first at byte {int(bad[0])} ({where}) C={int(cr[bad[0]])} "
                             f"H={int(hr[bad[0]])}")
    if len(c.outs) != len(h.outs):
        diffs.append(f"output count: C {len(c.outs)} / Hexscope {len(h.outs)}")
    return diffs
