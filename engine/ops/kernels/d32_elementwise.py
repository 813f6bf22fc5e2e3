"""Requantize_8to8_d32 and the d32 add/subtract's normal mode as one compiled pass each over
the d32 memory (:mod:`d32_elementwise_defs`), where the numpy paths unpack, compute and pack
again (issue 25: 35 us a Requantize_8to8_d32 node, 80 us a QuantizedAdd_8p8to8_d32 one).

Each function returns None where the compiled kernels are off (``HEXSCOPE_KERNELS=numpy``,
numba missing or failing): the caller then takes its numpy path, which stays the reference
(the exactness tests run both).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np

from hexscope.engine.d32 import D32Geometry
from hexscope.engine.ops.kernels import compiled
from hexscope.engine.ops.kernels.spare_memory import SpareMemories


def _load() -> ModuleType:
    from hexscope.engine.ops.kernels import d32_elementwise_defs

    return d32_elementwise_defs


_defs = compiled.compile_once(_load)


def _load_lut() -> ModuleType | None:
    from hexscope.engine.ops.kernels import d32_lut_defs

    # without VBMI the table kernel is a byte loop, slower than the arithmetic pass
    return d32_lut_defs if d32_lut_defs.vbmi_native() else None


_lut_defs = compiled.compile_once(_load_lut)

#: (in_off, mul_even, mul_odd, add, shift, out_off): y = sat_u8((((c - in_off) * mul + add)
#: >> shift) + out_off), mul by the byte's memory offset's parity
RequantizeSteps = tuple[int, int, int, int, int, int]


def requantize_d32_pass(memory_shape: tuple[int, ...], written: tuple[slice, slice, slice],
                        steps: RequantizeSteps, fill: int
                        ) -> Callable[[np.ndarray], np.ndarray] | None:
    """A function of the input memory (at least as many bytes as ``memory_shape`` holds)
    giving the output memory: ``steps`` over the ``written`` (rows, slices, columns) of each
    batch, ``fill`` elsewhere; None where the compiled kernels are off."""
    defs = _defs()
    if defs is None:
        return None
    batches, h_total, n_slices, w_total, _ = memory_shape
    rows, slices, cols = written
    args = (batches, h_total, n_slices, w_total, rows.start, rows.stop, slices.stop,
            cols.start, cols.stop, *steps, fill)
    size = int(np.prod(memory_shape))
    kernel = defs.requantize_d32

    def run(src: np.ndarray) -> np.ndarray:
        out = np.empty(size, np.uint8)
        kernel(src, out, *args)
        return out

    return run


def requantize_d32_lut_pass(memory_shape: tuple[int, ...], written: tuple[slice, slice, slice],
                            tables: np.ndarray, fill: int
                            ) -> Callable[[np.ndarray], np.ndarray] | None:
    """:func:`requantize_d32_pass` with the step as byte tables: ``tables`` (512 uint8) maps a
    code at an even memory offset through its first 256 bytes, at an odd one through its
    last 256; None where the compiled kernels are off or this CPU has no AVX-512 VBMI (the
    arithmetic pass is then the faster). The written columns must be whole 64-byte vectors
    (the HVX loop's are whole 128-byte ones)."""
    defs = _lut_defs()
    if defs is None or (written[2].stop - written[2].start) % 2:
        return None
    batches, h_total, n_slices, w_total, _ = memory_shape
    rows, slices, cols = written
    lut = np.ascontiguousarray(tables, np.uint8)
    two = int(not np.array_equal(lut[:256], lut[256:]))
    args = (batches, h_total, n_slices, w_total, rows.start, rows.stop, slices.stop,
            cols.start, cols.stop, lut, two, fill)
    size = int(np.prod(memory_shape))
    kernel = defs.requantize_d32_lut
    spare = SpareMemories()
    unfilled = (*args[:-1], -1)

    def run(src: np.ndarray) -> np.ndarray:
        # a memory given out before keeps its fill bytes: only the written region is
        # computed into it (the fill is most of a small layer's memory)
        out = spare.take()
        if out is not None:
            kernel(src, out, *unfilled)
            return out
        out = np.empty(size, np.uint8)
        kernel(src, out, *args)
        spare.keep(out)
        return out

    return run


def addsub_d32_pass(a: D32Geometry, b: D32Geometry, out: D32Geometry, fill: int
                    ) -> Callable[..., tuple[np.ndarray, int, int]] | None:
    """A function (a memory, b memory, a_scale, b_scale, offset, rsh) -> (output memory,
    min t, max t) of the add/subtract's normal mode for these geometries (a and b of the
    same logical shape; the output with a's height and width padding, no depth-before
    padding); None where the compiled kernels are off or there is no element."""
    defs = _defs()
    if defs is None or not all(a.shape) or a.shape != b.shape:
        return None
    batches, height, width, depth = a.shape
    pa, pb = a.padding, b.padding
    geometry = (batches, height, width, depth,
                pa.h_before, pa.w_before, pa.d_before, a.batch_stride, a.row_stride,
                a.d32_stride, pb.h_before, pb.w_before, pb.d_before, b.batch_stride,
                b.row_stride, b.d32_stride, out.batch_stride, out.row_stride, out.d32_stride)
    size = out.elements
    kernel = defs.addsub_d32
    spare = SpareMemories()

    def run(a_mem: np.ndarray, b_mem: np.ndarray, a_scale: int, b_scale: int, offset: int,
            rsh: int) -> tuple[np.ndarray, int, int]:
        # a memory given out before keeps its fill bytes: the pass writes the elements and
        # the lanes past the depth only
        y = spare.take()
        fresh = y is None
        if y is None:
            y = np.empty(size, np.uint8)
        bounds = np.empty(2, np.int64)
        kernel(a_mem, b_mem, y, *geometry, a_scale, b_scale, offset, rsh, fill, int(fresh),
               bounds)
        if fresh:
            spare.keep(y)
        return y, int(bounds[0]), int(bounds[1])

    return run


__all__ = ["RequantizeSteps", "addsub_d32_pass", "requantize_d32_lut_pass", "requantize_d32_pass"]
