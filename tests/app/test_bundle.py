"""packaging/build.sh: the one-folder PyInstaller bundle builds, checks itself and runs as a
user would start it (the self-test, a batch run in worker processes, the desktop entry)."""

from __future__ import annotations

import configparser
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[2]

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the bundle is for Linux"),
    pytest.mark.skipif(os.environ.get("HEXSCOPE_SKIP_BUNDLE_TEST") == "1",
                       reason="HEXSCOPE_SKIP_BUNDLE_TEST=1"),
]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    dist = tmp_path_factory.mktemp("dist")
    started = time.monotonic()
    built = subprocess.run(["bash", str(ROOT / "packaging" / "build.sh"), str(dist)],
                           capture_output=True, text=True, timeout=1200)
    seconds = time.monotonic() - started
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    # build.sh ends by running the bundle's own self-test: it must have passed.
    assert "self-test: passed" in built.stdout
    print(f"bundle built in {seconds:.0f} s")
    return dist / "hexscope"


def _clean_env(**extra: str) -> dict[str, str]:
    # Nothing of this test's Python may leak into the frozen app.
    env = {k: v for k, v in os.environ.items()
           if k not in ("QT_QPA_PLATFORM", "PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    env.update(extra)
    return env


def test_bundle_self_test_passes_without_python(bundle, tmp_path):
    exe = bundle / "hexscope"
    assert exe.is_file() and os.access(exe, os.X_OK)
    run = subprocess.run([str(exe), "--self-test"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=_clean_env())
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert run.stdout.rstrip().endswith("self-test: passed")
    assert "match an independent engine run byte for byte" in run.stdout


def test_bundle_runs_a_batch_in_worker_processes(bundle, tmp_path):
    """--jobs 2 spawns workers, which re-enter the frozen executable (freeze_support)."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    rng = np.random.default_rng(0)
    for k in range(3):
        np.save(inputs / f"{k}.npy", rng.random((1, 16, 16, 3), dtype=np.float32))
    graph = ROOT / "resources" / "examples" / "classic_quantized.hexgraph"
    run = subprocess.run([str(bundle / "hexscope"), "run", str(graph), "--inputs-dir",
                          f"0x10000:0={inputs}", "--jobs", "2", "-q"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, env=_clean_env())
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert "3 run(s), 3 passed" in run.stdout + run.stderr


def test_bundle_installs_a_desktop_entry_with_its_icon(bundle, tmp_path):
    data = tmp_path / "share"
    done = subprocess.run(["bash", str(bundle / "install-desktop.sh")], capture_output=True,
                          text=True, timeout=60, env=_clean_env(XDG_DATA_HOME=str(data)))
    assert done.returncode == 0, done.stderr
    entry = configparser.ConfigParser(interpolation=None)
    entry.read(data / "applications" / "hexscope.desktop")
    desktop = entry["Desktop Entry"]
    assert desktop["Type"] == "Application" and desktop["Name"] == "Hexscope"
    exe, *args = shlex.split(desktop["Exec"])
    assert Path(exe) == bundle / "hexscope" and args == ["gui", "%f"]
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / f"{desktop['Icon']}.svg").is_file()
    assert (data / "icons" / "hicolor" / "256x256" / "apps" / f"{desktop['Icon']}.png").is_file()
    # .hexgraph files are Hexscope's: the type is declared and the entry opens it.
    mime = (data / "mime" / "packages" / "hexscope-mime.xml").read_text(encoding="utf-8")
    assert 'glob pattern="*.hexgraph"' in mime
    assert "application/x-hexscope-graph" in desktop["MimeType"].split(";")
    gone = subprocess.run(["bash", str(bundle / "install-desktop.sh"), "--uninstall"],
                          capture_output=True, text=True, timeout=60,
                          env=_clean_env(XDG_DATA_HOME=str(data)))
    assert gone.returncode == 0 and not (data / "applications" / "hexscope.desktop").exists()
    assert not (data / "mime" / "packages" / "hexscope-mime.xml").exists()


def test_bundle_opens_a_tflite_model_and_compares_it_with_tflite(bundle, tmp_path):
    """The bundle carries the tflite extra: a .tflite model imports as the delegate builds it
    and runs against TFLite's own kernels (without it: "needs the 'tflite' package")."""
    model = ROOT / "tests" / "data" / "tflite" / "add.tflite"
    saved = tmp_path / "add.hexgraph"
    done = subprocess.run([str(bundle / "hexscope"), "import", str(model), "-o", str(saved)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=_clean_env())
    assert done.returncode == 0 and saved.is_file(), done.stdout + done.stderr[-3000:]
    run = subprocess.run([str(bundle / "hexscope"), "compare", str(model), "--reference",
                          "tflite", "--input", str(model.with_suffix(".input.npy"))],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env=_clean_env())
    assert run.returncode in (0, 1), run.stdout + run.stderr[-3000:]   # a verdict, no error
    assert "B: TFLite CPU (ai-edge-litert)" in run.stdout
    assert "first divergence" in run.stdout or "compare passed" in run.stdout
