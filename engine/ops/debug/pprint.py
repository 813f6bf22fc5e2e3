"""PPrint ops: log every element of a tensor (graph spec §4.11-§4.13, ``op_pprint.c``).

:func:`pprint_lines` gives the text exactly as hexagon_nn logs it (message part of each log
entry, one string per entry), so views can export it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from hexscope.engine.dtypes import Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, require_d32, scalar_i
from hexscope.engine.ops.debug.cfmt import c_f, c_ptr, c_x
from hexscope.engine.ops.reference import NoReference
from hexscope.engine.ops.registry import Category, Port, op, shared_doc
from hexscope.engine.tensor import Tensor

#: Element formats of the five ops, by op name.
_KINDS: dict[str, tuple[str, int]] = {
    "PPrint_8": ("u8", 1), "PPrint_32": ("u32", 4), "PPrint_f": ("f", 4),
    "PPrint_8_d32": ("u8", 1), "PPrintWithPadding_8_d32": ("u8", 1),
}
_FORMAT: dict[str, Callable[[object], str]] = {
    "u8": lambda v: "0x" + c_x(int(v), 2),   # type: ignore[call-overload]
    "u32": lambda v: "0x" + c_x(int(v), 8),  # type: ignore[call-overload]
    "f": c_f,                                # type: ignore[dict-item]
}
_DIMS = "BHWD"

#: Printing ops have no outputs, so nothing to compare.
_PRINTS = NoReference("prints a tensor to the log; no outputs")


def limit_range(lo: int, hi: int, start: int | None, end: int | None) -> tuple[int, int]:
    """``set_optional_dim_limits``: the corrected [start, end) on an axis of extent [lo, hi).

    A given start is clamped into the extent as ``max(lo, min(hi - 1, start))``; a given end
    becomes ``max(start + 1, min(end, hi))``; an absent start is 0 (not clamped), an absent end
    is start + 1. The range is never empty: on an axis of extent 0 it is [lo, lo + 1), one
    index outside the axis (the clamp order is ``op_pprint.c``'s; graph spec §4.11 leaves it
    open for an empty extent).
    """
    first = 0 if start is None else max(lo, min(hi - 1, start))
    last = first + 1 if end is None else max(first + 1, min(end, hi))
    return first, last


def _extents(tensor: Tensor, padded: bool) -> list[tuple[int, int]]:
    b, h, w, d = tensor.shape
    if not padded:
        return [(0, b), (0, h), (0, w), (0, d)]
    p = tensor.padding
    return [(0, b), (-p.h_before, h + p.h_after), (-p.w_before, w + p.w_after),
            (-p.d_before, d + p.d_after)]


def _header(tensor: Tensor, d32: bool) -> str:
    b, h, w, d = tensor.shape
    if not d32:
        return f"bhwd = {b},{h},{w},{d}"
    p = tensor.padding
    return (f"bhwd = {b},{p.h_before}[{h}]{p.h_after},{p.w_before}[{w}]{p.w_after},"
            f"{p.d_before}[{d}]{p.d_after}")


def _plain_values(tensor: Tensor, kind: str, size: int) -> np.ndarray:
    """Elements at plain offsets of the raw bytes, whatever the tensor's real layout."""
    b, h, w, d = tensor.shape
    need = b * h * w * d * size
    raw = tensor.raw
    if raw.size < need:
        raise KernelError(f"PPrint reads {need} bytes as a plain {b}x{h}x{w}x{d} tensor of "
                          f"{size}-byte elements, but {tensor.describe()} holds {raw.size}")
    np_type = {"u8": np.uint8, "u32": np.uint32, "f": np.float32}[kind]
    return raw[:need].view(np_type).reshape(b, h, w, d)


def _unreadable(kind: str, ranges: list[tuple[int, int]], offset: tuple[int, ...],
                shape: tuple[int, ...]) -> str | None:
    """Why the values cannot be printed: a limit on an empty axis reaches outside the array."""
    count = int(np.prod([hi - lo for lo, hi in ranges]))
    outside = [axis for axis, (lo, hi) in enumerate(ranges)
               if lo + offset[axis] < 0 or hi + offset[axis] > shape[axis]]
    if not count or not outside:
        return None
    first, last = ranges[outside[0]]
    return (f"{kind}: the {_DIMS[outside[0]]} dimension is empty, but the range limit "
            f"[{first}...{last - 1}] still covers index {first}; the device would print "
            f"{count} values read from outside the tensor's buffer (undefined data), so the "
            f"simulator prints none")


def pprint_lines(tensor: Tensor, kind: str = "PPrint_8", dim: int | None = None,
                 start: int | None = None, end: int | None = None,
                 warn: Callable[[str], None] | None = None) -> list[str]:
    """The level-1 log messages a PPrint op writes for ``tensor``, in order.

    Parameters
    ----------
    tensor
        The printed tensor (d32 for the two ``_d32`` kinds).
    kind
        The op name: PPrint_8, PPrint_32, PPrint_f, PPrint_8_d32 or PPrintWithPadding_8_d32.
    dim, start, end
        The optional inputs 1-3: an axis 0..3 (B,H,W,D; other values mean no limit), the
        first index and the end index (exclusive), corrected as :func:`limit_range` says.
    warn
        Called with the reason when the value lines are left out (see Returns).

    Returns
    -------
    list of str
        The header, the optional "reporting only" line, then one line per element. A limit on
        an empty axis still covers one index; when every other axis is non-empty the device
        would print values read from outside the tensor's buffer, and the simulator leaves
        all value lines out instead.
    """
    if kind not in _KINDS:
        raise ValueError(f"unknown PPrint kind {kind!r}; choose one of {', '.join(_KINDS)}")
    fmt, size = _KINDS[kind]
    d32 = kind.endswith("_d32")
    padded = kind == "PPrintWithPadding_8_d32"
    if d32 and tensor.layout is not Layout.D32:
        raise ValueError(f"{kind} prints d32 tensors, got {tensor.describe()}")
    lines = [_header(tensor, d32)]
    ranges = _extents(tensor, padded)
    if dim is not None and 0 <= dim <= 3:
        ranges[dim] = limit_range(*ranges[dim], start, end)
        first, last = ranges[dim]
        lines.append(f"reporting only on {_DIMS[dim]} dimension, range limit to "
                     f"[{first}...{last - 1}]")
    if d32:
        values = tensor.padded_array()
        p = tensor.padding
        offset = (0, p.h_before, p.w_before, p.d_before)
    else:
        values = _plain_values(tensor, fmt, size)
        offset = (0, 0, 0, 0)
    reason = _unreadable(kind, ranges, offset, values.shape)
    if reason is not None:
        if warn is not None:
            warn(reason)
        return lines
    to_text = _FORMAT[fmt]
    for b, h, w, d in itertools.product(*(range(lo, hi) for lo, hi in ranges)):
        value = values[b + offset[0], h + offset[1], w + offset[2], d + offset[3]]
        lines.append(f"[{b},{h},{w},{d}]: {to_text(value)}")
    return lines


def _limits(extra: tuple[Tensor, ...]) -> tuple[int | None, int | None, int | None]:
    values = [scalar_i(t) for t in extra]
    return tuple(values + [None] * (3 - len(values)))  # type: ignore[return-value]


def _run(ctx: KernelContext, kind: str, x: Tensor, extra: tuple[Tensor, ...]) -> tuple[()]:
    ctx.log(2, f"pprinting node {c_ptr(ctx.node_id)} id {ctx.node_id:x}")
    if ctx.debug_level < 1:
        return ()     # matches device: logmsg(1, ...) is not even formatted at level 0
    if kind.endswith("_d32"):
        require_d32(x)
    # Warn after the header lines: the device would log them before the unreadable values.
    reasons: list[str] = []
    for line in pprint_lines(x, kind, *_limits(extra), warn=reasons.append):
        ctx.log(1, line)
    for reason in reasons:
        ctx.warn(reason)
    return ()


_LIMIT_DOC = """
    Optional int32 inputs 1-3 limit one axis: axis 0..3 (B,H,W,D; other values: no limit),
    start (default 0), exclusive end (default start + 1); the start is clamped into the axis
    and the end to ``max(start + 1, min(end, extent))`` (graph spec §4.11-4.13).

    A limit on an axis of extent 0 still covers one index, [lo, lo + 1), logged as
    ``[lo...lo]``; a d32 tensor's padding after the axis, where there is some, prints as on the
    device. Where that index lies outside the tensor's buffer and every other axis is
    non-empty, the device prints undefined data; the simulator logs the header and limit
    lines, no value lines, and a warning instead (the simulator's choice; device behaviour
    unconfirmed).
"""


def _limit_ports() -> tuple[Port, ...]:
    return (Port("dim", None, optional=True), Port("start", None, optional=True),
            Port("end", None, optional=True))




@op("PPrint_8", Category.PRINT,
    reference=_PRINTS, inputs=(Port("x", None, layout=None), *_limit_ports()))
@shared_doc(_LIMIT_DOC)
def pprint_8(ctx: KernelContext, x: Tensor, *extra: Tensor) -> tuple[()]:
    """Logs each byte of a plain tensor as ``[b,h,w,d]: 0x<2 hex digits>`` (debug level 1).

    The bytes are read at plain offsets; a d32 tensor therefore prints wrong bytes, as on the
    device (no layout check).
    """
    return _run(ctx, "PPrint_8", x, extra)


@op("PPrint_32", Category.PRINT,
    reference=_PRINTS, inputs=(Port("x", None, layout=None), *_limit_ports()))
@shared_doc(_LIMIT_DOC)
def pprint_32(ctx: KernelContext, x: Tensor, *extra: Tensor) -> tuple[()]:
    """Logs each 32-bit word of a plain tensor as ``[b,h,w,d]: 0x<8 hex digits>`` (level 1).

    Negative int32 values show in two's complement. The simulator raises when the tensor's
    buffer is shorter than the 4-byte elements its shape implies (the library reads beyond).
    """
    return _run(ctx, "PPrint_32", x, extra)


@op("PPrint_f", Category.PRINT,
    reference=_PRINTS, inputs=(Port("x", None, layout=None), *_limit_ports()))
@shared_doc(_LIMIT_DOC)
def pprint_f(ctx: KernelContext, x: Tensor, *extra: Tensor) -> tuple[()]:
    """Logs each float of a plain tensor as ``[b,h,w,d]: <%f>`` (debug level 1).

    NaN and infinity print as glibc does (``-nan`` for a negative NaN); the DSP's C library
    is unconfirmed (graph spec §7).
    """
    return _run(ctx, "PPrint_f", x, extra)


@op("PPrint_8_d32", Category.PRINT,
    reference=_PRINTS,
    inputs=(Port("x", None, layout=Layout.D32), *_limit_ports()))
@shared_doc(_LIMIT_DOC)
def pprint_8_d32(ctx: KernelContext, x: Tensor, *extra: Tensor) -> tuple[()]:
    """Logs the valid bytes of a d32 tensor as ``[b,h,w,d]: 0x<2 hex digits>`` (level 1).

    The header shows the padding: ``bhwd = B,hb[H]ha,wb[W]wa,db[D]da``.
    """
    return _run(ctx, "PPrint_8_d32", x, extra)


@op("PPrintWithPadding_8_d32", Category.PRINT,
    reference=_PRINTS,
    inputs=(Port("x", None, layout=Layout.D32), *_limit_ports()))
@shared_doc(_LIMIT_DOC)
def pprint_with_padding_8_d32(ctx: KernelContext, x: Tensor, *extra: Tensor) -> tuple[()]:
    """Logs every byte of a d32 tensor, padding included, with negative indices for padding.

    Rows run over [-hb, H+ha), columns over [-wb, W+wa), depth over [-db, D+da).
    """
    return _run(ctx, "PPrintWithPadding_8_d32", x, extra)

