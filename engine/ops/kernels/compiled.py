"""Compiled elementwise kernels (numba, from PyPI), one pass over the data where numpy needs
several; numpy stays the fallback and the reference, and the exactness tests run both.

Why numba rather than more LLVM IR built by hand (``igemm``): these kernels are short loops
of integer and float32 steps whose exact order matters (the device's wrap, rounding and
saturation), and numba lets them be written and reviewed as plain Python loops that LLVM then
vectorises; the GEMM kernel needs instruction-level control numba does not give. Figures are
in bench/README.md.

The kernels compile on first use (about a second in all, once per process) and are cached on
disk by numba (``cache=True``: in ``__pycache__`` beside this file, or numba's user cache
where that is read-only), so later processes, batch workers among them, load them in
milliseconds. ``HEXSCOPE_KERNELS=numpy`` (or numba missing or failing to compile) keeps the
numpy paths.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

_LOCK = threading.Lock()
_KERNELS: dict[str, Any] = {}
_FAILED: set[str] = set()


def enabled() -> bool:
    return os.environ.get("HEXSCOPE_KERNELS", "").lower() not in ("numpy", "off", "0")


def kernel(name: str) -> Callable[..., Any] | None:
    """The compiled kernel ``name`` of :mod:`compiled_defs`, or None (numpy then)."""
    if not enabled():
        return None
    found = _KERNELS.get(name)
    if found is not None or name in _FAILED:
        return found
    with _LOCK:
        if name in _KERNELS or name in _FAILED:
            return _KERNELS.get(name)
        try:
            from hexscope.engine.ops.kernels import compiled_defs

            _KERNELS[name] = getattr(compiled_defs, name)
        except Exception:  # noqa: BLE001 - no numba, or it cannot compile here: numpy runs
            _FAILED.add(name)
            return None
    return _KERNELS[name]


def load() -> bool:
    """Compile (or load from numba's disk cache) every kernel now, as prepare does for a graph
    that uses them: a run's first node is then not charged with it (seconds on a first
    install, most of a second per process after). True when the compiled kernels are on."""
    return kernel("clamp_codes") is not None     # the module compiles all its kernels


def compile_once(build: Callable[[], T]) -> Callable[[], T | None]:
    """A getter of ``build()``'s kernels, built on first use, once per process, under a lock;
    it gives None where the compiled kernels are off or ``build`` raised (no numba, or it
    cannot compile here). What :func:`kernel` is for compiled_defs, for the kernel modules
    that build their own (depthwise, dwise_requant)."""
    lock = threading.Lock()
    built: list[T | None] = []

    def get() -> T | None:
        if not enabled():
            return None
        with lock:
            if not built:
                try:
                    built.append(build())
                except Exception:  # noqa: BLE001 - no numba, or it cannot compile here
                    built.append(None)
        return built[0]

    return get


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` as a read-only view: numba compiles a writeable and a read-only array as two
    forms, and a kernel's input comes both ways (a const's or a kept tensor is read-only),
    so an input passed read-only always needs only the form the warm-up compiled (the
    first Compare, or MobileNetV2's softmax, compiled another after install)."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


__all__ = ["compile_once", "enabled", "kernel", "load", "read_only"]
