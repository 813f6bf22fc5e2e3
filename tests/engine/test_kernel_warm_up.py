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
