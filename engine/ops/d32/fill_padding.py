"""FillPadding_8_d32: overwrite the padding of a d32 tensor with chosen bytes (graph spec §4.19)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, output_fits, require_d32, scalar_i
from hexscope.engine.ops.registry import Category, Port, op
from hexscope.engine.tensor import Tensor

RANDOM = -1
LCG_SEED = 0x827EA91D91924124
LCG_MUL = 6364136223846793005
LCG_INC = 1442695040888963407
_MASK64 = (1 << 64) - 1
_BLOCK = 1024


def _jump_tables() -> tuple[np.ndarray, np.ndarray]:
    """A^k and C*(1 + A + ... + A^(k-1)) mod 2^64 for k < _BLOCK: state k steps ahead is
    A^k * s + C_k, so a whole block of states is one vector multiply-add."""
    mul, inc = [1], [0]
    for _ in range(_BLOCK):
        mul.append(mul[-1] * LCG_MUL & _MASK64)
        inc.append((inc[-1] * LCG_MUL + LCG_INC) & _MASK64)
    return np.array(mul, np.uint64), np.array(inc, np.uint64)


_MUL_K, _INC_K = _jump_tables()


class Lcg:
    """The device's 64-bit generator: outputs ``state >> 32``, then steps the state."""

    def __init__(self, state: int = LCG_SEED) -> None:
        self.state = state

    def draw(self, n: int) -> np.ndarray:
        """The next ``n`` outputs (high 32 bits of the state) as uint32."""
        out = np.empty(n, np.uint32)
        for start in range(0, n, _BLOCK):
            k = min(_BLOCK, n - start)
            states = _MUL_K[:k] * np.uint64(self.state) + _INC_K[:k]   # wraps mod 2^64
            out[start:start + k] = (states >> np.uint64(32)).astype(np.uint32)
            self.state = (int(_MUL_K[k]) * self.state + int(_INC_K[k])) & _MASK64
        return out


def _fill_random(buf: np.ndarray, offset: int, length: int, lcg: Lcg) -> None:
    # matches device: 4-byte words from aligned offsets, bytes for the rest (§4.19)
    if offset % 4 == 0 and length >= 4:
        words = length // 4
        buf[offset:offset + 4 * words] = lcg.draw(words).astype("<u4").view(np.uint8)
        offset, length = offset + 4 * words, length % 4
    if length:
        buf[offset:offset + length] = (lcg.draw(length) & 0xFF).astype(np.uint8)


def regions(t: Tensor, tail: int) -> Iterator[tuple[int, int, bool]]:
    """(offset, length, is_depth) of every region FillPadding writes, in the device's order."""
    g, p = t.geometry, t.padding
    _, h, w, d = t.shape
    # As padfill_d32_execute: the left/right and depth-after loops count only the slices that
    # hold data (``nd32`` of tensor_addressing_d32, nn_graph_types.h), while the strides span
    # every slice. With depth-after padding of 32 or more (a slice of padding only, as the d32
    # add can give) the side loop's h * nd32 d32 rows stop short of the last rows, and the
    # depth-after offset (nd32 - 1) * d32_stride + 32 - d_after goes back into data, or
    # before the buffer.
    row, d32s, nd32 = g.row_stride, g.d32_stride, (p.d_before + d + 31) // 32
    for b in range(t.shape[0]):
        base = b * g.batch_stride
        yield base, p.h_before * row, False
        yield base + (p.h_before + h) * row, p.h_after * row, False
    yield t.nbytes, tail, False
    for b in range(t.shape[0]):
        first = b * g.batch_stride + p.h_before * row
        for side, start in ((p.w_before, 0), (p.w_after, 32 * (p.w_before + w))):
            for k in range(h * nd32):
                yield first + start + k * d32s, 32 * side, False
    for size, extra in ((p.d_before, 0), (p.d_after, (nd32 - 1) * d32s + 32 - p.d_after)):
        if size <= 0:
            continue
        for b in range(t.shape[0]):
            for hh in range(h):
                for ww in range(w):
                    start = b * g.batch_stride + (p.h_before + hh) * row + 32 * (p.w_before + ww)
                    yield start + extra, size, True


def fill_values(opts: Sequence[Tensor]) -> tuple[int, int]:
    """(spatial, depth) fill: -1 means random, anything else keeps its low 8 bits."""
    spatial = scalar_i(opts[0]) if opts else 255
    depth = scalar_i(opts[1]) if len(opts) > 1 else spatial
    return spatial, depth


def _capacity(ctx: KernelContext, t: Tensor) -> int:
    defs = ctx.output_defs
    if defs and defs[0].max_sizes:
        return defs[0].capacity(d32_output=True)
    return t.nbytes + 4 * t.geometry.row_stride    # undeclared: assume room for the 4 rows


def fill_padding_reference(ctx: KernelContext, x: Tensor, *params: Tensor) -> tuple[Tensor]:
    """the logical tensor unchanged (only padding bytes are written)."""
    return (x,)


@op("FillPadding_8_d32", Category.D32,
    reference=fill_padding_reference,
    inputs=(Port("x", DType.QUINT8, layout=Layout.D32),
            Port("spatial_fill", DType.INT32, optional=True, doc="byte, or -1 for random"),
            Port("depth_fill", DType.INT32, optional=True, doc="byte, or -1 for random")),
    outputs=(Port("y", DType.QUINT8, layout=Layout.D32),), d32_output=True)
def fill_padding_8_d32(ctx: KernelContext, x: Tensor, *opts: Tensor) -> tuple[Tensor]:
    """Copy a d32 tensor and overwrite its padding with a byte or pseudo-random bytes.

    graph spec §4.19. Inputs 1 and 2 are the spatial and depth fill values (default 255; the
    depth value defaults to the spatial one). -1 selects pseudo-random fill; any other value
    keeps its low 8 bits. The whole input buffer (padding included) is copied, then, in this
    order: top and bottom padding rows, up to 4 rows past the end of the data, left and right
    padding of the valid rows, depth-before and depth-after padding of the valid pixels.
    Depth padding inside spatial padding gets the spatial value. The depth-after region is the
    last depth_after bytes of each pixel's last data slice, and the left and right padding
    covers h * nd32 d32 rows from the first row (padfill_d32_execute counts ``nd32``, the
    slices holding data). With depth-after padding of 32 or more (a slice of padding only)
    the simulator does what the device does: the sides of the last rows are left as they
    were, and the depth-after fill starts before the last data slice, overwriting the
    tensor's own data; a fill that would start before the output buffer fails the node,
    naming the writes.

    The rows past the end fill min(capacity - data size, 4 rows): the node's declared output
    capacity (with the d32 widening of §1.4) decides how many; with no declared size, room
    for 4 rows is assumed. The output's raw allocation shows them after the data.

    Random fill: a 64-bit LCG (x * 6364136223846793005 + 1442695040888963407) seeded with
    0x827EA91D91924124 at every execute, exactly as the device (the session seed is not
    used), shared by all regions in order; aligned regions take little-endian 32-bit words,
    each the state's high half, the rest single bytes.

    Errors: "output too small" when the declared output cannot hold the input buffer;
    "padding fill writes outside the output buffer" (see above).
    """
    require_d32(x)
    spatial, depth = fill_values(opts)
    capacity = _capacity(ctx, x)
    size = x.nbytes
    output_fits(ctx, 0, size, f"the input buffer, {x.describe()}", True, "output too small")
    tail = min(capacity - size, 4 * x.geometry.row_stride)
    raw = np.full(max(capacity, size + tail), ctx.padding_fill & 0xFF, np.uint8)
    raw[:size] = x.buffer
    outside = [(o, n) for o, n, _ in regions(x, tail) if n > 0 and (o < 0 or o + n > raw.size)]
    if outside:
        shown = ", ".join(f"{n} bytes at offset {o}" for o, n in outside[:4])
        more = f" and {len(outside) - 4} more" if len(outside) > 4 else ""
        raise KernelError(
            f"padding fill writes outside the output buffer of {raw.size} bytes: {shown}{more} "
            f"(depth-after padding {x.padding.d_after} >= 32: padfill_d32_execute counts "
            "only the slices holding data, so the device writes into memory it does not own)")
    lcg = Lcg()
    for offset, length, is_depth in regions(x, tail):
        if length <= 0:
            continue
        value = depth if is_depth else spatial
        if value == RANDOM:
            _fill_random(raw, offset, length, lcg)
        else:
            raw[offset:offset + length] = value & 0xFF
    return (Tensor(x.shape, DType.QUINT8, raw, Layout.D32, x.padding),)
