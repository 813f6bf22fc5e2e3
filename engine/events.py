"""Emitter and the engine's events. Events are frozen and carry ids and read-only tensors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

from hexscope.engine.tensor import Tensor

E = TypeVar("E")


class Emitter(Generic[E]):
    """Synchronous callbacks, in connection order. Exceptions propagate to the emitter."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[E], object]] = []

    def connect(self, callback: Callable[[E], object]) -> Callable[[], None]:
        """Add a callback; returns a function that disconnects it."""
        self._callbacks.append(callback)

        def disconnect() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return disconnect

    def emit(self, event: E) -> None:
        for callback in list(self._callbacks):
            callback(event)

    def listened(self) -> bool:
        """Whether an event emitted here reaches any callback, looking through callbacks
        that only forward to another emitter (a session forwards its executor's events): the
        executor's fast plan skips building events no one receives."""
        for callback in self._callbacks:
            owner = getattr(callback, "__self__", None)
            if isinstance(owner, Emitter) and getattr(callback, "__func__", None) is Emitter.emit:
                if owner.listened():
                    return True
                continue
            return True
        return False


class RunStatus(Enum):
    FINISHED = "finished"        # every node ran
    PAUSED = "paused"            # stopped at a breakpoint or target, or cancelled
    FAILED = "failed"            # a node failed


@dataclass(frozen=True, slots=True)
class NodeStarted:
    node_id: int
    index: int          # position in the execution plan
    total: int


@dataclass(frozen=True, slots=True)
class NodeFinished:
    node_id: int
    outputs: tuple[Tensor, ...]
    seconds: float
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeFailed:
    node_id: int
    op: str
    message: str
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class BreakpointHit:
    node_id: int


@dataclass(frozen=True, slots=True)
class RunFinished:
    status: RunStatus
    next_node: int | None = None
    failed_node: int | None = None
    message: str = ""


@dataclass(frozen=True, slots=True)
class LogLine:
    level: int
    text: str
    node_id: int | None = None
    # a node's warning (KernelContext.warn): written at level 0 as the library would, but
    # counted as a warning, as the node and the Problems panel show it
    warning: bool = False


@dataclass(frozen=True, slots=True)
class GraphEdited:
    description: str
    changed: frozenset[int] = field(default_factory=frozenset)
    # False when only editor positions or labels changed: no result depends on the edit
    affects_results: bool = True
