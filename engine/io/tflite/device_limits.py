"""Operators the delegate takes and builds whose hexagon_nn node nnlib cannot run.

The delegate's rules (``utils.cc``, ``IsNodeSupportedByHexagon``) and builders know nothing of
some shapes nnlib's kernels refuse, so such a model is delegated whole and fails on the DSP.
The importer says so up front, naming the operator and the reason, instead of leaving it to
the run. Restated from reading, not copied:

- ``DEPTHWISE_CONV_2D``: ``conv_2d_builder.cc`` always makes ``DepthwiseSupernode_8x8p32to8``
  (a Supernode only for one input channel with a multiplier), whatever the filter's shape,
  and ``utils.cc`` checks types, activation, strides up to 3, dilation and multiplier, never
  the filter. nnlib's flat ``DepthwiseSupernode_8x8p32to8`` has no kernel of its own
  (``op_supernode.c``, ``dwise_unsup_nond32``: "Non-D32 supernode not supported"); prepare
  always makes it ``DepthwiseSupernode_8x8p32to8_d32`` (``prepare.c``, the d32 conversion),
  whose kernels take filter widths 3, 5 and 7, filter height 2 or more and stride width 1 or
  2 (``op_dwise_snode_8bit.c``: ``dwise_supernode_check`` and
  ``dwise_supernode_recalculate_strategy``). nnlib's own narrower path, a
  ``QuantizedDepthwiseConv2d_8x8to32`` left unfused when its filter is not 3, 5 or 7 wide
  (``prepare.c``, ``dwconv_extrachecks``), is never built by the delegate.
"""

from __future__ import annotations

from hexscope.engine.io.tflite.model import TfModel, TfOperator

DWISE_WIDTHS = (3, 5, 7)
DWISE_STRIDE_WIDTHS = (1, 2)


def depthwise_problem(filter_hw: tuple[int, int], stride_w: int) -> str:
    """Why nnlib's DepthwiseSupernode_8x8p32to8_d32 cannot run a filter of ``filter_hw``
    (height, width) at stride width ``stride_w``; '' when it can."""
    fh, fw = filter_hw
    if fw > 7:
        return (f"filter width {fw} > 7 (op_dwise_snode_8bit.c: 'Oops: implement depthwise "
                "support for filt width > 7')")
    if fh < 2:
        return (f"filter height {fh} (op_dwise_snode_8bit.c: 'Only currently support filter "
                "height >= 2')")
    if fw not in DWISE_WIDTHS:
        return (f"filter width {fw}: nnlib's depthwise kernels take filter widths 3, 5 and 7 "
                "only (op_dwise_snode_8bit.c, dwise_supernode_recalculate_strategy: "
                "'filter width currently only 3,5, 7')")
    if stride_w not in DWISE_STRIDE_WIDTHS:
        return (f"stride width {stride_w}: nnlib's depthwise kernels take stride width 1 or 2 "
                "only (op_dwise_snode_8bit.c: 'horizontal stride currently only 1 or 2')")
    return ""


def device_refusal(model: TfModel, op: TfOperator) -> str:
    """Why the DSP cannot run the node the delegate builds for ``op`` ('' when it can), with
    the operator's filter named (height x width; TFLite writes [1, H, W, C])."""
    if op.code != "DEPTHWISE_CONV_2D" or len(op.inputs) < 2:
        return ""
    data, weights = model.tensor(op.inputs[0]), model.tensor(op.inputs[1])
    if int(op.options.get("DepthMultiplier", 1)) > 1 and data.shape[-1:] == (1,):  # type: ignore[call-overload]
        return ""           # built as a Supernode_8x8p32to8 (conv_2d_builder.cc)
    if len(weights.shape) != 4:
        return ""
    fh, fw = int(weights.shape[1]), int(weights.shape[2])
    problem = depthwise_problem((fh, fw), int(op.options.get("StrideW", 1)))  # type: ignore[call-overload]
    if not problem:
        return ""
    return (f"its {fh}x{fw} filter (height x width, {weights.describe()}) becomes "
            f"DepthwiseSupernode_8x8p32to8_d32, and {problem}; the delegate builds it "
            "regardless (conv_2d_builder.cc), so the device fails at this node and Hexscope's "
            "run stops there")


def device_refusals(model: TfModel, operators: tuple[int, ...] | list[int]) -> dict[int, str]:
    """Operator index -> :func:`device_refusal` for those of ``operators`` the DSP cannot
    run."""
    found = {i: device_refusal(model, model.operators[i]) for i in operators}
    return {i: why for i, why in found.items() if why}


__all__ = ["DWISE_WIDTHS", "depthwise_problem", "device_refusal", "device_refusals"]
