"""Small LLVM IR helpers shared by the kernels written as numba intrinsics."""

from __future__ import annotations

from llvmlite import ir


def splat(builder: ir.IRBuilder, value: ir.Value, vty: ir.VectorType) -> ir.Value:
    """``value`` in every lane of a vector of type ``vty``."""
    i32 = ir.IntType(32)
    one = builder.insert_element(ir.Constant(vty, ir.Undefined), value, i32(0))
    return builder.shuffle_vector(one, ir.Constant(vty, ir.Undefined),
                                  ir.Constant(ir.VectorType(i32, vty.count), [0] * vty.count))
