"""Compile (or load from disk) every compiled kernel of the engine now.

numba compiles a kernel without a signature at its first call for each argument type, and
keeps the machine code on disk; the LLVM GEMM kernel does the same under the user's cache.
Running the bundled examples (``hexscope --warm-up``) reaches only the kernels their ops
use: a graph with a depthwise Supernode, a softmax, a mean or a float Winograd convolution,
or the first Compare, then compiled for seconds at its first use (a first F10 of 20 s on a
10,000-node graph, issue 32). Each entry of :data:`WARMERS` calls one kernel module through
the public function the ops call, on a tiny input of the types they pass, so the cached
specialisations are the ones a run uses. ``tests/engine/test_kernel_warm_up.py`` checks
that every module that compiles a kernel has an entry.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _compiled_defs() -> None:
    from hexscope.engine.ops.kernels import compiled

    compiled.load()


def _winograd_defs() -> None:
    from hexscope.engine.ops.kernels import compiled

    if compiled.enabled():
        # typed signatures: compiled (or loaded) when the module is imported
        from hexscope.engine.ops.kernels import winograd_defs  # noqa: F401


def _igemm() -> None:
    from hexscope.engine.ops.kernels import igemm

    igemm.available()
    igemm.available8()


def _depthwise() -> None:
    from hexscope.engine.ops.kernels.depthwise import depthwise_sums

    x = np.arange(18, dtype=np.uint8).reshape(1, 3, 3, 2)
    w = np.ones((2, 2, 2, 1), np.uint8)
    for zx in (3, 300):              # the narrow loop (codes 0..255) and the general one
        depthwise_sums(x, w, zx, 4, 1, 1, 0, 0, 2, 2)


def _dwise_requant() -> None:
    from hexscope.engine.ops.kernels.dwise_requant import dwise_requantize

    dwise_requantize(np.zeros((2, 3), np.int32), np.zeros(3, np.int32),
                     np.ones(3, np.uint32), 1)


def _dwise_fused() -> None:
    from hexscope.engine.d32 import D32Geometry, D32Padding
    from hexscope.engine.dtypes import DType
    from hexscope.engine.ops.conv.d32_input_reads import Zaps
    from hexscope.engine.ops.kernels.dwise_fused import chunk_of, lane_terms, prepare_dwise_d32
    from hexscope.engine.tensor import Tensor

    pad = D32Padding(4, 4, 4, 1, 0, 30)
    x = Tensor.from_array(np.zeros((1, 2, 3, 2), np.uint8), DType.QUINT8).to_d32(pad)
    run = prepare_dwise_d32(x, Zaps(1, 1, 4, 1), (-1, 4), (-1, 5), np.zeros((3, 3, 2, 1),
                            np.uint8), 0, (1, 1), (2, 3), D32Geometry((1, 2, 3, 2),
                                                                      pad).memory_shape,
                            (4, 4), 1)
    terms = lane_terms(np.zeros(2, np.int64), np.zeros(2, np.int64), 0, np.ones(2), 32,
                       chunk_of(3))
    if run is not None and terms is not None:
        run(x.raw, *terms, 0, 0, 0, 0)


def _normalize_loops() -> None:
    from hexscope.engine.ops.kernels.normalize_loops import loops
    from hexscope.engine.ops.kernels.softmax_hvx import softmax_hvx
    from hexscope.engine.ops.normalize.l2norm import l2_codes
    from hexscope.engine.ops.normalize.softmax import softmax_codes
    from hexscope.engine.ops.reduce.mean import requantize_sums

    codes = np.arange(8, dtype=np.uint8).reshape(2, 4)
    softmax_codes(codes, np.float32(0.05))
    softmax_hvx(codes, 3, 900, 3, 2)         # the device form's fixed point (flat and d32)
    l2_codes(codes, 3, 1)
    for wide in (np.int32, np.int64):    # the mean sums in int32, or int64 on large inputs
        requantize_sums(np.arange(4, dtype=wide), 4, 1, 1 << 20, 3, 2)
    compiled = loops()
    if compiled is not None:            # a global average pool's sums (read-only: a trace's)
        for writable in (True, False):
            pixels = np.arange(8, dtype=np.uint8).reshape(1, 2, 2, 2)
            pixels.flags.writeable = writable
            compiled.sum_hw(pixels, np.zeros((1, 2), np.int64))


def _d32_layout() -> None:
    from hexscope.engine.dtypes import DType
    from hexscope.engine.tensor import Tensor

    for depth in (8, 3):        # whole 8-byte words, and single bytes
        codes = np.arange(2 * 3 * depth, dtype=np.uint8).reshape(1, 2, 3, depth)
        Tensor((1, 2, 3, depth), DType.QUINT8, codes.reshape(-1)).to_d32().array  # noqa: B018


def _supernode_requant() -> None:
    from hexscope.engine.ops.kernels.supernode_requant import (
        requantize_into_d32,
        supernode_requantize,
    )

    sums = np.arange(2 * 32, dtype=np.int32).reshape(1, 1, 2, 32)
    ones = np.ones(32, np.int64)
    supernode_requantize(sums.reshape(-1, 32), ones, ones, 1, 1)
    mem = np.zeros((1, 9, 1, 8, 32), np.uint8)         # 1 row + 8, 2 columns + 4 left, 2 right
    requantize_into_d32(sums, 1, ones, ones, 1, False, True, mem)


def _gemm_requant() -> None:
    from hexscope.engine.ops.kernels.gemm import Rhs
    from hexscope.engine.ops.kernels.gemm_requant import prepared_gemm_requant

    rhs = Rhs.from_codes(np.arange(8, dtype=np.uint8).reshape(4, 2))
    run = prepared_gemm_requant(rhs, 3, (1, 1, 4), 3, 32)       # None without VNNI or numba
    if run is not None:
        ones = np.ones(32, np.int64)
        mem = np.zeros((1, 9, 1, 8, 32), np.uint8)
        run(np.zeros((4, 4), np.int8), rhs.offsets(0, 3), ones, ones, 1, False, True, mem, 0)


def _conv_d32() -> None:
    from hexscope.engine.ops.kernels.conv_d32 import Windows, prepared_conv_d32

    # one window of one quad inside the data, one gathered (read as zx)
    windows = Windows(np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros((1, 4), np.int64),
                      np.ones((1, 4), np.bool_), np.array([0, 32], np.int64), (1, 0))
    mem_shape = (1, 9, 1, 6, 32)
    run = prepared_conv_d32(np.full((1, 3, 2), 128, np.uint8), 128, 32, 1, windows, 64,
                            mem_shape)
    if run is None:                     # no VNNI, IFMA or numba here
        return
    raw = np.zeros(64, np.uint8)
    for writable in (True, False):      # a run's input is read-only, a test's may not be
        raw.flags.writeable = writable
        run(raw, 3, np.zeros(32, np.int64), np.ones(32, np.int64), 1, False,
            np.zeros(mem_shape, np.uint8), 0)


def _d32_elementwise() -> None:
    from hexscope.engine.d32 import D32Geometry, D32Padding
    from hexscope.engine.ops.kernels.d32_elementwise import addsub_d32_pass, requantize_d32_pass

    # typed signatures (writable and read-only inputs): all compiled or loaded at the import
    g = D32Geometry((1, 1, 2, 3), D32Padding(0, 0, 4, 2, 0, 29))
    mem = np.zeros(g.elements, np.uint8)
    run = requantize_d32_pass(g.memory_shape, (slice(0, 1), slice(0, 1), slice(4, 8)),
                              (0, 1, 1, 0, 0, 0), 0)
    add = addsub_d32_pass(g, g, g, 0)
    if run is not None and add is not None:
        run(mem)
        add(mem, mem, 1, 1, 0, 0)


def _d32_lut() -> None:
    from hexscope.engine.ops.kernels import d32_lut_defs

    # typed signatures: compiled or loaded at the import; on a CPU without VBMI the pass is
    # not used, but the module (and its byte loop) loads all the same
    mem = np.zeros(128, np.uint8)
    for writable in (True, False):
        mem.flags.writeable = writable
        d32_lut_defs.requantize_d32_lut(mem, np.empty(128, np.uint8), 1, 1, 1, 4, 0, 1, 1, 0,
                                        4, np.zeros(512, np.uint8), 0, 0)


def _metrics_pass() -> None:
    from hexscope.engine.analysis import metrics_pass

    # every pair the metrics can pass (metrics._metrics): float32 arithmetic only for a
    # float32 A against float32 values or quint8 codes; A as qint32 codes against any codes
    values = [np.linspace(0, 1, 8, dtype=t) for t in metrics_pass.VALUE_TYPES]
    codes = [np.arange(8, dtype=t) for t in metrics_pass.CODE_TYPES]
    a32 = values[0]
    for a, b in ((a32, a32), (a32, codes[0])):
        metrics_pass.finite_pass(a, b, False, 0.5, 0.0, 1.0)
    for a in values:
        for b in values + codes:
            metrics_pass.finite_pass(a, b, True, 0.5, 0.0, 1.0)
    for c in codes:     # qint32 sums (the only codes read with a scale) against any codes
        metrics_pass.finite_pass(codes[-1], c, True, 1.0, 0.0, 1.0, 0.01)


#: Every module that compiles kernels at run time, and what compiles (or loads) them.
WARMERS: dict[str, Callable[[], None]] = {
    "hexscope.engine.ops.kernels.compiled_defs": _compiled_defs,
    "hexscope.engine.ops.kernels.winograd_defs": _winograd_defs,
    "hexscope.engine.ops.kernels.igemm": _igemm,
    "hexscope.engine.ops.kernels.depthwise_defs": _depthwise,
    "hexscope.engine.ops.kernels.dwise_requant": _dwise_requant,
    "hexscope.engine.ops.kernels.dwise_fused_defs": _dwise_fused,
    "hexscope.engine.ops.kernels.d32_layout": _d32_layout,
    "hexscope.engine.ops.kernels.normalize_defs": _normalize_loops,
    "hexscope.engine.ops.kernels.supernode_requant": _supernode_requant,
    "hexscope.engine.ops.kernels.gemm_requant_defs": _gemm_requant,
    "hexscope.engine.ops.kernels.conv_d32_defs": _conv_d32,
    "hexscope.engine.ops.kernels.d32_elementwise_defs": _d32_elementwise,
    "hexscope.engine.ops.kernels.d32_lut_defs": _d32_lut,
    "hexscope.engine.analysis.metrics_pass": _metrics_pass,
}


def warm_all() -> list[str]:
    """Compile or load every kernel of :data:`WARMERS`; the modules that failed (with why).

    Where numba or llvmlite is missing or cannot compile, the wrappers take their numpy
    paths and nothing fails."""
    failed: list[str] = []
    for module, warm in WARMERS.items():
        try:
            warm()
        except Exception as exc:  # noqa: BLE001 - one module's failure must not stop the rest
            failed.append(f"{module}: {exc}")
    return failed


__all__ = ["WARMERS", "warm_all"]
