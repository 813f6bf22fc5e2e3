"""The Hexagon oracle: nnlib's ops WITH their HVX and assembly code, run under qemu-hexagon.

Same interface as ``oracle.Oracle`` (``run``, ``has_op``, ``log``) plus ``run_many``, which sends
many cases to one qemu process. The binary is built by ``tests/oracle/hvx/build.sh``; its path is
``$ORACLE_HVX`` (default ``$HOME/.cache/nnlib-oracle-hvx/oracle-hvx``), the emulator
``$QEMU_HEXAGON`` (default ``qemu-hexagon``).

Stream (little endian; tests/oracle/hvx/driver/main.c reads and writes it):
  request  = "HXC1", u32 len, op name, u32 padding, u32 debug, u32 n_in, u32 n_out,
             n_in x (u32 shape[4], u32 type, u32 layout, u16 pad[6] (depth b/a, width b/a,
             height b/a), u32 data_size, data bytes),
             n_out x (u32 capacity, u32 def_max[4], u32 element size);  "HEND" ends the stream
  response = "HXR1", i32 rc, u32 len + error text, u32 len + log text, u32 guard hits before,
             after, u32 n_out, n_out x (u32 shape[4], u32 type, u32 layout, u16 pad[6],
             u32 data_size, u32 capacity, capacity bytes)
rc: 0 ok, -1 the op's error, -1000 a stub (a symbol the build does not define), -3000 the
ctor failed, -4000 op not in the build; a case that kills the process (a crash) is "crash".
"""
from __future__ import annotations

import os
import struct
import subprocess

import numpy as np
from common import SIZE, TYPES, Out, Result, T
from oracle import PADDING

_TYPE_NAMES = {v: k for k, v in TYPES.items()}
_REQ, _RES, _END = b"HXC1", b"HXR1", b"HEND"


def default_binary() -> str:
    return os.environ.get("ORACLE_HVX", os.path.expanduser("~/.cache/nnlib-oracle-hvx/oracle-hvx"))


def encode(op: str, inputs: list[T], outs: list[tuple[str, int]], padding: str = "NA",
           def_max=None, debug: int = 0) -> bytes:
    name = op.encode()
    parts = [_REQ, struct.pack("<I", len(name)), name,
             struct.pack("<IIII", PADDING[padding], debug, len(inputs), len(outs))]
    for t in inputs:
        mem = np.ascontiguousarray(t.memory()).view(np.uint8).tobytes()
        layout, pad = 0, (0,) * 6
        if t.d32 is not None:
            hb, ha, wb, wa, db, da = t.d32
            layout, pad = 1, (db, da, wb, wa, hb, ha)
        parts += [struct.pack("<4III6HI", *t.shape, TYPES[t.dtype], layout, *pad, len(mem)), mem]
    for k, (dt, cap) in enumerate(outs):
        dm = def_max[k] if def_max else (1, 1, 1, max(1, cap // SIZE.get(dt, 1)))
        parts.append(struct.pack("<I4II", cap, *dm, SIZE.get(dt, 1)))
    return b"".join(parts)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.b, self.p = data, 0

    def take(self, n: int) -> bytes:
        if self.p + n > len(self.b):
            raise EOFError
        s = self.b[self.p:self.p + n]
        self.p += n
        return s

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def text(self) -> str:
        return self.take(self.u32()).decode(errors="replace")


def _decode_one(r: _Reader, outs: list[tuple[str, int]]) -> tuple[Result, str]:
    if r.take(4) != _RES:
        raise EOFError
    rc = struct.unpack("<i", r.take(4))[0]
    err, log = r.text(), r.text()
    guard = (r.u32(), r.u32())
    n_out = r.u32()
    raw_outs = []
    for _ in range(n_out):
        shape = struct.unpack("<4I", r.take(16))
        typ, layout = r.u32(), r.u32()
        pad = struct.unpack("<6H", r.take(12))
        size, cap = r.u32(), r.u32()
        raw_outs.append((shape, typ, layout, pad, size, np.frombuffer(r.take(cap), np.uint8)))
    if rc not in (0, -1000):
        kind = {-3000: "ctor", -4000: "stub"}.get(rc, "error")
        res = Result(False, error=err or f"rc={rc}", kind=kind)
        res.guard = guard
        return res, log
    res = Result(True) if rc == 0 else Result(False, error=err, kind="stub")
    res.guard = guard
    for (dt, cap), (shape, typ, layout, pad, size, buf) in zip(outs, raw_outs):
        n = min(size, cap)
        tname = _TYPE_NAMES.get(typ, dt)
        if dt == "i32" and tname == "void":
            tname = "i32"
        d32 = None
        if layout:
            db, da, wb, wa, hb, ha = pad
            d32 = (hb, ha, wb, wa, db, da)
        res.outs.append(Out(tuple(shape), tname if tname != "void" else dt, buf[:n].copy(), d32,
                            buf[:cap].copy()))
    return res, log


class HvxOracle:
    """nnlib's HVX build under qemu-hexagon; one process per ``run_many`` batch."""

    def __init__(self, binary: str | None = None, qemu: str | None = None) -> None:
        self.binary = binary or default_binary()
        self.qemu = qemu or os.environ.get("QEMU_HEXAGON", "qemu-hexagon")
        if not os.path.exists(self.binary):
            raise FileNotFoundError(f"{self.binary}: build it with tests/oracle/hvx/build.sh")
        ops = os.path.join(os.path.dirname(self.binary), "ops.txt")
        self.ops = set(open(ops).read().split()) if os.path.exists(ops) else set()
        self._log = ""

    def has_op(self, name: str) -> bool:
        return name in self.ops

    def run(self, op: str, inputs: list[T], outs: list[tuple[str, int]], padding: str = "NA",
            def_max=None, debug: int = 0) -> Result:
        return self.run_many([(op, inputs, outs, padding, def_max, debug)])[0]

    def run_many(self, cases: list[tuple], timeout: float = 600.0) -> list[Result]:
        """Each case: (op, inputs, outs[, padding[, def_max[, debug]]]). A case that kills the
        process comes back as kind "crash"; the rest run in a new process."""
        results: list[Result] = []
        logs: list[str] = []
        while len(results) < len(cases):
            todo = cases[len(results):]
            stream = b"".join(encode(*c) for c in todo) + _END
            p = subprocess.run([self.qemu, self.binary], input=stream, capture_output=True,
                               timeout=timeout)
            r = _Reader(p.stdout)
            done = 0
            try:
                for c in todo:
                    res, log = _decode_one(r, c[2])
                    results.append(res)
                    logs.append(log)
                    done += 1
            except EOFError:
                pass
            if done < len(todo):      # the next case ended the process
                why = p.stderr.decode(errors="replace").strip().splitlines()
                results.append(Result(False, error=f"crash: exit {p.returncode}: "
                                      f"{why[-1] if why else ''}", kind="crash"))
                logs.append("")
        self._log = logs[-1] if logs else ""
        self.logs = logs
        return results

    def log(self) -> str:
        return self._log
