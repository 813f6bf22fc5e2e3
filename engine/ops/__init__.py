"""Importing this package registers every op. Each family module declares its ops once."""

from hexscope.engine.ops import io  # noqa: F401
from hexscope.engine.ops.registry import REGISTRY, Category, OpRegistry, OpSpec, Port, Repeat, op

__all__ = ["REGISTRY", "Category", "OpRegistry", "OpSpec", "Port", "Repeat", "op"]
