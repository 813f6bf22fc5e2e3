"""A run frozen at one moment, for the analyses to read on another thread (issue 12).

The app compares in the background while the user may step on: the comparison must not read
the live session, whose trace a step changes. :meth:`RunSnapshot.of` copies, while the
executor is idle, what the float-reference analyses read of a session (the prepared graph and
tensors are immutable: only the containers are copied, in well under a millisecond for 5,000
nodes); the analyses take it where they take a session. Its ``cancel`` token stops them
between two nodes (:class:`~hexscope.engine.errors.Cancelled`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hexscope.engine.errors import Cancelled
from hexscope.engine.executor import CancelToken, NodeResult, lookup_input
from hexscope.engine.ops.registry import OpRegistry
from hexscope.engine.prepare import Prepared
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.session import Session


@dataclass(frozen=True)
class FrozenExecutor:
    """What the analyses read of an executor."""

    prepared: Prepared
    trace: Mapping[int, NodeResult]
    stale: frozenset[int]
    store: Mapping[tuple[int, int], Tensor]
    graph_inputs: tuple[Tensor, ...]

    def input_tensor(self, ref: tuple[int, int]) -> Tensor:
        return lookup_input(self.prepared, self.store, self.trace, self.stale, ref)


@dataclass(frozen=True)
class BackendLabel:
    name: str


@dataclass(frozen=True)
class RunSnapshot:
    """A session's run as the analyses read it, at one moment."""

    prepared: Prepared
    registry: OpRegistry
    inputs: tuple[Tensor, ...]
    backend: BackendLabel
    executor: FrozenExecutor
    cancel: CancelToken | None = None

    @property
    def plan(self) -> tuple[int, ...]:
        return self.prepared.plan

    @classmethod
    def of(cls, session: Session, cancel: CancelToken | None = None) -> RunSnapshot:
        """``session``'s run now (call it while its executor is idle)."""
        ex = session.executor
        frozen = FrozenExecutor(ex.prepared, dict(ex.trace), frozenset(ex.stale),
                                dict(ex.store), tuple(ex.graph_inputs))
        return cls(session.prepared, session.registry, tuple(session.inputs),
                   BackendLabel(session.backend.name), frozen, cancel)


def check_cancel(run: object) -> None:
    """Raise Cancelled when ``run`` is a snapshot whose token has been cancelled."""
    token = getattr(run, "cancel", None)
    if token is not None and token.cancelled:
        raise Cancelled("the analysis was cancelled")


__all__ = ["BackendLabel", "FrozenExecutor", "RunSnapshot", "check_cancel"]
