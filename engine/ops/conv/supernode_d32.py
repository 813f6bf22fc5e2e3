"""The d32 Supernodes nnlib's prepare makes of the flat ones (prepare.c ``convert_to_depth32``,
``depth32_replacement_op``, ``do_convert_to_short_conv``): Supernode_8x8p8to8_d32 and
Supernode_8x8p32to8_d32 (op_supernode_new.c), InputSupernode_8x8p8to8_outd32 and
_8x8p32to8_outd32 (the "short input" form for input depths up to 4: flat in, d32 out), and
DepthwiseSupernode_8x8p8to8_d32 / _8x8p32to8_d32 (op_dwise_snode_8bit.c).

Each takes the flat op's inputs and reads its data in d32 (the input Supernode: flat). The
Supernodes compute what nnlib's HVX code computes (:mod:`supernode_hvx`, checked under
qemu-hexagon: docs/oracle-hvx.md); the depthwise one the flat op's values (which Hexscope
computes as the d32 op does, docs/oracle-dwise.md), re-laid in d32 with the padding the op
chooses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, require_d32

# conv_sums and compiled: the sim backend's warm-up looks for them in a kernel's module, and
# these kernels run the flat Supernodes' (engine/backends/sim.py)
from hexscope.engine.ops.conv.conv2d import conv_sums, output_window  # noqa: F401
from hexscope.engine.ops.conv.dwise_d32 import depthwise_d32, kept_run
from hexscope.engine.ops.conv.supernode_fast import run_fast
from hexscope.engine.ops.conv.supernode_hvx import run_hvx
from hexscope.engine.ops.kernels import compiled  # noqa: F401
from hexscope.engine.ops.registry import REGISTRY, Category, Port, op
from hexscope.engine.tensor import Tensor

_SUPERNODE_DOC = """

    **Fidelity.** What nnlib's HVX op computes (op_supernode_new.c, the V60 path
    ``supernode_execute_hvx`` with ``gvconv2dbbb_v60_asm``; the input Supernode's
    ``shortin_supernode_execute_call`` with ``inconv2dbbb*_v60_asm``), checked byte for byte
    against nnlib's HVX build under qemu-hexagon (docs/oracle-hvx.md,
    :mod:`~hexscope.engine.ops.conv.supernode_hvx`), not the flat ``_ref``: the output range
    is set up as ``setup_initial_output_range`` does (a fixed min < 0 moved so that 0 is a
    code: [-6, 6] runs as [-6.0235, 5.9765]; an open end starts at 0 and 0.5, the input
    Supernode's at -1/128 and 1/128), may widen on the first guess and grows by quarter
    octaves past what a run overflowed, at most 3 runs; the sums are requantized in fixed
    point (bias buffer, (s << shamt) x recip rounded at bit 31, ``vasl`` shifting by
    shamt & 31); a 13th ChannelScale input scales each channel's multiplier by k and its
    bias by 1/k (``load_channel_scales``). The output's width padding columns and depth
    padding lanes are written as the asm writes them. The windows read the d32 input's
    padding as the asm does: zapped to the input's zero code only where nnlib zaps it (the
    right padding not when it starts a vector, ``right_ptr_l % 128``, supernode_utils.h:880;
    ``padzap_part`` staying in its first vector), its own bytes elsewhere. An output of
    width 0 still computes one group of 4 columns into the next line's left padding, its
    first column counted in the range search.

    An empty output asks no padding after (VALID), so nothing on its right is zapped.

    What still differs (docs/oracle-hvx.md has the counts): windows that read past the end
    of the input tensor's memory; an input with more depth slices than the filter's depth
    rounded up to 32, for which the asm reads weights past its buffer
    (``info->in_depth = 32*tin.nd32_total``, op_supernode_new.c:3056, against the filter
    packed for its own depth, :4558): Hexscope takes zero-code weights there and warns. On a
    device with VTCM nnlib takes ``supernode_recalculate_strategy_v66``
    (signed weights), which the oracle, without VTCM, does not run: not modelled.

    **Layout.** Output padding as ``supernode_recalculate_strategy`` chooses it: 4 rows above
    and below, 4 columns left, (-width) & 3 right, depth padded after to a multiple of 32.

    **Errors.** "input 0 must be a d32 tensor"{extra}; "depth before pad not supported",
    "insufficient W/H padding" (op_supernode_new.c:2975-3026); "input range to supernode,
    not finite"; "supernode: invalid input min/max"; "Final too big, will cause overflow."
    (supernode_utils.h:1249); the flat op's port checks.
"""


PadOf = Callable[[KernelContext, tuple[Tensor, ...], tuple[int, ...]], D32Padding]


def supernode_padding(ctx: KernelContext, inputs: tuple[Tensor, ...], shape: tuple[int, ...]
                      ) -> D32Padding:
    """``supernode_recalculate_strategy``'s output padding (also the input Supernode's)."""
    _, _, w, d = shape
    return D32Padding(4, 4, 4, (-w) & 3, 0, (-d) & 31)


def depthwise_padding(ctx: KernelContext, inputs: tuple[Tensor, ...],
                      shape: tuple[int, ...]) -> D32Padding:
    """``dwise_supernode_recalculate_strategy``'s output padding: the left pad follows the
    input's (not VALID: less the filter's reach before), divided by the stride width as C
    divides (toward zero); depth pads as the input's."""
    x, filt, stride = inputs[0], inputs[1], inputs[6]
    p, sw = x.padding, stride.shape[2]
    if p.w_before < 1:          # dwise_supernode_execute's own check, before any work
        raise KernelError("Need at least 1 left pad")
    left = p.w_before
    if ctx.padding is not Padding.VALID:
        left -= output_window(x.shape[2], filt.shape[1], sw, ctx.padding).before
    left = -(-left // sw) if left < 0 else left // sw
    if left < 0:
        # op_dwise_snode_8bit.c:410 gives a negative out_left_pad; the output's rows then
        # overlap the row (or depth slice) before, which a d32 layout cannot describe
        raise KernelError(f"the input's left padding ({p.w_before} columns) is a stride or "
                          "more short of what the filter reaches before each row: the "
                          f"device's output left padding would be {left} (out_left_pad = "
                          "(in_left_pad - required_w_before) / stride_width, "
                          "op_dwise_snode_8bit.c), rows that overlap; Hexscope does not "
                          "model it")
    return D32Padding(4, 4, left, (-(shape[2] + left)) & 3, p.d_before, p.d_after)


def _run(flat_op: str, ctx: KernelContext, x: Tensor, rest: tuple[Tensor, ...],
         pad_of: PadOf) -> tuple[Tensor, ...]:
    if not flat_op.startswith("Depthwise"):
        return run_hvx(ctx, x, *rest, bias32=flat_op.endswith("p32to8"),
                       short=x.layout is not Layout.D32)
    return depthwise_d32(ctx, x, rest, lambda shape: pad_of(ctx, (x, *rest), shape))


def _ports(flat: str, d32_in: bool) -> tuple[tuple[Port, ...], tuple[Port, ...]]:
    spec = REGISTRY.get(flat)
    ins, outs = spec.inputs.head, spec.outputs.head
    x = replace(ins[0], layout=Layout.D32) if d32_in else ins[0]
    return (x, *ins[1:]), (replace(outs[0], layout=Layout.D32), *outs[1:])


def _declare(name: str, flat: str, d32_in: bool, doc: str,
             pad_of: PadOf,
             check: Callable[[KernelContext, tuple[Tensor, ...]], None] | None = None) -> None:
    ins, outs = _ports(flat, d32_in)

    # a node's kept steady run first (its key stands for the checks below)
    kept = kept_run if flat.startswith("Depthwise") else run_fast if d32_in else None

    def kernel(ctx: KernelContext, x: Tensor, *rest: Tensor) -> tuple[Tensor, ...]:
        if kept is not None:
            done = kept(ctx, x, rest)
            if done is not None:
                return done
        if d32_in:
            require_d32(x)
        if check is not None:
            check(ctx, (x, *rest))
        return _run(flat, ctx, x, rest, pad_of)

    kernel.__doc__ = doc
    kernel.__name__ = name.lower()
    op(name, Category.D32, inputs=ins, outputs=outs, d32_output=True, uses_padding=True,
       reference=REGISTRY.get(flat).reference,
       zero_codes=REGISTRY.get(flat).zero_codes)(kernel)


for _bits in ("8", "32"):
    _flat_name = f"Supernode_8x8p{_bits}to8"
    _declare(f"{_flat_name}_d32", _flat_name, True,
             f"""{_flat_name} on d32 data (what prepare makes of it; op_supernode_new.c).

    **Semantics.** The inputs of {_flat_name}, its data in d32; the output in d32.
    """ + _SUPERNODE_DOC.format(flat=_flat_name, extra=""),
             supernode_padding)
    _declare(f"InputSupernode_8x8p{_bits}to8_outd32", _flat_name, False,
             f"""{_flat_name} for an input depth up to 4: flat data in, d32 out.

    **Semantics.** The inputs of {_flat_name} (flat data); the output in d32. Prepare makes
    it of a Supernode whose filter depth is at most 4, stride width at most 4 and 1 or even,
    without ChannelScale (``do_convert_to_short_conv``).
    """ + _SUPERNODE_DOC.format(
                 flat=_flat_name,
                 extra=(' (not raised: this form\'s input is flat); "Make this code work for '
                        'input depth > 4"; "Add support for stride > 4"')),
             supernode_padding)
    _flat_name = f"DepthwiseSupernode_8x8p{_bits}to8"
    _declare(f"{_flat_name}_d32", _flat_name, True,
             f"""{_flat_name} on d32 data (what prepare makes of it; op_dwise_snode_8bit.c).

    **Semantics.** The inputs of {_flat_name}, its data in d32; the output in d32.

    **Fidelity.** The logical values are the flat {_flat_name}'s, which Hexscope already
    computes as this d32 op does (docs/oracle-dwise.md). The output's padding is written as
    nnlib's depthwise asm writes it (checked under qemu-hexagon, docs/oracle-hvx.md;
    :func:`~hexscope.engine.ops.conv.dwise_d32.depthwise_d32`): the 3x3 kernels
    (no ChannelScale) compute the whole padded width and count those codes in the range
    search; the others write the data width in groups of 4 columns, a last group's columns
    past the data repeating its first column (past the right padding into the next slice's
    or row's left padding); depth padding lanes hold the code of a zero sum plus a zero
    bias. The windows read the input's padding as the asm does: its zero code only where
    nnlib zaps it (not a right padding that starts a vector), its own bytes elsewhere. With
    depth padding before, the asm pairs memory lane p of the input with the filter's
    channel p and the bias's, so channels meet other channels' filters: computed so. An
    output range without 0 runs from [0, 0] with both ends free, as nnlib runs it (its
    check's refusal is ignored). The 3x3 kernel at stride width 2 reads the third filter
    row of each row and slice's first group from a once-shuffled vector (``x2`` and
    ``x2_ba98`` are one register in dwconv2dbbb_s2_3x3_h.S): computed so, which matters
    only for a left padding not zapped whole. The 5xN kernel at stride width 2 shifts a
    last group's second column twice when the group has one data column (its copy of the
    first sum follows that sum's shift, dwconv2dbbb_s2_5xN_h.S): that column's code and
    its place in the range search are computed so. Those MxN kernels shift by a vector
    count, its low 6 bits read as signed (32..63: a right shift), which a tiny fixed range
    (shamt 99) meets: computed so. Not modelled: a bias buffer past int32, which
    nnlib runs
    with the rest of the buffer undetermined ('Final too big' here), and a few of those
    ranges (docs/oracle-hvx.md).

    **Layout.** Output padding as ``dwise_supernode_execute`` chooses it: 4 rows above and
    below; left the input's left padding (SAME: less the filter's reach before) divided by
    the stride width (C's division, toward zero); right to a multiple of 4; the input's
    depth padding.

    **Errors.** "input 0 must be a d32 tensor"; "Need at least 1 left pad", "filter depth
    must match input depth" (the input's padded depth against the filter's rounded up to
    32), "inadequate top/bottom padding" (nnlib's own);
    the flat op's own errors; an input left padding a stride or more short of the filter's
    reach before each row (SAME): the device runs it with a negative output left padding,
    rows that overlap, which is not modelled.
    """,
             depthwise_padding)
