"""Every subcommand against bad files, folders, numbers and plugins (issue 33): one line on
stderr naming the problem, the documented exit code (2 invalid input; a broken plugin is
reported and never fatal) and never a traceback. Run in-process (fast); the signals, which
need a real process, are in test_cli_signals.py."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from hexscope.app import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "classic_quantized.hexgraph"   # INPUT 1x16x16x3
INPUT_ID = "0x10000"


def _npy_header(shape: tuple[int, ...]) -> bytes:
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (117 - len(header)) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """A good graph and input, and one bad file of each kind."""
    d = tmp_path_factory.mktemp("matrix")
    (d / "g.hexgraph").write_bytes(EXAMPLE.read_bytes())
    np.save(d / "good.npy", np.zeros((1, 16, 16, 3), np.float32))
    # bad graphs
    (d / "empty.hexgraph").write_bytes(b"")
    (d / "trunc.hexgraph").write_bytes(EXAMPLE.read_bytes()[:1000])
    with open(d / "zip.hexgraph", "wb") as handle:
        np.savez(handle, a=np.zeros(3))
    (d / "garbage.hexgraph").write_bytes(os.urandom(4096))
    (d / "bad.c").write_text("static int x[] = {1, 2,;\n")
    (d / "folder.hexgraph").mkdir()
    # bad inputs
    with open(d / "zip.npy", "wb") as handle:
        np.savez(handle, a=np.zeros(3))
    (d / "huge.npy").write_bytes(_npy_header((100000, 100000)))
    (d / "trunc.npy").write_bytes(_npy_header((1, 16, 16, 3)) + b"\0" * 10)
    (d / "text.npy").write_text("1 2 3\n")
    (d / "pickle.npy").write_bytes(pickle.dumps([1, 2, 3]))
    np.save(d / "objects.npy", np.array([{}], dtype=object), allow_pickle=True)
    np.save(d / "empty_array.npy", np.zeros((1, 0, 16, 3), np.float32))
    np.save(d / "five_d.npy", np.zeros((1, 1, 16, 16, 3), np.float32))
    (d / "folder.npy").mkdir()
    (d / "input.txt").write_text("not an input")
    Image.new("L", (200, 200)).save(d / "bomb.png")      # a bomb once the limit is lowered
    (d / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(64))
    (d / "empty_dir").mkdir()
    # plugins
    (d / "raises.py").write_text("raise ValueError('plugin says no')\n")
    (d / "syntax.py").write_text("def (:\n")
    (d / "nasty.py").write_text("class E(Exception):\n    def __str__(self):\n"
                                "        raise RuntimeError\nraise E()\n")
    (d / "bom.py").write_bytes(b"\xef\xbb\xbfX = 1\n")
    for stem, suffix in (("fifo", ".hexgraph"), ("fifo", ".npy"), ("fifo", ".py"),
                         ("fifo", ".c")):
        os.mkfifo(d / f"{stem}{suffix}")
    for suffix in (".hexgraph", ".npy", ".py", ".c"):
        (d / f"loop_a{suffix}").symlink_to(d / f"loop_b{suffix}")
        (d / f"loop_b{suffix}").symlink_to(d / f"loop_a{suffix}")
    (d / "a_file").write_text("")
    return d


BAD_GRAPHS = ["missing.hexgraph", "empty.hexgraph", "trunc.hexgraph", "zip.hexgraph",
              "garbage.hexgraph", "folder.hexgraph", "fifo.hexgraph", "loop_a.hexgraph",
              "bad.c", "fifo.c", "loop_a.c"]
GRAPH_COMMANDS = [["validate"], ["info"], ["info", "--prepared"], ["export"],
                  ["check-padding"], ["run"], ["run", "-j", "2"], ["compare"],
                  ["compare", "--reference", "float"]]
BAD_INPUTS = ["missing.npy", "zip.npy", "huge.npy", "trunc.npy", "text.npy", "pickle.npy",
              "objects.npy", "empty_array.npy", "five_d.npy", "folder.npy", "fifo.npy",
              "loop_a.npy", "input.txt", "bomb.png", "broken.png"]
INPUT_COMMANDS = [["run"], ["compare"], ["compare", "--as-authored"]]

# (argv after the subcommand with {d} the folder, the exit code)
NUMBERS_AND_PATHS = [
    (["run", "{d}/g.hexgraph", "-j", "0"], 2),
    (["run", "{d}/g.hexgraph", "-j", "-3"], 2),
    (["run", "{d}/g.hexgraph", "-j", "two"], 2),
    (["run", "{d}/g.hexgraph", "-j", "2147483647"], 2),
    (["run", "{d}/g.hexgraph", "-j", "99999999999999999999999"], 2),
    (["run", "{d}/g.hexgraph", "--seed", "x"], 2),
    (["run", "{d}/g.hexgraph", "--seed", "1e400"], 2),
    (["run", "{d}/g.hexgraph", "--backend", "bogus"], 2),
    (["run", "{d}/g.hexgraph", "--backend", ""], 2),
    (["run", "{d}/g.hexgraph", "--scheduler", "garbage"], 2),
    (["run", "{d}/g.hexgraph", "--scheduler", "tcp://host:99999"], 2),
    (["run", "{d}/g.hexgraph", "--report", "{d}/nowhere/r.json"], 2),
    (["run", "{d}/g.hexgraph", "--report", "{d}/empty_dir"], 2),
    (["run", "{d}/g.hexgraph", "--junit", "{d}/nowhere/r.xml"], 2),
    (["run", "{d}/g.hexgraph", "--junit", "{d}/a_file/r.xml"], 2),
    (["run", "{d}/g.hexgraph", "--dump", "{d}/a_file"], 2),
    (["run", "{d}/g.hexgraph", "--dump", "{d}/a_file/sub"], 2),
    (["run", "{d}/g.hexgraph", "--inputs-dir", "{d}/a_file"], 2),
    (["run", "{d}/g.hexgraph", "--inputs-dir", "{d}/empty_dir"], 2),
    (["run", "{d}/g.hexgraph", "--inputs-dir", "{d}/nowhere"], 2),
    (["run", "{d}/g.hexgraph", "--input", "0xZZ:0={d}/good.npy"], 2),
    (["run", "{d}/g.hexgraph", "--input", f"{INPUT_ID}:9={{d}}/good.npy"], 2),
    (["run", "{d}/g.hexgraph", "--input", "0x99:0={d}/good.npy"], 2),
    (["compare", "{d}/g.hexgraph", "--tolerance-lsb", "nan"], 2),
    (["compare", "{d}/g.hexgraph", "--tolerance-lsb", "inf"], 2),
    (["compare", "{d}/g.hexgraph", "--tolerance-lsb", "-1"], 2),
    (["compare", "{d}/g.hexgraph", "--tolerance-lsb", "lots"], 2),
    (["compare", "{d}/g.hexgraph", "--top", "x"], 2),
    (["compare", "{d}/g.hexgraph", "--backend", "bogus"], 2),
    (["compare", "{d}/g.hexgraph", "--backend-b", "bogus"], 2),
    (["compare", "{d}/g.hexgraph", "--against", "{d}/fifo.hexgraph"], 2),
    (["compare", "{d}/g.hexgraph", "--against", "{d}/missing.hexgraph"], 2),
    (["compare", "{d}/g.hexgraph", "--report", "{d}/nowhere/r.json"], 2),
    (["compare", "{d}/g.hexgraph", "--junit", "{d}/a_file/r.xml"], 2),
    (["compare", "{d}/g.hexgraph", "--inputs-dir", "{d}/empty_dir"], 2),
    (["import", "{d}/bad.c", "-o", "{d}/nowhere/x.hexgraph"], 2),
    (["import", "{d}/folder.hexgraph"], 2),
    (["export", "{d}/g.hexgraph", "-o", "{d}/nowhere/x.c"], 2),
    (["export", "{d}/g.hexgraph", "-o", "{d}/empty_dir"], 2),
    (["bogus-command"], 2),
    (["run"], 2),
    (["info", "{d}/g.hexgraph", "--no-such-option"], 2),
]
BAD_PLUGINS = ["missing.py", "raises.py", "syntax.py", "nasty.py", "fifo.py", "loop_a.py",
               "folder.npy"]


def _cases() -> list[tuple[list[str], int]]:
    cases = [([*cmd, f"{{d}}/{bad}"], 2) for cmd in GRAPH_COMMANDS for bad in BAD_GRAPHS]
    cases += [(["import", f"{{d}}/{bad}"], 2)
              for bad in ("missing.c", "bad.c", "fifo.c", "loop_a.c", "empty.hexgraph")]
    cases += [([*cmd, "{d}/g.hexgraph", "--input", f"{INPUT_ID}:0={{d}}/{bad}"], 2)
              for cmd in INPUT_COMMANDS for bad in BAD_INPUTS]
    cases += NUMBERS_AND_PATHS
    # a plugin that fails to load is reported on one line and the command goes on (exit 0)
    cases += [(["--plugin", f"{{d}}/{bad}", "info", "{d}/g.hexgraph"], 0) for bad in BAD_PLUGINS]
    return cases


CASES = _cases()


def _run_cli(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:           # argparse: usage errors
        return int(exc.code or 0)


@pytest.mark.parametrize(("argv", "code"), CASES,
                         ids=[" ".join(a).replace("{d}/", "") for a, _ in CASES])
def test_one_line_the_documented_code_and_no_traceback(files, argv, code, capsys,
                                                       monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10000)   # bomb.png's 40,000 px: a bomb
    monkeypatch.chdir(files)
    args = [a.replace("{d}", str(files)) for a in argv]
    exit_code = _run_cli(args)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in out + err
    assert exit_code == code, err
    assert len(lines) == 1, err
    assert lines[0].startswith("hexscope"), err
    assert "allow_pickle" not in err


def test_the_matrix_covers_every_subcommand():
    commands = {next(a for a in argv if not a.startswith("-") and "{d}" not in a)
                for argv, _ in CASES}
    assert commands >= {"validate", "info", "import", "export", "check-padding", "run",
                        "compare"}
    assert len(CASES) >= 190


def test_a_wrong_shape_input_is_named_when_the_run_fails(files, capsys):
    np.save(files / "wrong_shape.npy", np.zeros((1, 7, 5, 3), np.float32))
    code = _run_cli(["run", str(files / "g.hexgraph"), "-q", "--input",
                     f"{INPUT_ID}:0={files / 'wrong_shape.npy'}"])
    err = capsys.readouterr().err
    assert code == 2
    assert (f"(input 0 (npy {files / 'wrong_shape.npy'}) is 1x7x5x3, the INPUT node "
            "declares 1x16x16x3)") in err


def test_a_dump_that_cannot_be_written_says_why(files, tmp_path, capsys):
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "run-0001").write_text("a file where the run's folder goes")
    code = _run_cli(["run", str(files / "g.hexgraph"), "-q", "--dump", str(dump)])
    out, err = capsys.readouterr()
    assert code == 2
    assert err == (f"hexscope: invalid: cannot write the dump to {dump}: "
                   f"{dump / 'run-0001'}: File exists\n")
    assert "1 passed" in out


def test_a_report_that_fails_half_way_leaves_the_old_one_whole(files, tmp_path, capsys,
                                                                monkeypatch):
    """A full disk mid-write: the old JUnit file stays as it was (it was left 0 bytes, which
    a CI parser reads as an empty suite), no temp is left, and the run says why (exit 2)."""
    import errno

    from hexscope.engine.batch import report

    junit = tmp_path / "r.xml"
    junit.write_text("<testsuites/>\n")

    def full_disk(result, path):
        Path(path).write_text("<testsui")
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(report, "write_junit", full_disk)
    code = _run_cli(["run", str(files / "g.hexgraph"), "-q", "--junit", str(junit)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"hexscope: cannot write the report to {junit}: No space left on device\n"
    assert junit.read_text() == "<testsuites/>\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.xml"]
