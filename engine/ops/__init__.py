"""Importing this package registers every op. Each family module declares its ops once."""

from hexscope.engine.ops import (  # noqa: F401  (importing a family registers its ops)
    activation,
    checks,
    close_d32,
    concat,
    concat_d32,
    conv,
    d32_arith,
    d32_convert,
    elementwise,
    fill_padding,
    float_ops,
    gather,
    io,
    matmul,
    pooling,
    pprint,
    quantize,
    requantize,
    shape,
    state,
    supernode,
)
from hexscope.engine.ops.registry import REGISTRY, Category, OpRegistry, OpSpec, Port, Repeat, op

__all__ = ["REGISTRY", "Category", "OpRegistry", "OpSpec", "Port", "Repeat", "op"]
