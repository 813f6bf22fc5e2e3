"""ctypes front end of liboracle.so (the nnlib plain-C ops built by build.sh)."""
from __future__ import annotations

import ctypes as C
import os

import numpy as np
from common import SIZE, TYPES, Out, Result, T

_TYPE_NAMES = {v: k for k, v in TYPES.items()}
PADDING = {"NA": 0, "SAME": 1, "VALID": 2, "MIRROR_REFLECT": 3, "MIRROR_SYMMETRIC": 4,
           "SAME_CAFFE": 5}


class OTensor(C.Structure):
    _fields_ = [("shape", C.c_uint32 * 4), ("type", C.c_uint32), ("layout", C.c_uint32),
                ("pad", C.c_uint16 * 6), ("data_size", C.c_uint32), ("max_size", C.c_uint32),
                ("def_max", C.c_uint32 * 4), ("def_elsize", C.c_uint32), ("data", C.c_void_p)]


class Oracle:
    def __init__(self, lib: str | None = None) -> None:
        path = lib or os.environ.get("ORACLE_LIB", os.path.join(os.environ.get("ORACLE_BUILD", os.path.expanduser("~/.cache/nnlib-oracle")), "liboracle.so"))
        self.lib = C.CDLL(path)
        self.lib.oracle_run.restype = C.c_int
        self.lib.oracle_error.restype = C.c_char_p
        self.lib.oracle_log.restype = C.c_char_p
        self.lib.oracle_ub_count.restype = C.c_int
        self.lib.oracle_ub_location.restype = C.c_char_p
        self.lib.oracle_op_name.restype = C.c_char_p
        self.op_ids = {self.lib.oracle_op_name(i).decode(): i
                       for i in range(self.lib.oracle_n_ops()) if self.lib.oracle_op_name(i)}

    def has_op(self, name: str) -> bool:
        try:
            C.c_void_p.in_dll(self.lib, "nn_ops_for_" + name)
            return True
        except ValueError:
            return False

    def run(self, op: str, inputs: list[T], outs: list[tuple[str, int]], padding: str = "NA",
            def_max: list[tuple[int, int, int, int]] | None = None, debug: int = 0) -> Result:
        """Run nnlib's op. ``outs``: per output (dtype, capacity in bytes)."""
        ops = C.addressof(C.c_char.in_dll(self.lib, "nn_ops_for_" + op))
        keep = []
        cin = (OTensor * max(1, len(inputs)))()
        for k, t in enumerate(inputs):
            o = cin[k]
            o.shape[:] = list(t.shape)
            o.type = TYPES[t.dtype]
            mem = t.memory()
            if t.d32 is not None:
                o.layout = 1
                hb, ha, wb, wa, db, da = t.d32
                o.pad[:] = [db, da, wb, wa, hb, ha]
            buf = np.ascontiguousarray(mem)
            keep.append(buf)
            o.data_size = buf.size
            o.data = buf.ctypes.data if buf.size else None
        cout = (OTensor * max(1, len(outs)))()
        bufs = []
        for k, (dt, cap) in enumerate(outs):
            o = cout[k]
            o.max_size = cap
            buf = np.full(cap + 128, 0xA5, np.uint8)
            bufs.append(buf)
            o.data = buf.ctypes.data
            dm = def_max[k] if def_max else (1, 1, 1, max(1, cap // SIZE.get(dt, 1)))
            o.def_max[:] = list(dm)
            o.def_elsize = SIZE.get(dt, 1)
        rc = self.lib.oracle_run(C.c_void_p(ops), self.op_ids.get(op, 0), PADDING[padding], debug,
                                 len(inputs), cin, len(outs), cout)
        err = self.lib.oracle_error().decode(errors="replace")
        gh = (C.c_int * 2)()
        self.lib.oracle_guard_hits(gh)
        guard = (gh[0], gh[1])
        hc = (C.c_int * 3)()
        self.lib.oracle_hexconv_counts(hc)
        ub = max(0, self.lib.oracle_ub_count() - hc[0])   # undefined conversions NOT emulated
        ub_where = self.lib.oracle_ub_location().decode(errors="replace")
        if rc != 0 and rc != -1000:
            kind = {-2000: "crash", -3000: "ctor"}.get(rc, "error")
            r = Result(False, error=err or f"rc={rc}", kind=kind)
            r.ub = (ub, ub_where)
            r.guard = guard
            r.hexconv = (hc[0], hc[1], hc[2])
            return r
        res = Result(True) if rc == 0 else Result(False, error=err, kind="stub")
        res.ub = (ub, ub_where)
        res.guard = guard
        res.hexconv = (hc[0], hc[1], hc[2])
        for k, (dt, cap) in enumerate(outs):
            o = cout[k]
            n = min(o.data_size, cap)
            tname = _TYPE_NAMES.get(o.type, dt)
            if dt == "i32" and tname == "void":
                tname = "i32"
            d32 = None
            if o.layout:
                db, da, wb, wa, hb, ha = list(o.pad)
                d32 = (hb, ha, wb, wa, db, da)
            res.outs.append(Out(tuple(o.shape), tname if tname != "void" else dt,
                                bufs[k][:n].copy(), d32, bufs[k][:cap].copy()))
        return res

    def log(self) -> str:
        return self.lib.oracle_log().decode(errors="replace")


def d32_offsets(oracle: Oracle, shape, pad) -> np.ndarray:
    """Byte offset of every element (b,h,w,d), from nnlib's tensor_offset_for_d32."""
    o = OTensor()
    o.shape[:] = list(shape)
    hb, ha, wb, wa, db, da = pad
    o.pad[:] = [db, da, wb, wa, hb, ha]
    f = oracle.lib.oracle_d32_offset
    f.restype = C.c_long
    f.argtypes = [C.POINTER(OTensor), C.c_int, C.c_int, C.c_int, C.c_int]
    b, h, w, d = shape
    out = np.empty(shape, np.int64)
    for ib in range(b):
        for ih in range(h):
            for iw in range(w):
                for idd in range(d):
                    out[ib, ih, iw, idd] = f(C.byref(o), ib, ih, iw, idd)
    return out
