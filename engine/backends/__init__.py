"""Backends by name. ``make_backend("sim")``; ``dsp://HOST:PORT`` names a connected DSP."""

from __future__ import annotations

from collections.abc import Callable

from hexscope.engine.backends.base import Backend
from hexscope.engine.backends.fake import FakeBackend
from hexscope.engine.backends.remote import RemoteBackend, make_remote_backend
from hexscope.engine.backends.sim import SimBackend
from hexscope.engine.errors import BackendError

BACKENDS: dict[str, Callable[[], Backend]] = {"sim": SimBackend, "fake": FakeBackend}


def make_backend(spec: str | Backend) -> Backend:
    """A backend from its name, or the object itself."""
    if not isinstance(spec, str):
        return spec
    if spec.startswith("dsp://"):
        # the token comes from $HEXSCOPE_AGENT_TOKEN (the command line's --token sets it)
        return make_remote_backend(spec)
    try:
        return BACKENDS[spec]()
    except KeyError:
        raise BackendError(f"unknown backend {spec!r}; choose one of "
                           f"{', '.join(sorted(BACKENDS))} or dsp://HOST:PORT") from None


__all__ = ["BACKENDS", "Backend", "FakeBackend", "RemoteBackend", "SimBackend", "make_backend"]
