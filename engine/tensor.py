"""Tensor: a 4-D hexagon_nn tensor that keeps its raw buffer in memory order.

For d32 tensors the buffer includes the padding bytes, so a view can show what is really in
memory. The logical NHWC data is always available as :attr:`Tensor.array`.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from hexscope.engine.d32 import NO_PADDING, D32Geometry, D32Padding, default_padding
from hexscope.engine.dtypes import DType, Layout

Shape = tuple[int, int, int, int]
_SCALAR_SHAPE: Shape = (1, 1, 1, 1)


def as_shape(dims: Sequence[int]) -> Shape:
    """Pad a shape of rank <= 4 with leading 1s, as hexagon_nn does for lower ranks."""
    if type(dims) is tuple and len(dims) == 4:
        b, h, w, d = dims
        # Fast path (most calls): already four non-negative Python ints.
        if (type(b) is int and type(h) is int and type(w) is int and type(d) is int
                and b >= 0 and h >= 0 and w >= 0 and d >= 0):
            return dims  # type: ignore[return-value]
    dims = tuple(int(d) for d in dims)
    if len(dims) > 4:
        raise ValueError(f"hexagon_nn tensors have at most 4 dimensions, got shape {dims}")
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimension in shape {dims}")
    return (1,) * (4 - len(dims)) + dims  # type: ignore[return-value]


def fresh(array: np.ndarray) -> np.ndarray:
    """Mark ``array`` as fresh: the caller made it, keeps no reference and never writes it
    again, so the next :meth:`Tensor.from_array` of this very array may share its memory
    instead of copying it (kernels return large results this way). Returns ``array``."""
    if len(_FRESH) >= _FRESH_MAX:
        _FRESH.clear()                      # marks nobody consumed: they only lose the mark
    _FRESH[id(array)] = array
    return array


#: Arrays marked by :func:`fresh`, by id. The dict holds each array, so its id cannot be
#: reused while the mark exists; it is bounded, because a kernel may mark an array and then
#: fail. (A WeakValueDictionary cost ~12 us per mark and adoption, ~2 ms per InceptionV3 run.)
_FRESH: dict[int, np.ndarray] = {}
_FRESH_MAX = 64


def is_frozen(array: np.ndarray) -> bool:
    """Whether no array in ``array``'s chain of bases can be written and the memory comes
    from an array or from immutable bytes: the data cannot change through any of them.

    (A writable view taken before a base was frozen stays writable; such a view cannot be
    seen from here, so callers copy whatever they did not make themselves unless this holds.)
    """
    obj: object = array
    while isinstance(obj, np.ndarray):
        if obj.flags.writeable:
            return False
        obj = obj.base
    return obj is None or isinstance(obj, bytes)


def frozen_refs(tensors: tuple[Tensor, ...]) -> tuple[Tensor, ...] | None:
    """``tensors`` when no byte of any of them can change (each buffer and its bases
    read-only: :func:`is_frozen`), else None. A node may then key what it derives from their
    bytes on the objects themselves (``is``): the same object next run holds the same bytes,
    holding it keeps its id from being reused, and a Const edit or a remade upstream result
    is a new object. Shape-only tensors are not frozen data: None."""
    for t in tensors:
        raw = t._raw
        if raw is None or not is_frozen(raw):
            return None
    return tensors


@functools.lru_cache(maxsize=1024)
def d32_elements(shape: Shape, padding: D32Padding) -> int:
    """The elements of a d32 allocation of ``shape`` and ``padding``, its geometry checked
    (ValueError as :meth:`D32Geometry.check` raises). Memoised: a network makes tensors of a
    few geometries over and over (MobileNetV2: ~150 d32 tensors a run, ~25 calls each)."""
    geometry = D32Geometry(shape, padding)
    geometry.check()
    return geometry.elements


#: numpy type and item size per DType, looked up once (``DType.numpy`` builds a np.dtype).
_NUMPY_OF = {dt: dt.numpy for dt in DType}
_SIZE_OF = {dt: dt.numpy.itemsize for dt in DType}


def freeze_fitting(values: Sequence[object],
                   checks: tuple[tuple[DType | None, int | None], ...]) -> bool:
    """Freeze the buffers of ``values`` (as :meth:`Tensor.readonly`) and give True when each
    is a Tensor of its check's type (None: any) whose allocation holds at most its check's
    capacity in bytes (None: any); otherwise False, and nothing is frozen. The caller checks
    that there are as many values as checks. A kernel's outputs, every node of every run:
    it reads the buffers directly and leaves already read-only ones alone (a property and a
    method call per output were half of the fast plan's bookkeeping)."""
    for value, (want, capacity) in zip(values, checks, strict=True):
        if type(value) is not Tensor or want is not None and value.dtype is not want:
            return False
        if capacity is not None:
            raw = value._raw
            if raw is not None and raw.size > capacity:
                return False
    for value in values:
        raw = value._raw  # type: ignore[attr-defined]
        if raw is not None and raw.flags.writeable:
            raw.setflags(write=False)
    return True


class Tensor:
    """A 4-D tensor (batches, height, width, depth) with an element type and a layout.

    Parameters
    ----------
    shape
        The logical shape, without padding.
    dtype
        The element type.
    raw
        The bytes in memory order (padding included for d32), or ``None`` for a shape-only
        tensor. It may be longer than the data: the tail is the rest of the allocation.
    layout, padding
        FLAT with no padding, or D32 with its paddings.
    """

    __slots__ = ("shape", "dtype", "layout", "padding", "_raw", "_tag")

    def __init__(self, shape: Sequence[int], dtype: DType, raw: npt.NDArray[np.uint8] | None,
                 layout: Layout = Layout.FLAT, padding: D32Padding = NO_PADDING) -> None:
        self.shape: Shape = as_shape(shape)
        self.dtype = dtype
        self.layout = layout
        self.padding = padding if padding is NO_PADDING or type(padding) is D32Padding \
            else D32Padding(*padding)
        self._tag: DType | None = None
        if layout is Layout.FLAT and self.padding is not NO_PADDING and any(self.padding):
            raise ValueError("a flat tensor has no padding")
        if layout is Layout.D32:
            d32_elements(self.shape, self.padding)      # checks the geometry
        if raw is not None:
            if (type(raw) is np.ndarray and raw.dtype == np.uint8 and raw.ndim == 1
                    and raw.flags.c_contiguous):
                raw = raw.view()          # fast path; still a view of the caller's array
            else:
                raw = np.ascontiguousarray(raw).reshape(-1).view(np.uint8)
            if raw.size < self.nbytes:
                raise ValueError(
                    f"buffer of {raw.size} bytes is too small for {self.describe()} "
                    f"({self.nbytes} bytes)")
        self._raw = raw

    @property
    def device_dtype(self) -> DType:
        """The type code the device writes into the tensor: ``dtype`` except where an op tags
        its output otherwise (QuantizedAdd_8p8to8's broadcast path writes qint8 over quint8
        codes). Views and reports show it; arithmetic reads ``dtype``."""
        return self._tag or self.dtype

    def tagged(self, device_dtype: DType) -> Tensor:
        """The same tensor (same bytes) that the device tags with ``device_dtype``."""
        out = Tensor(self.shape, self.dtype, self._raw, self.layout, self.padding)
        out._tag = None if device_dtype is self.dtype else device_dtype
        return out

    # construction -------------------------------------------------------------------------
    @classmethod
    def from_array(cls, array: npt.ArrayLike, dtype: DType | None = None) -> Tensor:
        """A flat tensor holding ``array`` (rank <= 4, padded to 4-D on the left)."""
        arr = np.asarray(array)
        dt = dtype or DType.from_numpy(arr.dtype)
        data = np.ascontiguousarray(arr, dtype=_NUMPY_OF[dt]).reshape(-1).view(np.uint8)
        if _FRESH.pop(id(arr), None) is not arr:
            data = data.copy()
        # Built directly: a flat, unpadded tensor whose buffer is exactly its data.
        tensor = object.__new__(cls)
        tensor.shape = as_shape(arr.shape)
        tensor.dtype, tensor.layout, tensor.padding, tensor._raw = dt, Layout.FLAT, NO_PADDING, data
        tensor._tag = None
        return tensor

    @classmethod
    def scalar(cls, value: float | int, dtype: DType = DType.FLOAT32) -> Tensor:
        """A flat [1,1,1,1] tensor holding ``value`` (converted as ``np.full`` converts)."""
        tensor = object.__new__(cls)
        tensor.shape, tensor.dtype, tensor.layout, tensor.padding = _SCALAR_SHAPE, dtype, \
            Layout.FLAT, NO_PADDING
        tensor._raw = np.full(1, value, dtype=_NUMPY_OF[dtype]).view(np.uint8)
        tensor._tag = None
        return tensor

    @classmethod
    def scalar_of(cls, word: np.ndarray, dtype: DType = DType.FLOAT32) -> Tensor:
        """A flat [1,1,1,1] tensor holding a copy of ``word``, a one-element array of
        ``dtype``'s numpy type (e.g. made once by :meth:`scalar` and cached): ~1 us instead
        of the ~3 us of converting a value again."""
        tensor = object.__new__(cls)
        tensor.shape, tensor.dtype, tensor.layout, tensor.padding = _SCALAR_SHAPE, dtype, \
            Layout.FLAT, NO_PADDING
        tensor._raw = word.view(np.uint8).copy()
        tensor._tag = None
        return tensor

    @classmethod
    def shape_only(cls, shape: Sequence[int], dtype: DType = DType.VOID) -> Tensor:
        """A tensor with a shape and no data (a const appended with data_len = 0)."""
        return cls(shape, dtype, None)

    @classmethod
    def from_memory(cls, memory: npt.NDArray, shape: Sequence[int], dtype: DType,
                    padding: D32Padding) -> Tensor:
        """A d32 tensor from an array in memory order ([B, H_tot, D_tot/32, W_tot, 32])."""
        data = np.ascontiguousarray(memory, dtype=dtype.numpy)
        return cls(shape, dtype, data.reshape(-1).view(np.uint8), Layout.D32, padding)

    # sizes and geometry -------------------------------------------------------------------
    @property
    def elements(self) -> int:
        if self.layout is Layout.D32:
            return d32_elements(self.shape, self.padding)
        b, h, w, d = self.shape
        return b * h * w * d

    @property
    def nbytes(self) -> int:
        """hexagon_nn's ``data_size``: valid bytes, padding included for d32."""
        return self.elements * _SIZE_OF[self.dtype]

    @property
    def has_data(self) -> bool:
        return self._raw is not None

    @property
    def geometry(self) -> D32Geometry:
        return D32Geometry(self.shape, self.padding)

    @property
    def strides(self) -> tuple[int, int, int]:
        """(row, d32, batch) strides in elements; for flat tensors (W*D, -, H*W*D)."""
        if self.layout is Layout.D32:
            g = self.geometry
            return g.row_stride, g.d32_stride, g.batch_stride
        _, h, w, d = self.shape
        return w * d, 0, h * w * d

    def offset(self, b: int, h: int, w: int, d: int) -> int:
        """Byte offset of element (b, h, w, d); negative indices reach d32 padding."""
        if self.layout is Layout.D32:
            return self.geometry.offset(b, h, w, d) * self.dtype.size
        B, H, W, D = self.shape
        if not (0 <= b < B and 0 <= h < H and 0 <= w < W and 0 <= d < D):
            raise IndexError(f"({b}, {h}, {w}, {d}) lies outside shape {self.shape}")
        return (((b * H + h) * W + w) * D + d) * self.dtype.size

    # data views ---------------------------------------------------------------------------
    def _require_data(self) -> npt.NDArray[np.uint8]:
        if self._raw is None:
            raise ValueError(f"{self.describe()} is shape-only: it has no data")
        return self._raw

    @property
    def raw(self) -> npt.NDArray[np.uint8]:
        """The whole allocation, data and tail."""
        raw = self._raw         # _require_data's check, inline: the most read property
        if raw is None:
            return self._require_data()
        return raw

    @property
    def buffer(self) -> npt.NDArray[np.uint8]:
        """The ``data_size`` bytes in memory order."""
        return self._require_data()[: self.nbytes]

    @property
    def memory(self) -> npt.NDArray:
        """Typed data in memory order: (B,H,W,D) for flat, (B,H_tot,D_tot/32,W_tot,32) for d32."""
        typed = self.buffer.view(_NUMPY_OF[self.dtype])
        if self.layout is Layout.D32:
            return typed.reshape(self.geometry.memory_shape)
        return typed.reshape(self.shape)

    @property
    def array(self) -> npt.NDArray:
        """The logical NHWC data, without padding: a view for flat tensors, a copy for d32."""
        if self.layout is Layout.FLAT and self._raw is not None:
            # memory's steps inline (the analyses read a few arrays per node)
            b, h, w, d = self.shape
            typed = _NUMPY_OF[self.dtype]
            return self._raw[:b * h * w * d * typed.itemsize].view(typed).reshape(self.shape)
        mem = self.memory
        if self.layout is Layout.FLAT:
            return mem
        from hexscope.engine.ops.kernels.d32_layout import unpack_d32  # compiled, one pass

        fast = unpack_d32(mem, self.shape, self.padding)
        if fast is not None:
            return fast
        p, (_, h, w, _) = self.padding, self.shape
        out = np.empty(self.shape, dtype=mem.dtype)
        for k, (lo, hi) in enumerate(self.geometry.slice_spans()):
            if hi > lo:
                out[..., lo - p.d_before:hi - p.d_before] = mem[
                    :, p.h_before:p.h_before + h, k, p.w_before:p.w_before + w,
                    lo - 32 * k:hi - 32 * k]
        return out

    def padded_array(self) -> npt.NDArray:
        """A d32 tensor as (B, H_tot, W_tot, D_tot), padding included (a copy)."""
        if self.layout is not Layout.D32:
            return self.array.copy()
        g = self.geometry
        return self.memory.transpose(0, 1, 3, 2, 4).reshape(
            self.shape[0], g.h_total, g.w_total, g.d_total)

    def padding_mask(self) -> npt.NDArray[np.bool_]:
        """True for every element of the memory-order buffer that is padding."""
        if self.layout is Layout.FLAT:
            return np.zeros(self.shape, dtype=bool)
        g, p = self.geometry, self.padding
        _, h, w, d = self.shape
        rows = np.ones(g.h_total, bool)
        rows[p.h_before:p.h_before + h] = False
        cols = np.ones(g.w_total, bool)
        cols[p.w_before:p.w_before + w] = False
        depth = np.ones(g.d_total, bool)
        depth[p.d_before:p.d_before + d] = False
        depth = depth.reshape(g.n_slices, 32)
        mask = (rows[:, None, None, None] | depth[None, :, None, :]
                | cols[None, None, :, None])
        return np.broadcast_to(mask, g.memory_shape).copy()

    def scalar_value(self, kind: type = float) -> float | int:
        """The first element read as float or int32, bit-reinterpreted as hexagon_nn does."""
        raw = self._require_data()
        if raw.size < 4:
            word = np.zeros(4, np.uint8)
            word[: raw.size] = raw
            raw = word
        # struct reads the 4 little-endian bytes as numpy's view would, with less overhead.
        return kind(struct.unpack_from("<f" if kind is float else "<i", raw)[0])

    # conversion ---------------------------------------------------------------------------
    def to_d32(self, padding: D32Padding | None = None, fill: int = 0) -> Tensor:
        """This tensor in d32 layout; padding defaults to hexagon_nn's converter default."""
        pad = D32Padding(*(padding if padding is not None else default_padding(self.shape)))
        g = D32Geometry(self.shape, pad)
        g.check()
        from hexscope.engine.ops.kernels.d32_layout import pack_d32  # compiled, one pass

        src = self.array
        packed = pack_d32(src, g.memory_shape, pad, fill)
        if packed is not None:
            return Tensor(self.shape, self.dtype, packed.reshape(-1), Layout.D32, pad)
        mem = np.full(g.memory_shape, fill, dtype=self.dtype.numpy)
        _, h, w, _ = self.shape
        for k, (lo, hi) in enumerate(g.slice_spans()):
            if hi > lo:
                mem[:, pad.h_before:pad.h_before + h, k, pad.w_before:pad.w_before + w,
                    lo - 32 * k:hi - 32 * k] = src[..., lo - pad.d_before:hi - pad.d_before]
        return Tensor.from_memory(mem, self.shape, self.dtype, pad)

    def to_flat(self) -> Tensor:
        """This tensor in flat layout (a copy of the valid data)."""
        data = self.array if self.layout is Layout.D32 else self.array.copy()
        return Tensor(self.shape, self.dtype, data.reshape(-1).view(np.uint8))

    def alike(self, raw: npt.NDArray[np.uint8], dtype: DType | None = None) -> Tensor:
        """A tensor of this one's shape, layout and padding (and ``dtype``, default its own,
        of the same size) over ``raw``, a 1-D contiguous uint8 buffer of at least
        :attr:`nbytes` bytes, shared. This tensor's geometry was checked when it was made:
        an elementwise kernel's output skips the checks of the constructor (a d32 one's
        geometry and buffer tests cost ~1 us a node)."""
        # a buffer as large as this tensor's holds its nbytes (the constructors check that):
        # nbytes, a memoised geometry look-up, only for a smaller one
        mine = self._raw
        if type(raw) is not np.ndarray or raw.dtype != np.uint8 or raw.ndim != 1 \
                or not raw.flags.c_contiguous \
                or (mine is None or raw.size < mine.size) and raw.size < self.nbytes \
                or (dtype is not None and dtype is not self.dtype
                    and _SIZE_OF[dtype] != _SIZE_OF[self.dtype]):
            return Tensor(self.shape, dtype or self.dtype, raw, self.layout, self.padding)
        out = object.__new__(Tensor)
        out.shape, out.dtype, out.layout, out.padding = self.shape, dtype or self.dtype, \
            self.layout, self.padding
        out._raw, out._tag = raw.view(), None
        return out

    def with_dtype(self, dtype: DType) -> Tensor:
        """The same bytes tagged with another type of the same size."""
        if dtype.size != self.dtype.size:
            raise ValueError(f"cannot retag {self.dtype.c_name} data as {dtype.c_name}")
        return Tensor(self.shape, dtype, self._raw, self.layout, self.padding)

    def readonly(self) -> Tensor:
        """Freeze the buffer, so the tensor can be shared across threads without copies."""
        if self._raw is not None:
            self._raw.setflags(write=False)
        return self

    def copy(self) -> Tensor:
        raw = None if self._raw is None else self._raw.copy()
        out = Tensor(self.shape, self.dtype, raw, self.layout, self.padding)
        out._tag = self._tag
        return out

    def same_as(self, other: Tensor) -> bool:
        """Same shape, type, layout, padding and bytes."""
        return (self.shape == other.shape and self.dtype is other.dtype
                and self.layout is other.layout and self.padding == other.padding
                and self.has_data == other.has_data
                and (not self.has_data or np.array_equal(self.buffer, other.buffer)))

    def describe(self) -> str:
        kind = self.dtype.c_name if self._tag is None else \
            f"{self._tag.c_name} ({self.dtype.c_name} codes)"
        text = f"{kind} {'x'.join(map(str, self.shape))}"
        if self.layout is Layout.D32:
            text += f" d32 pad={tuple(self.padding)}"
        return text

    def __repr__(self) -> str:
        return f"Tensor({self.describe()})"
