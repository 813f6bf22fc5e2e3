"""Shared fixtures. Qt runs offscreen; any test that uses qtbot is marked "qt"."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from hexscope.engine import Graph  # noqa: E402
from hexscope.engine.backends import FakeBackend, SimBackend  # noqa: E402
from hexscope.engine.plugins import load_plugins_from, unload_plugin  # noqa: E402

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "qtbot" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.qt)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture
def small_graph() -> Graph:
    """INPUT -> QuantizedRelu_8 -> OUTPUT, with float32 range consts."""
    g = Graph()
    g.append_node(0x2000, "INPUT", outputs=1)
    g.append_const_node(0x1001, np.array([-1.0], np.float32))
    g.append_const_node(0x1002, np.array([3.0], np.float32))
    g.append_node(0x2001, "QuantizedRelu_8", inputs=[(0x2000, 0), (0x1001, 0), (0x1002, 0)],
                  outputs=3)
    g.append_node(0x2002, "OUTPUT", inputs=[(0x2001, 0)])
    return g


@pytest.fixture
def chain_graph() -> Graph:
    """INPUT -> Nop -> Nop -> Nop -> OUTPUT: runs with only the foundation's kernels."""
    g = Graph()
    g.append_node(0x100, "INPUT", outputs=1)
    for k in range(3):
        g.append_node(0x101 + k, "Nop", inputs=[(0x100 + k, 0)], outputs=1)
    g.append_node(0x200, "OUTPUT", inputs=[(0x103, 0)])
    return g


@pytest.fixture
def fake_backend() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def sim_backend() -> SimBackend:
    return SimBackend()


@pytest.fixture(params=["int", "int16", "float"])
def gemm_backend(request, monkeypatch) -> str:
    """Runs a test with each GEMM path: the integer kernel this machine prefers (VNNI where
    it runs), the int16 AVX2 kernel (``HEXSCOPE_GEMM=int16``; both skipped where they do not
    run), and the float32 BLAS path (``HEXSCOPE_GEMM=float``): all must be exact."""
    from hexscope.engine.ops.kernels import igemm

    monkeypatch.delenv("HEXSCOPE_GEMM", raising=False)
    if request.param in ("float", "int16"):
        monkeypatch.setenv("HEXSCOPE_GEMM", request.param)
    if request.param != "float" and not igemm.available():
        pytest.skip("the integer GEMM kernel does not run on this machine")
    return request.param


@pytest.fixture(params=["compiled", "numpy"], scope="module")
def kernels(request) -> Iterator[str]:
    """Runs a test once with the compiled elementwise kernels (numba; skipped where they do
    not load) and once with the numpy paths (``HEXSCOPE_KERNELS=numpy``): both must be
    exact. Module-scoped (it sets the variable itself), so hypothesis tests may use it."""
    import os

    from hexscope.engine.ops.kernels import compiled

    saved = os.environ.pop("HEXSCOPE_KERNELS", None)
    try:
        if request.param == "numpy":
            os.environ["HEXSCOPE_KERNELS"] = "numpy"
        elif compiled.kernel("supernode_epilogue") is None:
            pytest.skip("the compiled kernels do not load on this machine")
        yield request.param
    finally:
        os.environ.pop("HEXSCOPE_KERNELS", None)
        if saved is not None:
            os.environ["HEXSCOPE_KERNELS"] = saved


@pytest.fixture(scope="module")
def bundled_plugins() -> Iterator[None]:
    """The user ops that ship in resources/plugins (the app loads them at start; padding_demo
    uses one), for a module: ``pytestmark = pytest.mark.usefixtures("bundled_plugins")``."""
    specs = load_plugins_from(RESOURCES / "plugins")
    yield
    unload_plugin(specs)
