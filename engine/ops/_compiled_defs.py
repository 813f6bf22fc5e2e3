"""The numba kernels behind :mod:`_compiled` (imported, and so compiled or loaded from
numba's cache, on first use). Each mirrors a numpy path of the op that calls it, step for
step; the callers check the preconditions written here before they call."""

from __future__ import annotations

import numpy as np
from numba import njit

_OPTS = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}


@njit("void(int32[:, ::1], int32[::1], float32, int64, uint8[:, ::1])", **_OPTS)
def supernode_epilogue(sums, bias, offset, recip, out):  # pragma: no cover - compiled
    """``supernode_execute_ref``'s output step for sums (N, C) and bias (C) in output steps:
    clamp(int32(u32(int32(f32(s + b) + offset) * recip + 2**15)) >> 16, 0, 255).

    Precondition (requantize_sums checks it from the sums' bounds): s + b fits int32 and
    f32(s + b) + offset lies in [-2**31, 2**31), so no wrap and no saturation happen."""
    n, c = sums.shape
    for i in range(n):
        for j in range(c):
            f = np.float32(sums[i, j] + bias[j]) + offset
            p = (np.int64(f) * recip + 32768) & 0xFFFFFFFF
            if p >= 0x80000000:
                p -= 0x100000000
            o = p >> 16
            out[i, j] = 0 if o < 0 else (255 if o > 255 else o)
