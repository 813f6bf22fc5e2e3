"""hexscope.engine: hexagon_nn graphs, d32 tensors, the op registry and the simulated HVX.

Pure Python, numpy and networkx: nothing here imports Qt.
"""

from hexscope.engine import ops  # noqa: F401  (registers every op)
from hexscope.engine.d32 import D32Padding, default_padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import (
    BackendError,
    CheckFailed,
    EngineError,
    GraphError,
    GraphFileError,
    InputError,
    KernelError,
    NodeError,
    NotSimulatedError,
    UnknownOpError,
)
from hexscope.engine.events import (
    BreakpointHit,
    LogLine,
    NodeFailed,
    NodeFinished,
    NodeStarted,
    RunFinished,
    RunStatus,
)
from hexscope.engine.executor import CancelToken, NodeStatus
from hexscope.engine.graph import Edit, Graph
from hexscope.engine.nodes import Node, OutputDef, Padding
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.quant import QuantRange
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor
from hexscope.engine.validate import Issue, validate

__all__ = [
    "REGISTRY", "BackendError", "BreakpointHit", "CancelToken", "CheckFailed", "D32Padding",
    "DType", "Edit", "EngineError", "Graph", "GraphError", "GraphFileError", "InputError",
    "Issue", "KernelError", "Layout", "LogLine", "Node", "NodeError", "NodeFailed",
    "NodeFinished", "NodeStarted", "NodeStatus", "NotSimulatedError", "OutputDef", "Padding",
    "QuantRange", "RunFinished", "RunStatus", "Session", "Tensor", "UnknownOpError",
    "default_padding", "validate",
]
