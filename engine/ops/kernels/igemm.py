"""Exact integer GEMM: int16 codes times int16 codes into wrapping int32, by AVX2 ``vpmaddwd``.

The quantized convolution and matrix multiply are int32 sums of products of offset uint8
codes (quantized-ops spec §1.3, §2, §3). Float32 BLAS computes them exactly only in K chunks
(:mod:`gemm`); an integer kernel needs no chunks at all. AVX2's ``vpmaddwd`` multiplies 16
pairs of int16 and adds adjacent products into 8 int32 lanes: 16 multiply-adds per
instruction where a float32 FMA does 8, and this is what onnxruntime's uint8 kernels use too.
The operands here are centred data codes (|x - 128| <= 128, or a padding code) and filter
codes minus a code (|w - z| <= 255), so a pair's sum is below 2 * 255 * 256 < 2**31 and the
lanes add in int32 modulo 2**32, exactly as the device's accumulator wraps (§1.3).

numpy has no integer GEMM that fast, so the kernel is written as LLVM IR with llvmlite (from
PyPI) and compiled for this processor the first time it is needed (a fraction of a second).
Without llvmlite or AVX2, :func:`available` is False and the engine keeps the float32 path;
setting ``HEXSCOPE_GEMM=float`` in the environment does the same (used for A/B runs and
tests).

Layouts. The left-hand side is int16 (M, K) with rows at any stride and contiguous columns.
The right-hand side is packed once per filter (:class:`PackedRhs`): blocks of 16 columns,
each (ceil(K/2), 16, 2), so one k-pair of a block is 64 contiguous bytes; a pair (x[2p],
x[2p+1]) of a row is read as one int32 and broadcast. An odd K ends with the pair (x, 0)
against (w, 0). The kernel adds a per-column int32 ``offsets`` row (the zero-point terms of
:func:`gemm.offset_gemm`) and writes the int32 result; it never reads ``out``. It keeps the
result's min and max as it stores each tile, while the values are still in registers: the
requantize that follows a convolution needs them (:mod:`code_bounds`).

Register tiling: 6 rows by 16 columns, 12 ymm accumulators; the rows are walked in chunks
whose slice of the left-hand side stays in the L2 cache while every column block passes.
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hexscope.engine.ops.kernels import igemm_d32_ir, igemm_ir, object_cache

# the register tile (the IR's shape) and the kernels as IR, by their names here
from hexscope.engine.ops.kernels.igemm_ir import COLS, ROWS
from hexscope.engine.ops.kernels.igemm_ir import ir_module as _ir_module

I16 = npt.NDArray[np.int16]
I32 = npt.NDArray[np.int32]

#: Bytes of the left-hand side walked per row chunk (a share of a 512 KiB L2).
CHUNK_BYTES = 160 * 1024

_ENV = "HEXSCOPE_GEMM"


@dataclass(frozen=True)
class PackedRhs:
    """A right-hand side (K, N) packed for a kernel (module text): int16 values for
    ``igemm``, or uint8 codes for ``ivnni`` (blocks of (ceil(K/4), 16, 4) bytes)."""

    blocks: npt.NDArray[np.int16] | npt.NDArray[np.uint8]
    k: int
    n: int

    @property
    def per_word(self) -> int:
        """Values of K that share one 32-bit lane: 2 (int16) or 4 (uint8)."""
        return 2 if self.blocks.dtype == np.int16 else 4

    def __post_init__(self) -> None:
        # The kernel reads the blocks by address, sized from k and n alone.
        w = 2 if self.blocks.dtype == np.int16 else 4
        shape = (-(-self.n // COLS), -(-self.k // w), COLS, w)
        if self.blocks.dtype not in (np.int16, np.uint8) or self.blocks.shape != shape \
                or not self.blocks.flags.c_contiguous:
            raise ValueError(f"packed blocks must be C-contiguous int16 or uint8 {shape} for "
                             f"K={self.k}, N={self.n}; got {self.blocks.dtype} "
                             f"{self.blocks.shape} (use PackedRhs.pack or pack8)")

    @classmethod
    def pack(cls, values: npt.NDArray[np.integer]) -> PackedRhs:
        """Pack (K, N) integer values that fit int16."""
        return cls._packed(values, np.int16, 2)

    @classmethod
    def pack8(cls, codes: npt.NDArray[np.uint8]) -> PackedRhs:
        """Pack (K, N) uint8 codes for the VNNI kernel."""
        return cls._packed(codes, np.uint8, 4)

    @classmethod
    def _packed(cls, values: npt.NDArray[np.integer], dtype: type, w: int) -> PackedRhs:
        k, n = values.shape
        kw, nb = -(-k // w), -(-n // COLS)
        padded = np.zeros((w * kw, nb * COLS), dtype)
        padded[:k, :n] = values
        blocks = np.ascontiguousarray(padded.reshape(kw, w, nb, COLS).transpose(2, 0, 3, 1))
        blocks.flags.writeable = False
        return cls(blocks, k, n)


def available() -> bool:
    """Whether the integer kernel runs here (llvmlite present, AVX2, not disabled)."""
    return os.environ.get(_ENV, "").lower() != "float" and _kernel() is not None


def available8() -> bool:
    """Whether the VNNI kernel runs here (AVX-512 VNNI, and ``HEXSCOPE_GEMM`` is neither
    ``float`` nor ``int16``)."""
    return os.environ.get(_ENV, "").lower() not in ("float", "int16") \
        and _kernel8() is not None


def kernel8():  # -> the ctypes function, or None
    """The VNNI kernel itself (its arguments as :func:`gemm_into` passes them), for callers
    that set a GEMM of fixed operands up once (:func:`gemm.prepared_gemm8`)."""
    return _kernel8()


def kernel_address8() -> int:
    """The VNNI kernel's address (0 where it does not run here), for compiled callers that
    call it themselves (:mod:`gemm_requant`); valid while the process lives (the engine is
    kept with the kernel)."""
    kernel = _kernel8()
    return 0 if kernel is None else int(ctypes.cast(kernel, ctypes.c_void_p).value or 0)


def kernel_address_rq8() -> int:
    """The requantizing VNNI kernel's address (``ivnni_rq``: igemm_ir's ``_outer`` with
    ``requant``; 0 where the VNNI kernel does not run here), for :mod:`gemm_requant`."""
    kernel = _kernel8()
    return 0 if kernel is None else int(kernel.engine.get_function_address("ivnni_rq"))


def kernel_address_d32() -> int:
    """The address of ``ivnni_d32`` (:mod:`igemm_d32_ir`: the d32 Supernode reading its input
    where it lies), 0 where it was not built here (no AVX-512 IFMA or VBMI, or the VNNI
    kernel off), for :mod:`conv_d32`."""
    kernel = _kernel8()
    if kernel is None or not available8():
        return 0
    return int(kernel.engine.get_function_address("ivnni_d32"))


def gemm_into(out: I32, lhs: I16 | npt.NDArray[np.int8], rhs: PackedRhs, offsets: I32,
              rowterm: I32 | None = None) -> tuple[int, int] | None:
    """``out = lhs @ rhs + offsets (+ rowterm[:, None])`` in int32, wrapping modulo 2**32;
    exact. Returns the result's (min, max), taken as the tiles are stored, or None when it
    is empty.

    ``lhs`` is int16 (M, K) against an int16 ``rhs`` (:meth:`PackedRhs.pack`), or int8
    against uint8 codes (:meth:`PackedRhs.pack8`, the VNNI kernel, which also adds the int32
    ``rowterm`` (M,)); ``out`` int32 (M, N) and writable, ``offsets`` int32 (N,); rows at
    any stride (others are copied). Raises ValueError for other operands, RuntimeError when
    the kernel cannot run here. ``HEXSCOPE_GEMM`` is not read here: callers choose the path
    by the type of their patches (:func:`available`, :func:`available8`).
    """
    eight = lhs.dtype == np.int8
    kernel = _kernel8() if eight else _kernel()
    if kernel is None:
        raise RuntimeError("the integer GEMM kernel is not available on this machine")
    m, k = lhs.shape
    n = rhs.n
    if k != rhs.k or out.shape != (m, n) or offsets.shape != (n,) \
            or (rowterm is not None and rowterm.shape != (m,)):
        raise ValueError(f"shapes differ: lhs {lhs.shape}, rhs ({rhs.k}, {n}), "
                         f"out {out.shape}, offsets {offsets.shape}")
    if lhs.dtype not in (np.int16, np.int8) or rhs.per_word != (4 if eight else 2) \
            or out.dtype != np.int32 or offsets.dtype != np.int32 \
            or (rowterm is not None and (not eight or rowterm.dtype != np.int32)):
        raise ValueError(f"operands must be int16 x int16 or int8 x uint8 into int32 (a row "
                         f"term with int8 only); got {lhs.dtype}, {rhs.blocks.dtype}, "
                         f"{out.dtype}, {offsets.dtype}")
    if not out.flags.writeable:
        # The kernel writes by address, past numpy's own check: refuse before any write.
        raise ValueError("out is read-only")
    if m == 0 or n == 0:
        return None
    size = lhs.dtype.itemsize
    if k and (lhs.strides[1] != size or lhs.strides[0] % size):
        lhs = np.ascontiguousarray(lhs)
    # Every array whose address goes to the kernel is held by a name until the call returns.
    offsets = np.ascontiguousarray(offsets)
    rows = np.zeros(m, np.int32) if rowterm is None else np.ascontiguousarray(rowterm)
    target = out
    # The kernel stores tiles while later ones still read the operands (its pointers are
    # noalias): an out that may share their memory is written through a copy, as is one
    # whose columns are not contiguous.
    if out.strides[1] != 4 or out.strides[0] % 4 \
            or any(np.may_share_memory(out, a) for a in (lhs, offsets, rhs.blocks, rows)):
        target = np.empty((m, n), np.int32)
    nb_full, tail = divmod(n, COLS)
    lda = lhs.strides[0] // size if k else 0
    mc = max(ROWS, CHUNK_BYTES // max(1, size * k) // ROWS * ROWS)
    bounds = np.empty(2 * 8, np.int32)
    bounds[:8], bounds[8:] = _I32.max, _I32.min
    a_ptr, b_ptr, r_ptr = lhs.ctypes.data, rhs.blocks.ctypes.data, rows.ctypes.data
    if nb_full:
        kernel(a_ptr, lda, m, k, b_ptr, nb_full, offsets.ctypes.data, target.ctypes.data,
               target.strides[0] // 4, mc, bounds.ctypes.data, r_ptr)
    lo, hi = int(bounds[:8].min()), int(bounds[8:].max())
    if tail:
        # The kernel writes and reads whole blocks of 16 columns: the last, partial one
        # goes through a scratch buffer, with its offsets padded to 16. Its padding columns
        # would enter the kernel's bounds, so this block's are taken here.
        scratch = np.empty((m, COLS), np.int32)
        off = np.zeros(COLS, np.int32)
        off[:tail] = offsets[nb_full * COLS:]
        kernel(a_ptr, lda, m, k, b_ptr + nb_full * rhs.blocks.strides[0], 1, off.ctypes.data,
               scratch.ctypes.data, COLS, mc, bounds.ctypes.data, r_ptr)
        last = scratch[:, :tail]
        target[:, nb_full * COLS:] = last
        lo, hi = min(lo, int(last.min())), max(hi, int(last.max()))
    if target is not out:
        out[...] = target
    return lo, hi


_I32 = np.iinfo(np.int32)
_LOCK = threading.Lock()
_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                              ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                              ctypes.c_void_p)


def _kernel():  # -> the ctypes function, or None
    """The int16 kernel, compiled once per process by the first caller (callers that come
    while it compiles wait for it); None without llvmlite or AVX2."""
    return _kernels()[0]


def _kernel8():  # -> the ctypes function, or None
    """The VNNI kernel (int8 x uint8), compiled with the int16 one; None without VNNI."""
    return _kernels()[1]


def _kernels() -> tuple[object, object]:
    if not _COMPILED:
        with _LOCK:
            if not _COMPILED:       # not compiled by another thread while this one waited
                _COMPILED.append(_compile())
    return _COMPILED[0]  # type: ignore[return-value]


_COMPILED: list[tuple[object, object]] = []   # empty until the first call, then [(i16, i8)]
_kernel.cache_clear = _COMPILED.clear  # type: ignore[attr-defined]


def _compile() -> tuple[object, object]:
    try:
        import llvmlite.binding as llvm
    except (ImportError, OSError):          # not installed, or its library does not load
        return None, None
    try:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        features = llvm.get_host_cpu_features()
        if not features.get("avx2"):
            return None, None
        vnni = bool(features.get("avx512vnni") and features.get("avx512vl"))
        d32 = vnni and bool(features.get("avx512ifma") and features.get("avx512vbmi"))
        machine = llvm.Target.from_default_triple().create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=features.flatten(), opt=3)
        name = object_cache.key(_source(vnni, d32), llvm.llvm_version_info,
                                 _llvmlite_version(), llvm.get_host_cpu_name(),
                                 features.flatten(), vnni, d32, llvm.get_process_triple())
        cached = object_cache.read(name)
        engine = _engine(llvm, machine, vnni, d32, name, cached)
        if cached is not None and not engine.get_function_address("igemm"):
            engine = _engine(llvm, machine, vnni, d32, name, None)    # an unusable object
    except Exception:  # noqa: BLE001
        # An LLVM that cannot build for this host, or an llvmlite whose API moved: the
        # float32 path still works. (test_the_kernel_runs_where_it_can guards against this
        # hiding a broken kernel on machines that should run it.)
        return None, None
    found = []
    for kernel in ("igemm", "ivnni"):
        if kernel == "ivnni" and not vnni:
            found.append(None)
            continue
        function = _SIGNATURE(engine.get_function_address(kernel))
        # The compiled code lives as long as its engine: keep both together.
        function.engine = engine
        found.append(function)
    return found[0], found[1]


def _engine(llvm, machine, vnni: bool, d32: bool, name: str, cached: bytes | None
            ):  # -> ExecutionEngine
    """The kernels' engine: from the cached object when there is one (an empty module
    then: the object holds every function), else compiled, and the object stored."""
    if cached is not None:
        module = llvm.parse_assembly(f'; ModuleID = "hexscope_igemm"\n'
                                     f'target triple = "{llvm.get_process_triple()}"\n')
    else:
        module = llvm.parse_assembly(str(_ir_module(llvm.get_process_triple(), vnni, d32)))
        module.verify()
        builder = llvm.create_pass_builder(
            machine, llvm.create_pipeline_tuning_options(speed_level=3))
        builder.getModulePassManager().run(module, builder)
    engine = llvm.create_mcjit_compiler(module, machine)
    made: list[bytes] = []
    engine.set_object_cache(lambda _m, obj: made.append(bytes(obj)),
                            lambda _m: cached)
    engine.finalize_object()
    LOADED_FROM_CACHE[:] = [cached is not None]
    if cached is None and made:
        object_cache.write(name, made[0])
    return engine


#: [True] when this process's kernels came from the object cache (for tests and benches).
LOADED_FROM_CACHE: list[bool] = []


def _source(vnni: bool, d32: bool) -> bytes:
    """What the kernels are made from: this module's source, or, where it is not on disk
    (a PyInstaller bundle keeps only bytecode), the IR itself (0.1 s to build)."""
    try:
        return b"".join(Path(m.__file__).read_bytes() for m in (igemm_ir, igemm_d32_ir)) \
            + Path(__file__).read_bytes()
    except OSError:
        import llvmlite.binding as llvm

        return str(_ir_module(llvm.get_process_triple(), vnni, d32)).encode()


def _llvmlite_version() -> str:
    import llvmlite

    return llvmlite.__version__
