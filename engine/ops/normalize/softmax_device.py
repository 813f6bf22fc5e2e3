"""QuantizedSoftmax_8 as nnlib's Hexagon build runs it (op_softmax_d32.c
``softmax_flat_execute``): fixed point through the HVX functions, a lookup for depth 2, a
histogram table for large depths. The float32 ``_ref`` is QuantizedSoftmax_8_ref."""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.ops.context import KernelContext, f32_scalar, scalar_f
from hexscope.engine.ops.d32.softmax import scaling_parms
from hexscope.engine.ops.kernels.softmax_flat import (
    d2_table,
    larged_tables,
    softmax_d2,
    softmax_larged,
)
from hexscope.engine.ops.kernels.softmax_hvx import softmax_hvx
from hexscope.engine.ops.normalize.softmax import PORTS, softmax_reference
from hexscope.engine.ops.registry import Category, op
from hexscope.engine.tensor import Tensor, fresh

f32 = np.float32
#: op_softmax_d32.c: MIN_DEPTH_FOR_LARGED, MIN_SIZE_FOR_LARGED
LARGE_DEPTH, LARGE_SIZE = 1408, 1408 * 4


def _fullscale(x_min: Tensor, x_max: Tensor, beta: tuple[Tensor, ...]) -> np.float32:
    b = f32(scalar_f(beta[0])) if beta else f32(1.0)
    with np.errstate(all="ignore"):
        return f32(b * f32(f32(scalar_f(x_max)) - f32(scalar_f(x_min))))


def softmax_device(x: np.ndarray, mn: float, mx: float, beta: float,
                   fullscale: np.float32) -> np.ndarray:
    """The output codes of ``softmax_flat_execute`` for codes x (b, h, w, d), d >= 1, after
    its checks (KernelError where nnlib fails)."""
    d = x.shape[-1]
    rows = x.reshape(-1, d)
    if d == 1:
        return np.full(x.shape, 255, np.uint8)
    if d == 2:
        return softmax_d2(rows, d2_table(fullscale)).reshape(x.shape)
    if d >= LARGE_DEPTH and x.size >= LARGE_SIZE:
        if fullscale == f32(-1.0):
            # softmax_larged_flat_exec tests the depth-2 cache's key (op_softmax_d32.c:1808),
            # still -1 on a node's first run: the table pointer stays NULL and is read
            raise KernelError("softmax: beta * (max - min) is exactly -1: nnlib's large-depth "
                              "path reads its exp table without building it (a NULL pointer, "
                              "op_softmax_d32.c:1808)")
        if d > 65536:
            raise KernelError("depth > 65536 not supported in softmax")
        return softmax_larged(rows, *larged_tables(fullscale)).reshape(x.shape)
    parms = scaling_parms(mn, mx, beta, d, who="softmax_8")
    if d % 4:               # the model takes lanes in fours: pad the row, drop the pad
        padded = np.zeros((rows.shape[0], (d + 3) & ~3), np.uint8)
        padded[:, :d] = rows
        return softmax_hvx(padded, d, *parms)[:, :d].reshape(x.shape)
    return softmax_hvx(rows, d, *parms).reshape(x.shape)


@op("QuantizedSoftmax_8", Category.ACTIVATION, reference=softmax_reference, **PORTS)
def quantized_softmax_8(ctx: KernelContext, x: Tensor, x_min: Tensor, x_max: Tensor,
                        *beta: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Softmax over the depth of every (b, h, w) vector, in the device's fixed point; output
    range [0, 1].

    Semantics (nnlib op_softmax_d32.c ``softmax_flat_execute``, which nnlib registers for
    QuantizedSoftmax_8 on Hexagon; the float32 ``qsoftmax_execute_ref`` of op_softmax.c is
    QuantizedSoftmax_8_ref). By depth d:
    d = 1: every output 255 (no beta check). d = 2 (``softmax_d2_flat_exec``): a 256-entry
    table, entry i = round(255 / (1 + expf_approx(-k i))), k = beta (max - min) / 255,
    entry 0 = 128; for a pair (a, b) the first output is table[|a - b|] when a >= b, else
    255 minus it, and the second is 255 minus the first (equal codes give 128, 127).
    d >= 1408 with at least 5632 elements (``softmax_larged_flat_exec``): per row, the
    histogram of codes dotted with y32[i] = exp(step (i - 255)) 2**32 (step = beta (max -
    min) / 255) aligned on the row's largest code m; a 16-bit fixed-point reciprocal of that
    sum scales y16[i] = exp(..) 255 128 into a 192-entry table indexed by q - m + 191 (codes
    more than 191 below m give 0). Every other depth: the HVX flat functions, the same
    arithmetic as QuantizedSoftmax_8_d32's HVX path (``set_scaling_parms``, ``hvx_pow2_func``
    with ``pow2_v65_poly``, ``hvx_recip16_inline``, ``final_scaling_op``; modelled in
    ``engine/ops/kernels/softmax_hvx.py``), each row on its own. The kernels are in
    ``engine/ops/kernels/softmax_flat.py``.

    Fidelity: against nnlib's own op built for Hexagon v66 with its HVX intrinsics under
    QEMU 7.2 (tests/oracle/hvx, docs/oracle-hvx.md; QEMU is an emulator, not a device):
    344 of 344 cases byte-exact on each of two seeds (300 random, 44 edge: depths 1, 2, 3,
    1407, 1408 and more on both sides of 5632 bytes, beta 0, negative, at and over the
    limit, reversed, infinite and [0, 0] ranges; golden file
    ``QuantizedSoftmax_8.hvx.json.gz``);
    it was 221 of 300 when this op computed the float ``_ref``. The large-depth
    table calls libm's expf and expm1f: Hexscope takes them correctly rounded, as the
    oracle's libm does; the DSP's libm is not available here, and a value of it one ulp
    away moved no output code in 400 random large-depth inputs (3.97 million codes). The
    float32 steps are fused multiply-adds where the Hexagon build contracts them (the
    cubic of ``expf_approx``, the table recurrences; unfused gives the same tables).

    Errors, as nnlib raises them: "d=0 not supported" (an empty depth); on the HVX path
    "softmax_8: range = ... beta too large" (|beta (max - min)| / (255 ln 2) at or above
    128, an infinite range included; depth 2 and the large-depth path have no such check);
    "depth > 65536 not supported in softmax"; "out too small". A product beta (max - min)
    of exactly -1 on the large-depth path fails the node: nnlib reads a table it never
    built there (op_softmax_d32.c:1808, a NULL pointer).
    """
    d = x.shape[3]
    if d == 0:
        raise KernelError("d=0 not supported")
    b = scalar_f(beta[0]) if beta else 1.0
    if x.elements == 0:     # an empty batch: the HVX path's checks only
        if d > 2:
            scaling_parms(scalar_f(x_min), scalar_f(x_max), b, d, who="softmax_8")
        return fresh(np.zeros(x.shape, np.uint8)), f32_scalar(0.0), f32_scalar(1.0)
    y = softmax_device(x.array, scalar_f(x_min), scalar_f(x_max), b,
                       _fullscale(x_min, x_max, beta))
    # a Tensor already: the executor's plain check takes it as it is
    return Tensor.from_array(fresh(y), DType.QUINT8), f32_scalar(0.0), f32_scalar(1.0)
