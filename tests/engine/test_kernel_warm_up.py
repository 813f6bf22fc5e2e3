"""The install's warm-up compiles every compiled kernel, not only those the bundled examples
reach (issue 32: a first F10 of 20 s on a 10,000-node graph while kernels compiled)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import hexscope.engine
from hexscope.engine.ops.kernels.warm import WARMERS, warm_all

# what makes a module compile machine code at run time: a numba kernel, or the GEMM's LLVM
_COMPILES = re.compile(r"\bnjit\(|create_mcjit_compiler\(")


def _compiling_modules() -> set[str]:
    root = Path(hexscope.engine.__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        if _COMPILES.search(path.read_text(encoding="utf-8")):
            parts = path.relative_to(root).with_suffix("").parts
            found.add(".".join(("hexscope", "engine", *parts)))
    return found


def test_every_module_that_compiles_kernels_is_warmed_up():
    found = _compiling_modules()
    assert "hexscope.engine.ops.kernels.compiled_defs" in found     # the scan does see them
    assert found - set(WARMERS) == set(), "add these modules to kernels/warm.py WARMERS"
    assert set(WARMERS) - found == set(), "WARMERS lists modules that compile nothing"
    for module in WARMERS:
        importlib.import_module(module.rsplit(".", 1)[0])


def test_the_warm_up_compiles_them_all_without_a_failure():
    assert warm_all() == []


_COUNT_COMPILES = """
from numba.core import event
from hexscope.engine.ops.kernels.warm import warm_all
with event.install_recorder("numba:compile") as rec:
    assert warm_all() == []
print(sorted({getattr(ev.data.get("dispatcher"), "py_func", None).__qualname__
              for _, ev in rec.buffer if ev.is_start}))
"""


def test_a_second_process_loads_every_kernel_from_the_cache_without_compiling():
    """The kernels that called other kernels built in a closure (depthwise's narrow,
    normalize_loops' three loops) were compiled again in every process: numba keys their
    cache by the callees' per-process ids. 46 compiles, 3.3 s of every app start's preload
    beside the window (issue 32), and one more cache entry each time."""
    import subprocess
    import sys

    runs = [subprocess.run([sys.executable, "-c", _COUNT_COMPILES], capture_output=True,
                           text=True, timeout=600) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    assert runs[1].stdout.strip() == "[]", runs[1].stdout     # the first may fill the cache
