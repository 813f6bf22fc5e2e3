"""An independent reference for QuantizedConv2d_8x8to32, written from the spec as plain loops
(quantized-ops spec §1.4 ZA', §1.7, §2). Slow on purpose: tests compare the kernel's fast
paths with it."""

from __future__ import annotations

import math

import numpy as np

from hexscope.engine.nodes import Padding

f32 = np.float32


def ref_zero(mn: float, mx: float) -> int:
    """quantize_int(0, mn, mx), spec §1.4 ZA': C roundf of the float32 zero point, no clamp."""
    r = max(f32(1e-18), f32(f32(mx) - f32(mn)))
    z = float(f32(f32(-f32(mn)) * f32(f32(255.0) / r)))
    return int(math.floor(z + 0.5)) if z >= 0 else -int(math.floor(-z + 0.5))


def ref_out_size(n: int, f: int, s: int, pad: Padding) -> tuple[int, int]:
    """Spec §1.7: (output size, padding before)."""
    if pad is Padding.VALID:
        return ((n - f) // s + 1 if n >= f else 0), 0
    if pad in (Padding.MIRROR_REFLECT, Padding.MIRROR_SYMMETRIC):
        return 0, 0
    out = -(-n // s) if pad is not Padding.NA else (n // s if n >= s else 0)
    total = (out - 1) * s - (n - f)
    if total <= 0:
        return out, 0
    return out, (total + 1) // 2 if pad is Padding.SAME_CAFFE else total // 2


def ref_conv(x, w, zx, zf, sh, sw, pad):
    """Spec §2 as a loop over output cells and taps, skipping taps outside the image, in
    Python integers, wrapped to int32 at the end."""
    b, h, wd, _ = x.shape
    fh, fw, _, co = w.shape
    (oh, ph), (ow, pw) = ref_out_size(h, fh, sh, pad), ref_out_size(wd, fw, sw, pad)
    xi, wi = x.astype(object) - zx, w.astype(object) - zf
    out = np.zeros((b, oh, ow, co), object)
    for i in range(oh):
        for j in range(ow):
            for fy in range(fh):
                for fx in range(fw):
                    yy, xx = i * sh - ph + fy, j * sw - pw + fx
                    if 0 <= yy < h and 0 <= xx < wd:
                        out[:, i, j, :] += xi[:, yy, xx, :].dot(wi[fy, fx])
    return ((out + 2**31) % 2**32 - 2**31).astype(np.int32)
