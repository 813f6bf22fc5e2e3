"""The depthwise Supernode's set-up kept in its node between runs (:mod:`dwise_scaling` holds
the C set-up these call): nnlib's shape refusals, the filter's terms, the scaling for the
range now, the range a node starts from and the range's output words.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hexscope.engine.errors import KernelError
from hexscope.engine.hexmath import quantize_uint8
from hexscope.engine.ops.context import KernelContext, Shared, data_of, scalar_f
from hexscope.engine.ops.conv.common import f32_output, f32_word
from hexscope.engine.ops.conv.dwise_scaling import (
    DwiseRange,
    Scaling,
    bias_buffer,
    channel_scales,
    initial_range,
    minmax_basics,
)
from hexscope.engine.tensor import Tensor

f32 = np.float32


def check_shapes(filt: Tensor, stride: Tensor) -> None:
    """The refusals of dwise_supernode_check / _recalculate_strategy, in their order."""
    fh, fw, _, m = filt.shape
    if fw > 7:
        raise KernelError(f"filter width {fw} > 7 (device: 'Oops: implement depthwise support "
                          "for filt width > 7')")
    if m != 1:
        raise KernelError(f"depth multiplier {m}: the device's depthwise Supernode writes its "
                          "channels out of the standard order ('needs shuffling'); nnlib's "
                          "prepare only fuses multiplier 1")
    if fh < 2:
        raise KernelError(f"filter height {fh} (device: 'Only currently support filter "
                          "height >= 2')")
    sw = stride.shape[2]
    if sw not in (1, 2) or fw not in (3, 5, 7):
        raise KernelError(f"stride width {sw} with filter width {fw}: the device has kernels "
                          "for stride width 1 or 2 and filter width 3, 5 or 7 only ('sorry, "
                          "horizontal stride currently only 1 or 2' / 'filter width currently "
                          "only 3, 5, 7')")


class FilterTerms(NamedTuple):
    """What the filter, its range and the channel scales fix (the same every run)."""

    zf: int
    w: np.ndarray
    gemsumb: np.ndarray
    k: np.ndarray | None
    kinv: np.ndarray | None
    w_level: np.float32


def filter_terms(ctx: KernelContext, filt: Tensor, f_min: Tensor, f_max: Tensor,
                  channel_scale: tuple[Tensor, ...]) -> FilterTerms:
    """The filter's zero code, codes, tap sums less zf (``dwise_sumb``: width padding adds
    zeros) and channel scales; kept in the node while its inputs are the same Consts (a
    tenth of a MobileNetV2 run was this set-up, redone every run)."""
    fmn, fmx = scalar_f(f_min), scalar_f(f_max)
    key = (filt, *channel_scale, fmn, fmx)
    kept = ctx.state.get("dwise_filter")
    # Tensors compare by identity, the range values by value
    if isinstance(kept, Shared) and kept.key == key:
        return kept.value  # type: ignore[no-any-return]
    channels = filt.shape[2]
    zf = quantize_uint8(0.0, fmn, fmx)
    with np.errstate(all="ignore"):
        w_level = f32(f32(f32(fmx) - f32(fmn)) / f32(255.0))
    w = data_of(filt, "filter")
    gemsumb = w.reshape(-1, channels).astype(np.int64).sum(0) - zf * w.shape[0] * w.shape[1]
    k, kinv = channel_scales(channel_scale, channels)
    terms = FilterTerms(zf, w, gemsumb, k, kinv, w_level)
    ctx.state["dwise_filter"] = Shared(key, terms)
    return terms


def kept_scaling(ctx: KernelContext, state: DwiseRange, bias: Tensor, bias32: bool, xmn: float,
             xmx: float, bmn: float, bmx: float, consts: FilterTerms
             ) -> tuple[Scaling, np.ndarray]:
    """``fill_info_minmax_basics`` and ``fill_bias_buf`` for the node's range now, with the
    bias buffer plus zx * gemsumb: the HVX kernel sums x (w - zf) with padding taps reading
    zx, that is the exact sum plus zx * gemsumb, which the bias buffer takes off again (in
    float32). Kept in the node for the same inputs and range (the first guess, which moves
    the range, is never kept)."""
    key = (bias, xmn, xmx, bmn, bmx, float(state.mn), float(state.mx), state.flags)
    kept = ctx.state.get("dwise_scaling")
    if not state.first_guess and isinstance(kept, Shared) and kept.key[0] is bias \
            and kept.key[1:] == key[1:] and kept.value[2] is consts:
        return kept.value[0], kept.value[1]  # type: ignore[no-any-return]
    first = state.first_guess
    sc = minmax_basics(state, xmn, xmx, consts.w_level, consts.k, consts.gemsumb.size)
    biasbuf = bias_buffer(np.asarray(bias.array), bias32, bmn, bmx, state, sc, consts.gemsumb,
                          consts.kinv)
    folded = biasbuf + consts.gemsumb * sc.in_offset
    folded.flags.writeable = False
    if not first:
        ctx.state["dwise_scaling"] = Shared(key, (sc, folded, consts))
    return sc, folded


def range_outputs(ctx: KernelContext, state: DwiseRange) -> tuple[Tensor, Tensor]:
    """The range's outputs, its words kept while the range holds the same objects (their
    bits)."""
    words = ctx.state.get("dwise_words")
    if not isinstance(words, Shared) or words.key[0] is not state.mn \
            or words.key[1] is not state.mx:  # type: ignore[index]
        words = Shared((state.mn, state.mx), (f32_word(state.mn), f32_word(state.mx)))
        ctx.state["dwise_words"] = words
    return f32_output(words.value[0]), f32_output(words.value[1])  # type: ignore[index]


def starting_range(o_min: float, o_max: float) -> DwiseRange:
    """``setup_initial_output_range(.., -0.125, 0.125)``, whose refusal of a range without 0
    or with min >= max ("supernode: invalid input min/max") ``dwise_supernode_check``
    ignores (op_dwise_snode_8bit.c:860): the node then keeps what ``nn_calloc`` left in its
    info, a range [0, 0] with both ends free and no first guess."""
    mn, mx = f32(o_min), f32(o_max)
    if mn > 0 or mx < 0 or not mn < mx:
        zero = f32(0.0)
        return DwiseRange(zero, zero, 0, zero, zero, False)
    return initial_range(o_min, o_max)
