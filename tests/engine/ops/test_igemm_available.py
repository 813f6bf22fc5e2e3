"""The integer GEMM kernel compiles wherever it can (engine/ops/kernels/igemm.py).

Kept apart from test_igemm.py, whose tests all skip when the kernel is not available: a
kernel that failed to build would fall back to float32 silently and skip them too.
"""

from __future__ import annotations

import pytest

from hexscope.engine.ops.kernels import igemm


def _host_has_avx2() -> bool:
    try:
        with open("/proc/cpuinfo") as info:
            return any(line.startswith("flags") and " avx2" in line for line in info)
    except OSError:
        return False


@pytest.mark.skipif(not _host_has_avx2(), reason="no AVX2 on this processor")
def test_the_kernel_runs_where_it_can() -> None:
    """On a processor with AVX2 and llvmlite installed, the kernel must compile: a failure
    there would otherwise fall back to float32 silently and skip the tests of test_igemm.py."""
    import llvmlite.binding  # noqa: F401  (a dependency of the project)

    igemm._kernel.cache_clear()
    assert igemm._kernel() is not None
