"""The numba kernel behind :func:`d32_elementwise.requantize_d32_lut_pass`: Requantize_8to8_d32
as a byte table over the d32 memory (imported, and so compiled or loaded from numba's disk
cache, on first use).

A byte-to-byte map costs the arithmetic pass (``d32_elementwise_defs.requantize_d32``) about
ten vector instructions per 16 bytes in 64-bit lanes (numba widens int32 products); a
256-entry table is two AVX-512 VBMI ``vpermi2b`` lookups and a select per 64 bytes. The table
itself is the op's own lane arithmetic on the 256 codes at each lane parity (the caller makes
it), so the bytes are the arithmetic's by construction.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_OPTS = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}
_I64 = types.int64


def _arr(readonly: bool) -> types.Array:
    return types.Array(types.uint8, 1, "C", readonly=readonly)


def vbmi_native() -> bool:
    """Whether the code numba makes here has AVX-512 VBMI's ``vpermi2b``: numba compiles for
    this host unless told a CPU (NUMBA_CPU_NAME / NUMBA_CPU_FEATURES), then a byte loop."""
    import llvmlite.binding as llvm
    from numba.core import config

    if config.CPU_NAME or config.CPU_FEATURES:
        return False
    try:
        return bool(llvm.get_host_cpu_features().get("avx512vbmi"))
    except RuntimeError:
        return False


@intrinsic
def lut_run(typingctx, src, at, count, lut, two, out):  # pragma: no cover - compiled
    # out[at + i] = lut[src[at + i]] for i < count, or lut[256 + src[at + i]] at odd i when
    # ``two``; count a multiple of 64 (whole vectors), lut 512 bytes
    sig = types.void(src, at, count, lut, two, out)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return _lut_run_ir(context, builder, signature, args)

    return sig, codegen


def _lut_run_ir(context, builder, signature, args):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    from numba.core import cgutils

    src, at, count, lut, two, out = args
    ptr = {i: context.make_array(signature.args[i])(context, builder, args[i]).data
           for i in (0, 3, 5)}
    i1, i8, i64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
    vb = ir.VectorType(i8, 64)
    is_two = builder.icmp_signed("!=", two, ir.Constant(two.type, 0))
    if not vbmi_native():
        with cgutils.for_range(builder, count) as loop:
            i = builder.add(at, loop.index)
            code = builder.zext(builder.load(builder.gep(ptr[0], [i])), i64)
            odd = builder.and_(builder.zext(is_two, i64), builder.and_(loop.index, i64(1)))
            entry = builder.add(code, builder.shl(odd, i64(8)))
            builder.store(builder.load(builder.gep(ptr[3], [entry])), builder.gep(ptr[5], [i]))
        return context.get_dummy_value()
    perm = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vb, [vb, vb, vb]),
                                          "llvm.x86.avx512.vpermi2var.qi.512")

    def quarter(k):  # type: ignore[no-untyped-def]
        return builder.load(builder.bitcast(builder.gep(ptr[3], [i64(64 * k)]), vb.as_pointer()),
                            align=1)

    def look(codes, tables):  # type: ignore[no-untyped-def]  # codes 0..127 / 128..255
        low = builder.call(perm, [tables[0], codes, tables[1]])
        high = builder.call(perm, [tables[2], codes, tables[3]])
        return builder.select(builder.icmp_signed("<", codes, ir.Constant(vb, [0] * 64)),
                              high, low)

    even = [quarter(k) for k in range(4)]
    odd_lanes = ir.Constant(ir.VectorType(i1, 64), [k & 1 for k in range(64)])
    def lanes(odd):  # type: ignore[no-untyped-def]  # the loop, with odd lanes' tables or not
        with cgutils.for_range(builder, builder.udiv(count, i64(64))) as loop:
            i = builder.add(at, builder.mul(loop.index, i64(64)))
            codes = builder.load(builder.bitcast(builder.gep(ptr[0], [i]), vb.as_pointer()),
                                 align=1)
            got = look(codes, even)
            if odd is not None:
                got = builder.select(odd_lanes, look(codes, odd), got)
            builder.store(got, builder.bitcast(builder.gep(ptr[5], [i]), vb.as_pointer()),
                          align=1)

    with builder.if_else(is_two) as (yes, no):
        with yes:
            lanes([quarter(k) for k in range(4, 8)])
        with no:
            lanes(None)
    return context.get_dummy_value()


@njit([types.void(_arr(ro), _arr(False), *([_I64] * 9), _arr(False), _I64, _I64)
       for ro in (False, True)], **_OPTS)
def requantize_d32_lut(src, out, batches, h_total, n_slices, w_total, row0, row1, nd32, col0,
                       col1, lut, two, fill):  # pragma: no cover - compiled
    """``d32_elementwise_defs.requantize_d32`` with the step as a table: in the data rows
    ``row0:row1`` and the slices ``:nd32``, columns ``col0:col1`` are lut[c] at an even
    memory offset and lut[256 + c] (``two``) or lut[c] at an odd one; every other byte is
    ``fill``, or left as it is for a fill below 0 (a memory that holds this layout's fill
    there already). Precondition: ``src`` holds the whole memory, ``out`` has its size,
    (col1 - col0) is a multiple of 2 (whole 64-byte vectors), lut has 512 bytes."""
    seg = w_total * 32
    f = np.uint8(fill & 255)
    filled = fill >= 0
    for b in range(batches):
        for h in range(h_total):
            data_row = row0 <= h < row1
            for k in range(n_slices):
                base = ((b * h_total + h) * n_slices + k) * seg
                if not data_row or k >= nd32:
                    if filled:
                        out[base:base + seg] = f
                    continue
                start, stop = base + col0 * 32, base + col1 * 32
                if filled:
                    out[base:start] = f
                    out[stop:base + seg] = f
                # every row segment starts at an even offset (strides are multiples of 32)
                lut_run(src, start, stop - start, lut, two, out)
