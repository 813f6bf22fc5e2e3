"""Ctrl+C on the command line (issue 33): during start-up and during ``run -j 2``, to the
whole process group (a terminal's Ctrl+C) or to the parent alone: one line, exit 130, no
worker traceback, the workers stopped at once and none left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "classic_quantized.hexgraph"


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    """The example graph and 1,500 input files: a batch far longer than the test waits."""
    d = tmp_path_factory.mktemp("signals")
    (d / "g.hexgraph").write_bytes(EXAMPLE.read_bytes())
    (d / "many").mkdir()
    rng = np.random.default_rng(0)
    for k in range(1500):
        np.save(d / "many" / f"{k:04d}.npy",
                rng.uniform(-1, 1, (1, 16, 16, 3)).astype(np.float32))
    return d


def _start(args: list[str], cwd: Path, tag: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HEXSCOPE_SIGNAL_TEST": tag}     # marks the workers too
    return subprocess.Popen([sys.executable, "-m", "hexscope.app", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _tagged_processes(tag: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"HEXSCOPE_SIGNAL_TEST={tag}".encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _interrupt(proc: subprocess.Popen[str], group: bool) -> float:
    start = time.perf_counter()
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    proc.wait(timeout=60)
    return time.perf_counter() - start


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("group", [True, False], ids=["terminal", "parent-alone"])
def test_ctrl_c_during_a_parallel_run_stops_the_workers_with_one_line(batch, group):
    tag = uuid.uuid4().hex
    proc = _start(["run", "g.hexgraph", "--inputs-dir", "many", "-j", "2"], batch, tag)
    line = proc.stdout.readline()           # the first run is done: the workers are busy
    assert line.startswith("run 1/1500"), line + proc.stderr.read()
    seconds = _interrupt(proc, group)
    err = proc.stderr.read()
    rest = proc.stdout.read()
    assert proc.returncode == 130, err
    assert err == "hexscope: interrupted\n"
    assert "Traceback" not in rest
    assert seconds < 10         # was 34.5 s of a 36.4 s batch: it waited for every set
    deadline = time.monotonic() + 5
    while _tagged_processes(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _tagged_processes(tag) == []


def _wait_for(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never came"
        time.sleep(0.005)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")
def test_ctrl_c_while_our_imports_run_is_one_line(batch):
    """Once Python is up (numpy's library is being mapped: our imports run), a Ctrl+C is our
    one line. Before that, Python's own start-up (its site module) prints its own error:
    nothing of Hexscope runs yet."""
    proc = _start(["info", "g.hexgraph"], batch, uuid.uuid4().hex)
    maps = Path(f"/proc/{proc.pid}/maps")
    _wait_for(lambda: "numpy" in maps.read_text() or proc.poll() is not None)
    _interrupt(proc, group=True)
    err = proc.stderr.read()
    assert proc.returncode == 130, err
    assert err == "hexscope: interrupted\n"


def test_ctrl_c_while_a_plugin_loads_is_one_line(batch, tmp_path):
    ready = tmp_path / "ready"
    plugin = tmp_path / "slow.py"
    plugin.write_text(f"import pathlib, time\npathlib.Path({str(ready)!r}).touch()\n"
                      "time.sleep(60)\n")
    proc = _start(["--plugin", str(plugin), "info", "g.hexgraph"], batch, uuid.uuid4().hex)
    _wait_for(ready.exists)
    seconds = _interrupt(proc, group=True)
    err = proc.stderr.read()
    assert proc.returncode == 130, err
    assert err == "hexscope: interrupted\n" and seconds < 5


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_sigterm_stops_like_ctrl_c_and_a_killed_parent_leaves_no_worker(batch):
    """SIGTERM (kill, a CI timeout) ends the batch as Ctrl+C does, exit 128 + 15; after a
    SIGKILL of the parent, which nothing can catch, the workers notice and end (they waited
    for tasks for ever)."""
    tag = uuid.uuid4().hex
    proc = _start(["run", "g.hexgraph", "--inputs-dir", "many", "-j", "2"], batch, tag)
    assert proc.stdout.readline().startswith("run 1/1500")
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)
    assert proc.returncode == 143
    assert proc.stderr.read() == "hexscope: terminated (SIGTERM)\n"
    _wait_for(lambda: not _tagged_processes(tag), timeout=5)

    tag = uuid.uuid4().hex
    proc = _start(["run", "g.hexgraph", "--inputs-dir", "many", "-j", "2"], batch, tag)
    assert proc.stdout.readline().startswith("run 1/1500")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    _wait_for(lambda: not _tagged_processes(tag), timeout=5)
