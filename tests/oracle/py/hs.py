"""Hexscope side: call an op's registered kernel directly, as the executor does."""
from __future__ import annotations

import numpy as np
from common import Out, Result, T

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import EngineError
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

_DT = {"u8": DType.QUINT8, "i8": DType.QINT8, "i32": DType.INT32, "f32": DType.FLOAT32,
       "u16": DType.QUINT16, "i16": DType.QINT16}
_NAME = {DType.QUINT8: "u8", DType.UINT8: "u8", DType.QINT8: "i8", DType.INT8: "i8",
         DType.INT32: "i32", DType.QINT32: "i32", DType.FLOAT32: "f32", DType.QUINT16: "u16",
         DType.QINT16: "i16", DType.VOID: "void"}


def to_tensor(t: T) -> Tensor:
    if t.data is None:
        return Tensor.shape_only(t.shape)
    dt = DType.QINT32 if t.qint32 else _DT[t.dtype]
    if t.d32 is None:
        return Tensor(t.shape, dt, t.memory().copy())
    return Tensor(t.shape, dt, t.memory().copy(), Layout.D32, D32Padding(*t.d32))


def run(op: str, inputs: list[T], n_out: int, padding: str = "NA", state: dict | None = None,
        def_max=None, elsizes=None) -> Result:
    spec = REGISTRY.get(op)
    defs = tuple(OutputDef(tuple(def_max[k]) if def_max else (1, 1, 1, 1),
                           (elsizes[k] if elsizes else 1)) for k in range(n_out))
    ctx = KernelContext(node_id=0x2000, op=op, padding=Padding.parse(padding), output_defs=defs,
                        input_refs=tuple((0x1000 + k, 0) for k in range(len(inputs))),
                        input_ops=tuple("Const" for _ in inputs),
                        state=state if state is not None else {})
    try:
        outs = spec.kernel(ctx, *[to_tensor(t) for t in inputs])
    except EngineError as exc:
        return Result(False, error=str(exc), kind="error", warnings=list(ctx.warnings))
    res = Result(True, warnings=list(ctx.warnings))
    for o in outs:
        if not isinstance(o, Tensor):
            o = Tensor.from_array(np.asarray(o))
        d32 = tuple(o.padding) if o.layout is Layout.D32 else None
        res.outs.append(Out(tuple(o.shape), _NAME[getattr(o, "device_dtype", o.dtype)],   # the device tag (Tensor.device_dtype)

                            np.asarray(o.buffer).copy() if o.has_data else np.zeros(0, np.uint8),
                            d32, np.asarray(o.raw).copy() if o.has_data else None))
    return res


class _GlibcNumpy:
    """numpy, except that exp/log/tanh on float32 call glibc's expf/logf/tanhf (the libm the
    C oracle links). Swapped into Hexscope's float kernels to separate libm differences from
    differences in formula or evaluation order."""

    def __init__(self) -> None:
        import ctypes
        libm = ctypes.CDLL("libm.so.6")
        self._f = {}
        for name, c in (("exp", "expf"), ("log", "logf"), ("tanh", "tanhf")):
            fn = getattr(libm, c)
            fn.restype = ctypes.c_float
            fn.argtypes = [ctypes.c_float]
            self._f[name] = np.vectorize(lambda v, fn=fn: np.float32(fn(float(v))), otypes=[np.float32])

    def __getattr__(self, name):
        if name in self._f:
            f = self._f[name]

            def call(x, *a, **k):
                x = np.asarray(x)
                if x.dtype != np.float32:
                    return getattr(np, name)(x, *a, **k)
                return f(x) if x.size else x.copy()
            return call
        return getattr(np, name)


_GLIBC = None


def glibc_libm(on: bool) -> None:
    """Make Hexscope's float_ops use glibc's expf/logf/tanhf (on) or numpy's (off)."""
    global _GLIBC
    from hexscope.engine.ops.floating import ops as float_ops
    if on:
        _GLIBC = _GLIBC or _GlibcNumpy()
        float_ops.np = _GLIBC
    else:
        float_ops.np = np
