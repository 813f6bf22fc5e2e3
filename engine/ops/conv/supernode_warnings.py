"""What the d32 Supernodes' asm does that Hexscope cannot model, said as a warning."""

from __future__ import annotations

from hexscope.engine.tensor import Tensor


def weights_overrun(x: Tensor, filt: Tensor) -> str | None:
    """The warning for a d32 input with more depth slices than the filter is packed for
    (None if not): the asm takes taps for all 32 x nd32_total input lanes
    (op_supernode_new.c:3056) from weights packed for the filter's depth (:4558), so it reads
    past them into the heap; Hexscope takes zero-code weights there (docs/oracle-hvx.md)."""
    p = x.padding
    lanes = p.d_before + x.shape[3] + p.d_after
    packed = (filt.shape[2] + 31) & ~31
    if lanes <= packed:
        return None
    return (f"the input has {lanes} lanes of depth and the filter is packed for {packed}: "
            "the device's asm reads the filter for every lane (op_supernode_new.c:3056), past "
            "its weights buffer into other heap memory (not modelled: Hexscope takes the "
            "filter's zero code there), so the device's output may differ")


__all__ = ["weights_overrun"]
