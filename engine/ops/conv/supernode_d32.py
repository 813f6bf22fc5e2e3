"""The d32 Supernodes nnlib's prepare makes of the flat ones (prepare.c ``convert_to_depth32``,
``depth32_replacement_op``, ``do_convert_to_short_conv``): Supernode_8x8p8to8_d32 and
Supernode_8x8p32to8_d32 (op_supernode_new.c), InputSupernode_8x8p8to8_outd32 and
_8x8p32to8_outd32 (the "short input" form for input depths up to 4: flat in, d32 out), and
DepthwiseSupernode_8x8p8to8_d32 / _8x8p32to8_d32 (op_dwise_snode_8bit.c).

Each takes the flat op's inputs, reads its data in d32 (the input Supernode: flat), computes
the flat op's logical values and writes them in d32 with the padding the op chooses. The
HVX arithmetic cannot run on the host (no HVX emulation is available: LLVM's
hvx_hexagon_protos.h only maps the intrinsics to compiler builtins), so what it computes is
modelled, per op, in the docs below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops.context import KernelContext, require_d32

# conv_sums and compiled: the sim backend's warm-up looks for them in a kernel's module, and
# these kernels run the flat Supernodes' (engine/backends/sim.py)
from hexscope.engine.ops.conv.conv2d import conv_sums, output_window  # noqa: F401
from hexscope.engine.ops.conv.supernode_hvx import run_hvx
from hexscope.engine.ops.kernels import compiled  # noqa: F401
from hexscope.engine.ops.registry import REGISTRY, Category, Port, op
from hexscope.engine.tensor import Tensor, fresh

_SUPERNODE_DOC = """

    **Fidelity.** The logical values are the flat {flat}'s (Hexscope's simulation of
    nnlib's ``supernode_execute_ref``, oracle-exact: docs/oracle-conv.md). The HVX op
    (op_supernode_new.c) computes the same integer sums (``gvmsumb`` on the d32 input; the
    filter is padded to 32 with zeros) but requantizes them its own way: a bias buffer per
    channel and a fixed-point multiplier with shift (``fill_info_minmax_basics``,
    supernode_utils.h), where the ``_ref`` rounds a float product per element; the two may
    differ by one code. A fixed output range with min < 0 is first moved so that 0 is a
    code, as ``setup_initial_output_range`` does (``adjust_minmax_for_zero_with_constraints``,
    both ends fixed; the flat ``_ref`` keeps it): [-6, 6] runs as [-6.0235, 5.9765]. Its
    range search (``-inf``/``+inf``
    outputs) follows the same retry as the flat op here; the device's first guess and
    quarter-octave growth (docs/oracle-dwise.md, shared code) are not applied: unconfirmed
    on the device. With a 13th ChannelScale input the device keeps the scales in its
    per-channel multipliers (``load_channel_scales``, ``k_factor``); Hexscope folds them
    into the weight codes as prepare folds a flat Supernode's (``rescale_weights``), which
    may round differently: unconfirmed on the device.

    **Layout.** Output padding as ``supernode_recalculate_strategy`` chooses it: 4 rows above
    and below, 4 columns left, (-width) & 3 right, depth padded after to a multiple of 32.

    **Errors.** "input 0 must be a d32 tensor"{extra}; the flat op's own errors.
"""


PadOf = Callable[[KernelContext, tuple[Tensor, ...], tuple[int, ...]], D32Padding]


def _flat(x: Tensor) -> Tensor:
    data = x.array
    if x.layout is Layout.D32:
        fresh(data)         # a d32 tensor's array is a new copy: the flat tensor takes it
    return Tensor.from_array(data, x.dtype)


def d32_out(ctx: KernelContext, y: Tensor | np.ndarray, pad: D32Padding) -> Tensor:
    t = y if isinstance(y, Tensor) else Tensor.from_array(y, DType.QUINT8)
    return t.to_d32(pad, ctx.padding_fill)


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
    inputs = (x, *rest)
    y, lo, hi = REGISTRY.get(flat_op).kernel(ctx, _flat(inputs[0]), *inputs[1:])
    return d32_out(ctx, y, pad_of(ctx, (x, *rest), tuple(y.shape))), lo, hi


def _ports(flat: str, d32_in: bool) -> tuple[tuple[Port, ...], tuple[Port, ...]]:
    spec = REGISTRY.get(flat)
    ins, outs = spec.inputs.head, spec.outputs.head
    x = replace(ins[0], layout=Layout.D32) if d32_in else ins[0]
    return (x, *ins[1:]), (replace(outs[0], layout=Layout.D32), *outs[1:])


def _declare(name: str, flat: str, d32_in: bool, doc: str,
             pad_of: PadOf,
             check: Callable[[KernelContext, tuple[Tensor, ...]], None] | None = None) -> None:
    ins, outs = _ports(flat, d32_in)

    def kernel(ctx: KernelContext, x: Tensor, *rest: Tensor) -> tuple[Tensor, ...]:
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
    computes as this d32 op does (docs/oracle-dwise.md).

    **Layout.** Output padding as ``dwise_supernode_execute`` chooses it: 4 rows above and
    below; left the input's left padding (SAME: less the filter's reach before) divided by
    the stride width (C's division, toward zero); right to a multiple of 4; the input's
    depth padding.

    **Errors.** "input 0 must be a d32 tensor"; "Need at least 1 left pad" (nnlib's own);
    the flat op's own errors; an input left padding a stride or more short of the filter's
    reach before each row (SAME): the device runs it with a negative output left padding,
    rows that overlap, which is not modelled.
    """,
             depthwise_padding)
