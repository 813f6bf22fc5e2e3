"""The C device agent (``packaging/dsp-agent``) built against the host stand-in for hexagon_nn,
run as a real process on loopback, for tests."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.agent_process import AgentProcess

AGENT_DIR = Path(__file__).resolve().parents[2] / "packaging" / "dsp-agent"
TARGETS = {"host": "build/host/dsp-agent", "host-asan": "build/host-asan/dsp-agent",
           "cross-aarch64": "build/aarch64/dsp-agent"}


def build(target: str = "host") -> list[str]:
    """``make -C packaging/dsp-agent TARGET``: the one build command; returns the command that
    starts the agent. Skips (with the reason) only when there is no C compiler or make; a
    failed build fails the test. ``cross-aarch64`` runs under qemu-aarch64 with Debian's
    gcc-aarch64-linux-gnu and qemu-user (``packaging/setup.sh test`` installs them): CI fails
    without them, a developer's run skips."""
    if target == "cross-aarch64":
        absent = [t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64", "make")
                  if shutil.which(t) is None]
        if absent and os.environ.get("CI"):
            pytest.fail(f"CI must check the C agent on aarch64, but {', '.join(absent)} is "
                        "missing (packaging/setup.sh test installs gcc-aarch64-linux-gnu, "
                        "libc6-dev-arm64-cross and qemu-user)")
        if absent:
            pytest.skip(f"the aarch64 check needs {', '.join(absent)} (apt-get install "
                        "gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)")
    missing = [tool for tool in ("make", "gcc") if shutil.which(tool) is None]
    if missing and os.environ.get("CI"):
        pytest.fail(f"CI must build the C device agent, but {' and '.join(missing)} is "
                    "missing (packaging/setup.sh installs gcc and make)")
    if missing:
        pytest.skip(f"the C device agent needs {' and '.join(missing)} to build "
                    "(packaging/setup.sh installs gcc)")
    done = subprocess.run(["make", "-C", str(AGENT_DIR), target], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"make {target} failed:\n{done.stdout}\n{done.stderr}"
    binary = AGENT_DIR / TARGETS[target]
    assert binary.is_file()
    return ["qemu-aarch64", str(binary)] if target == "cross-aarch64" else [str(binary)]


@dataclass
class DspAgent(AgentProcess):
    trace: Path

    def calls(self) -> list[str]:
        """Every hexagon_nn call the agent made so far, one line each (the stand-in's log)."""
        return self.trace.read_text().splitlines() if self.trace.exists() else []


def start(command: list[str], trace: Path, *args: str, node_ms: int = 0) -> DspAgent:
    """Start the agent on a free port; ``node_ms``: the stand-in makes each node take that
    long (HEXAGON_NN_STANDIN_NODE_MS)."""
    env = {**os.environ, "HEXAGON_NN_STANDIN_TRACE": str(trace),
           "HEXAGON_NN_STANDIN_NODE_MS": str(node_ms)}
    env.pop("HEXSCOPE_AGENT_TOKEN", None)
    # a sanitizer report must end the process (the tests then see it dead), not scroll by
    env.setdefault("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=0")
    proc = subprocess.Popen([*command, "--listen", "127.0.0.1:0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    line = proc.stdout.readline() if proc.stdout else ""
    match = re.search(r"127\.0\.0\.1:(\d+)", line)
    if not match:
        proc.kill()
        raise RuntimeError(f"dsp-agent did not start: {line!r}")
    return DspAgent(proc, int(match.group(1)), trace)


@contextlib.contextmanager
def running(command: list[str], trace: Path, *args: str,
            node_ms: int = 0) -> Iterator[DspAgent]:
    agent = start(command, trace, *args, node_ms=node_ms)
    try:
        yield agent
    finally:
        agent.kill()
