"""Element types of hexagon_nn tensors and their numpy counterparts (graph spec §1.2)."""

from __future__ import annotations

from enum import Enum

import numpy as np
import numpy.typing as npt

U8Array = npt.NDArray[np.uint8]
I32Array = npt.NDArray[np.int32]
F32Array = npt.NDArray[np.float32]


class DType(Enum):
    """hexagon_nn's type codes (``nn_graph_types.h``) with the numpy type that holds them."""

    VOID = 0
    QINT8 = 1
    QUINT8 = 2
    INT8 = 3
    UINT8 = 4
    QINT16 = 5
    QUINT16 = 6
    INT32 = 7
    FLOAT32 = 8
    # Not a hexagon_nn code: qint32 shares INT32's storage; kept apart so ports can say which.
    QINT32 = 107

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(_NUMPY[self])

    @property
    def size(self) -> int:
        return _SIZES[self]        # looked up: np.dtype(...) each time cost ~0.3 us a call

    @property
    def c_name(self) -> str:
        """The name hexagon_nn prints (``TypeStrings``) and graph-init files use."""
        return _C_NAMES[self]

    @classmethod
    def from_numpy(cls, dtype: npt.DTypeLike) -> DType:
        dt = np.dtype(dtype)
        for member, np_type in _FROM_NUMPY:
            if dt == np.dtype(np_type):
                return member
        raise ValueError(
            f"numpy dtype {dt} has no hexagon_nn type; "
            "use uint8, int8, uint16, int16, int32 or float32"
        )

    def compatible(self, other: DType) -> bool:
        """Whether data of type ``other`` may feed a port of this type."""
        return self is other or {self, other} <= {DType.INT32, DType.QINT32}


_NUMPY: dict[DType, type] = {
    DType.VOID: np.uint8,
    DType.QINT8: np.int8,
    DType.QUINT8: np.uint8,
    DType.INT8: np.int8,
    DType.UINT8: np.uint8,
    DType.QINT16: np.int16,
    DType.QUINT16: np.uint16,
    DType.INT32: np.int32,
    DType.QINT32: np.int32,
    DType.FLOAT32: np.float32,
}
_SIZES: dict[DType, int] = {dt: np.dtype(t).itemsize for dt, t in _NUMPY.items()}
_C_NAMES = {
    DType.VOID: "void", DType.QINT8: "qint8", DType.QUINT8: "quint8", DType.INT8: "int8",
    DType.UINT8: "uint8", DType.QINT16: "qint16", DType.QUINT16: "quint16", DType.INT32: "int32",
    DType.QINT32: "qint32", DType.FLOAT32: "float32",
}
# First match wins, so the quantized 8-bit type is the default for uint8 data.
_FROM_NUMPY = [
    (DType.QUINT8, np.uint8), (DType.INT8, np.int8), (DType.QUINT16, np.uint16),
    (DType.QINT16, np.int16), (DType.INT32, np.int32), (DType.FLOAT32, np.float32),
]


def narrow_64bit(arr: npt.NDArray) -> npt.NDArray:
    """float64 and int64 arrays as float32 and int32: numpy's defaults, which hexagon_nn lacks.

    Raises ValueError when an int64 value does not fit int32.
    """
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype.kind in "iu" and arr.dtype.itemsize == 8:
        if arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
            raise ValueError("values do not fit int32")
        return arr.astype(np.int32)
    return arr


class Layout(Enum):
    """Memory layout of a tensor (``format.layout``)."""

    FLAT = 0
    D32 = 1
