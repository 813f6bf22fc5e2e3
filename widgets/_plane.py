"""Display helpers shared by the tensor views: planes of a 4-D tensor and value read-outs.

No Qt here, so the logic behind the pixels can be tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hexscope.engine import DType, Layout, QuantRange, Tensor

AXES = "BHWD"
Index = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class PlaneChoice:
    """Which two axes are shown (rows, columns) and the index of the other two."""

    rows: int = 1
    cols: int = 2
    fixed: Index = (0, 0, 0, 0)      # entries for ``rows`` and ``cols`` are ignored

    def element(self, r: int, c: int) -> Index:
        idx = list(self.fixed)
        idx[self.rows], idx[self.cols] = r, c
        return tuple(idx)  # type: ignore[return-value]

    def contains(self, index: Index) -> bool:
        """Whether ``index`` lies in the shown plane."""
        return all(index[a] == self.fixed[a] for a in range(4) if a not in (self.rows,
                                                                              self.cols))


def fitting_axes(shape: tuple[int, ...], rows: int, cols: int) -> tuple[int, int]:
    """The plane to show for a tensor of ``shape``: the chosen ``rows`` and ``cols``, unless
    one of them is a single element while an axis left out has more. Then the tensor's two
    longest axes, in axis order: a classifier's 1x1x1x1000 output showed as one pixel on
    height x width, and a (1, 1, 7, 40) tensor as a 1 x 7 strip without its depth."""
    if min(shape[rows], shape[cols]) > 1 or \
            all(shape[a] <= 1 for a in range(4) if a not in (rows, cols)):
        return rows, cols
    longest = sorted(range(4), key=lambda a: -shape[a])
    big = [a for a in longest if shape[a] > 1]
    if len(big) >= 2:
        first, second = big[0], big[1]
    else:                       # one axis with more than one element: keep a chosen one by it
        first, second = big[0], rows if rows != big[0] else cols
    return min(first, second), max(first, second)


def is_strip(shape: tuple[int, ...], choice: PlaneChoice, ratio: int = 8) -> bool:
    """Whether the plane is so much longer than wide that square pixels would make it a
    line (the picture then fills the view instead)."""
    r, c = shape[choice.rows], shape[choice.cols]
    return max(r, c) > ratio * max(1, min(r, c))


def plane(array: npt.NDArray, choice: PlaneChoice) -> npt.NDArray:
    """The 2-D slice ``array[...]`` with ``choice.rows`` down and ``choice.cols`` across.

    Empty (0 x 0) when a fixed index lies outside its axis, as it must when that axis is empty.
    """
    if any(not 0 <= choice.fixed[a] < array.shape[a] for a in range(4)
           if a not in (choice.rows, choice.cols)):
        return np.empty((0, 0), array.dtype)
    sl: list[object] = list(choice.fixed)
    sl[choice.rows] = slice(None)
    sl[choice.cols] = slice(None)
    part = array[tuple(sl)]
    return part if choice.rows < choice.cols else part.T


def quant_range_of(outputs: list[Tensor] | tuple[Tensor, ...], k: int) -> QuantRange | None:
    """The range of output ``k`` when outputs k+1, k+2 are its float min and max."""
    from hexscope.engine.analysis.ranges import output_range, quantized_outputs

    return output_range(outputs, k) if k in quantized_outputs(outputs) else None


def is_codes(tensor: Tensor) -> bool:
    return tensor.dtype in (DType.QUINT8, DType.UINT8)


def values_of(codes: npt.NDArray, tensor: Tensor, qrange: QuantRange | None,
              dequantized: bool) -> npt.NDArray:
    """What the views show: codes, or the dequantized values when asked and possible."""
    if dequantized and qrange is not None and is_codes(tensor):
        return qrange.dequantize(codes)
    return codes


def levels_of(tensor: Tensor, qrange: QuantRange | None, dequantized: bool,
              data: npt.NDArray) -> tuple[float, float]:
    """Colour levels: the full code range for quint8 codes, the quantization range for
    dequantized values, otherwise the data's finite min and max (see ``value_levels``)."""
    if is_codes(tensor) and not (dequantized and qrange is not None):
        return 0.0, 255.0
    if dequantized and qrange is not None and is_codes(tensor):
        lo, hi = float(qrange.min), float(qrange.max)
        return (lo, hi) if hi > lo else _around(lo)
    return value_levels(data)


def value_levels(data: npt.NDArray) -> tuple[float, float]:
    """The finite min and max of ``data`` as colour levels, always with ``lo < hi``.

    A single value gets levels around it; no finite value at all gives (0, 1).
    """
    finite = data[np.isfinite(data)] if data.dtype.kind == "f" else data
    if finite.size == 0:
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    return (lo, hi) if hi > lo else _around(lo)


def _around(value: float) -> tuple[float, float]:
    # +-0.5 reads well for ordinary values, but it would hide a tiny value behind a bar from
    # -0.5 to 0.5, and vanish in the rounding of a huge one: there the span follows the value.
    if value == 0.0:
        return -0.5, 0.5
    half = max(min(0.5, abs(value) / 2), abs(value) * 1e-3)
    return value - half, value + half


def image_values(data: npt.NDArray) -> npt.NDArray:
    """``data`` as it should be handed to a pyqtgraph image item with explicit levels.

    pyqtgraph scales a float32 image in float32, as ``(x - lo) * (256 / (hi - lo))``. The
    factor overflows to inf when hi - lo < 256 / 3.4e38 (a range of denormals: every value
    above lo gets the top colour, and lo itself 0 * inf = NaN), and x - lo overflows when
    the span exceeds float32's max (-3e38..3e38). A float64 image is scaled in float64,
    where neither can happen for float32 data. Integers already fit pyqtgraph's arithmetic.
    """
    return np.asarray(data, np.float64) if data.dtype.kind == "f" else data


def element_text(tensor: Tensor, index: Index, qrange: QuantRange | None) -> str:
    """The hover read-out: index, raw value in hex, meaning, byte offset."""
    b, h, w, d = index
    value = value_at(tensor, index)
    offset = tensor.offset(b, h, w, d)
    return f"(b,h,w,d)=({b},{h},{w},{d})  {raw_text(value, tensor, qrange)}  byte {offset}"


def value_at(tensor: Tensor, index: Index) -> object:
    """The element at ``index``; for d32, negative or past-the-end indices reach padding."""
    if tensor.layout is Layout.D32:
        return tensor.memory.reshape(-1)[tensor.geometry.offset(*index)]
    return tensor.array[index]


def raw_text(value: object, tensor: Tensor, qrange: QuantRange | None) -> str:
    if tensor.dtype.numpy.kind == "f":
        bits = int(np.float32(value).view(np.uint32))
        return f"0x{bits:08x} = {float(value):.6g}"
    size = tensor.dtype.size
    code = int(value) & ((1 << (8 * size)) - 1)
    text = f"0x{code:0{2 * size}x} ({int(value)})"
    if qrange is not None and is_codes(tensor):
        text += f" = {float(qrange.dequantize(np.uint8(code))):.6g}"
    return text
