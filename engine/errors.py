"""Every error the engine raises derives from :class:`EngineError`.

Messages name the node (in hex) or the file, say what was expected and what was found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hexscope.engine.validate import Issue


class EngineError(Exception):
    """Base class of every engine error."""


class GraphError(EngineError):
    """A graph is invalid. Carries every problem found, so an editor can mark them all."""

    def __init__(self, message: str, issues: Sequence[Issue] = ()) -> None:
        self.issues = tuple(issues)
        if self.issues:
            message = message + "\n" + "\n".join(f"  - {i}" for i in self.issues)
        super().__init__(message)


class UnknownOpError(EngineError):
    """An op name or id that neither the registry nor hexagon_nn's op table knows."""


class DuplicateOpError(EngineError):
    """An op was registered twice under the same name."""


class GraphFileError(EngineError):
    """A graph file is corrupt, truncated, of a future version or otherwise unreadable."""


class InputError(EngineError):
    """The inputs given to a session do not fit the graph's INPUT node."""


class NodeError(EngineError):
    """A node failed while running. ``node_id`` names it; the message says why."""

    def __init__(self, node_id: int, op: str, message: str) -> None:
        self.node_id = node_id
        self.op = op
        self.reason = message
        super().__init__(f"node 0x{node_id:x} ({op}): {message}")


class KernelError(EngineError):
    """Raised inside a kernel; the executor wraps it into a :class:`NodeError`."""


class CheckFailed(KernelError):
    """A Check/Close node found a mismatch (hexagon_nn's test-failure report)."""


class NotSimulatedError(KernelError):
    """The op is declared but the simulator has no kernel for it."""


class KernelContractError(KernelError):
    """A kernel returned outputs that do not match its op declaration."""


class PluginError(EngineError):
    """A plugin file of user-defined ops failed to load; the message names the file and line."""


class BackendError(EngineError):
    """A backend (simulator or connected DSP) failed for reasons outside the graph."""


class Cancelled(Exception):
    """Work stopped because its caller cancelled it (not an error of the graph or engine)."""
