"""A d32 Supernode's first try in one compiled call that reads the d32 input where it lies:
``ivnni_d32`` (:mod:`igemm_d32_ir`) sums the data codes against the filter less its zero code
and requantizes in its register tiles into the d32 output memory.

:mod:`gemm_requant`'s pass unpacks each block of input rows into a centred copy (or gathers
each output row's windows), sums each row for the GEMM's row term, builds a table of output
offsets, and requantizes with 64-bit products; here every table the node's geometry fixes is
made once (each window's input and output offsets, each quad's offset in a window, the
filter packed as signed w - zf) and a run computes only the per-channel terms
(:func:`conv_d32_defs.channel_terms`) and gathers the windows that leave the data. It serves
a filter whose codes all lie within [zf - 128, zf + 127] (the int8 weights TFLite's delegate
passes, zero 128) and recips below 2**31 (``fill_info_minmax_basics`` clamps them to
0x7FFFFFFF); else None and the caller keeps its other paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from hexscope.engine.ops.kernels import compiled, igemm

#: Bytes of input codes per chunk of windows, which stays in L2 while every output slice
#: passes over it.
CHUNK_BYTES = 160 * 1024

#: The entries of the driver's ``params`` (int64, in this order: conv_d32_defs reads them
#: by index): the kernel's address, quads a window, column blocks, output slice bytes,
#: windows a chunk, the packed filter's address, the windows inside the data and how many
#: of them come first that count in the extremes, the gathered ones and the same of them,
#: the addresses of the tables (tapoff, the gathered windows' 4q offsets, inoff with the
#: gathered windows' offsets in the buffer after the inside ones', outoff), the zx for which
#: the per-channel terms are those of the folded and recip the driver keeps (-2**62: none),
#: and the zx byte the buffer holds (-1: none); the last two the driver's.
PARAMS = ("fn", "nq", "nb", "oslice", "mc", "b", "n_in", "n_in_counted", "n_out",
          "n_out_counted", "tapoff", "tapbuf", "inoff", "outoff", "terms_zx", "buf_zx")

D32Run = Callable[[np.ndarray, int, np.ndarray, np.ndarray, int, bool, np.ndarray, int],
                  tuple[int, int] | None]


class Windows(NamedTuple):
    """Where a convolution's windows are, for ``ivnni_d32``: each window a run of ``nq``
    quads (4 codes each).

    ``tapoff`` (nq,): quad q's byte offset from a window's start in the d32 memory;
    ``inoff`` (n_in,): the start of each window inside the data; ``gather`` (n_out, 4 nq)
    byte offsets in the memory of the other windows' codes, ``gather_zx`` (the same shape)
    where they read zx instead; ``outoff`` (n_in + n_out,): each window's output pixel's
    byte offset in the d32 output memory (its first slice); ``counted`` = (of the inside
    windows, how many come first that count in the extremes; the same of the gathered)."""

    tapoff: np.ndarray
    inoff: np.ndarray
    gather: np.ndarray
    gather_zx: np.ndarray
    outoff: np.ndarray
    counted: tuple[int, int]


def _build() -> Callable[..., Any]:
    from hexscope.engine.ops.kernels.conv_d32_defs import conv_d32

    return conv_d32  # type: ignore[no-any-return]


_driver = compiled.compile_once(_build)


def signed_filter(codes: np.ndarray, zf: int, channels: int, depth: int, quads: int
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """The (taps, D, N) filter codes as ``ivnni_d32`` reads them and their column sums: w -
    zf as int8 in blocks of 16 channels, (channels / 16, taps x quads, 16, 4), each tap's
    ``quads`` quads holding its D channels then zeros, zero past N; and sum (w - zf) per
    channel (int64, ``channels``). None when a code lies outside [zf - 128, zf + 127]."""
    taps, d, n = codes.shape
    values = codes.astype(np.int16) - np.int16(zf)
    if values.size and (values.min() < -128 or values.max() > 127):
        return None
    padded = np.zeros((taps, 4 * quads, channels), np.int8)
    padded[:, :d, :n] = values
    nq = taps * quads
    blocks = np.ascontiguousarray(padded.reshape(nq, 4, channels // 16, 16)
                                  .transpose(2, 0, 3, 1))
    blocks.flags.writeable = False
    colsum = np.zeros(channels, np.int64)
    colsum[:n] = values.reshape(-1, n).sum(0, dtype=np.int64)
    return blocks, colsum


def prepared_conv_d32(codes: np.ndarray, zf: int, channels: int, quads: int,
                      windows: Windows, raw_size: int, mem_shape: tuple[int, ...]
                      ) -> D32Run | None:
    """The first try of a Supernode with filter ``codes`` (taps, D, N), zero ``zf``, output
    depth ``channels`` (N rounded up to 32), ``quads`` quads a tap (D <= 4 quads), over the
    windows ``windows`` of a d32 input of ``raw_size`` bytes: a function of (raw, zx,
    folded, recip, shift, minmax_all, mem, fill) that writes every window's codes into the
    d32 output memory ``mem`` (``mem_shape``) as
    :func:`supernode_requant.requantize_into_d32` does (the extremes of t, of the counted
    windows or with ``minmax_all`` every one), ``fill`` (0..255; -1: none) into its 4 rows
    above and below and 4 columns left, and returns the run's range in output codes (min
    and max of (lo x recip + 2**30) >> 31 over the lanes), or None, nothing written, for
    recips it does not serve. None where it does not apply here (no VNNI, IFMA or numba; a
    filter past a signed byte of zf)."""
    fn, driver = igemm.kernel_address_d32(), _driver()
    taps, depth, n = codes.shape
    nq = taps * quads
    if not fn or driver is None or channels % 32 or channels < n or not (n and depth) \
            or depth > 4 * quads or windows.tapoff.shape != (nq,):
        return None
    made = signed_filter(codes, zf, channels, depth, quads)
    if made is None:
        return None
    blocks, colsum = made
    n_in, n_out = windows.inoff.size, windows.gather.shape[0]
    buf = np.zeros(max(1, n_out * 4 * nq), np.uint8)
    # the kernel's window offsets: the inside windows', then the gathered ones' in buf
    tables64 = (windows.tapoff, 4 * np.arange(nq),
                np.concatenate([windows.inoff, np.arange(n_out) * 4 * nq]), windows.outoff)
    if any(t.size and (t.min() < 0 or t.max() >= 2**31) for t in tables64):
        return None         # the kernel reads int32 offsets (half the bytes of int64)
    tables = tuple(np.ascontiguousarray(t, np.int32) for t in tables64)
    # the kernel reads and writes by address: every read within the input, every write
    # within the output memory, or no kernel
    last_out = int(np.prod(mem_shape)) - ((channels // 32 - 1) * mem_shape[3] * 32 + 32)
    if n_in and int(windows.inoff.max()) + int(windows.tapoff.max()) + 4 > raw_size \
            or windows.gather.size and int(windows.gather.max()) >= raw_size \
            or windows.outoff.size and int(windows.outoff.max()) > last_out \
            or windows.outoff.size != n_in + n_out:
        raise ValueError(f"windows that reach past the input's {raw_size} bytes or the output "
                         f"memory {mem_shape}")
    mc = max(6, CHUNK_BYTES // (4 * nq) // 6 * 6)
    values = {"fn": fn, "nq": nq, "nb": channels // 16, "oslice": mem_shape[3] * 32, "mc": mc,
              "b": blocks.ctypes.data, "n_in": n_in, "n_in_counted": windows.counted[0],
              "n_out": n_out, "n_out_counted": windows.counted[1],
              "tapoff": tables[0].ctypes.data, "tapbuf": tables[1].ctypes.data,
              "inoff": tables[2].ctypes.data, "outoff": tables[3].ctypes.data,
              "terms_zx": -(2**62), "buf_zx": -1}
    params = np.array([values[name] for name in PARAMS], np.int64)
    # per channel: folded, recip (this run's, copied in by the driver), colsum, 2 recip; the
    # kernel's fb, tlo, thi and extremes
    chan64 = np.zeros((4, channels), np.int64)
    chan64[2] = colsum
    chan32 = np.zeros((5, channels), np.int32)
    # the gathered bytes read from the memory: where in buf, where in raw (the others hold
    # zx, written when it moves)
    read = ~windows.gather_zx.astype(np.bool_).reshape(-1)
    gather_to = np.flatnonzero(read).astype(np.int64)
    gather_from = windows.gather.astype(np.int64).reshape(-1)[read]

    u8 = np.dtype(np.uint8)
    strides = np.empty(mem_shape, np.uint8).strides if all(mem_shape) else None

    def run(raw: np.ndarray, zx: int, folded: np.ndarray, recip: np.ndarray, shift: int,
            minmax_all: bool, mem: np.ndarray, fill: int) -> tuple[int, int] | None:
        # (checks of few steps: a node calls this at every run)
        if type(raw) is not np.ndarray or raw.dtype is not u8 or raw.ndim != 1 \
                or raw.size < raw_size:
            raise ValueError(f"{raw.size} bytes are not the input's {raw_size}")
        if type(mem) is not np.ndarray or mem.shape != mem_shape or mem.dtype is not u8 \
                or mem.strides != strides:
            # the kernel writes by address: refuse a memory it would overrun
            raise ValueError(f"the output memory {mem.shape} is not a C-contiguous uint8 "
                             f"d32 memory of {mem_shape}")
        if folded.shape != (channels,) or recip.shape != (channels,) or not 0 <= shift <= 31:
            raise ValueError(f"folded and recip need {channels} values, the shift 0..31")
        ok, low, high = driver(params, raw, mem, chan64, chan32, gather_to, gather_from, buf,
                               np.asarray(folded, np.int64), np.asarray(recip, np.int64),
                               int(zx), int(shift), bool(minmax_all), int(fill))
        return (low, high) if ok else None

    # the kernel reads these by address
    run.keep = (blocks, tables)  # type: ignore[attr-defined]
    # for a caller whose own keys stand for run's checks (supernode_fast): the driver and
    # its arguments before raw and after mem, up to folded
    run.bound = (driver, params, chan64, chan32, gather_to, gather_from,  # type: ignore[attr-defined]
                 buf)
    return run


__all__ = ["CHUNK_BYTES", "PARAMS", "Windows", "prepared_conv_d32", "signed_filter"]
