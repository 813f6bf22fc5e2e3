"""The numpy paths as the reference of a compiled kernel's test."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def numpy_paths() -> Iterator[None]:
    """Every compiled kernel off for the block (``HEXSCOPE_KERNELS=numpy``)."""
    before = os.environ.get("HEXSCOPE_KERNELS")
    os.environ["HEXSCOPE_KERNELS"] = "numpy"
    try:
        yield
    finally:
        if before is None:
            del os.environ["HEXSCOPE_KERNELS"]
        else:
            os.environ["HEXSCOPE_KERNELS"] = before
