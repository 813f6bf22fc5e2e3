"""Reading a device dump's yaml (issue 30): Hexscope's line reader against PyYAML on the
same text, at 1k-20k nodes, plus loading every .dat of a 1k-node dump.

    .venv/bin/python bench/device_dump_bench.py [--sizes 1000 5000 20000]

The yaml is written as nnlib's print_graph_to_file writes it (a quantized triple per node);
PyYAML (its C loader when built with libyaml) parses the same file: the ratio is ours / its.
"""

# ruff: noqa: UP031  (printf formats: nnlib's own)
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from hexscope.engine.device.dump_reader import read_dump


def write_yaml(folder: Path, nodes: int, dat: bool = False) -> Path:
    text = ["---\nnodes:\n"]
    for k in range(nodes):
        node_id = 0x10000 + k
        text.append("  0x%x:\n    optype: %s\n" % (node_id, "QuantizedRelu_8"))
        if k:
            text.append("    inputs:\n")
            text += ["      - [0x%x,%u]\n" % (node_id - 1, i) for i in range(3)]
        text.append("    outputs:\n")
        for i, (dims, el) in enumerate((("1, 8, 8, 32", "quint8"), ("1, 1, 1, 1", "float32"),
                                        ("1, 1, 1, 1", "float32"))):
            text.append("      - size: [%s]\n        eltype: %s\n        file: %s_%x_%u.dat\n"
                        % (dims, el, "/data/local/tmp/foo", node_id, i))
            if dat:
                size = 8 * 8 * 32 if i == 0 else 4
                (folder / f"foo_{node_id:x}_{i}.dat").write_bytes(np.zeros(size, np.uint8)
                                                                  .tobytes())
        text.append("    quantized_outputs: [0,1,2]\n")
    path = folder / "foo_graph.yaml"
    path.write_text("".join(text))
    return path


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    args = ap.parse_args()
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    print(f"PyYAML {yaml.__version__}, loader {loader.__name__}")
    print(f"{'nodes':>7} {'ours s':>8} {'PyYAML s':>9} {'ratio':>6}")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = write_yaml(Path(tmp), n)
            ours = best(lambda p=path: read_dump(p))
            theirs = best(lambda p=path: yaml.load(p.read_text(), Loader=loader))
            print(f"{n:>7} {ours:>8.3f} {theirs:>9.3f} {ours / theirs:>6.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_yaml(Path(tmp), 1000, dat=True)
        dump = read_dump(path)

        def load_all() -> None:
            for node in dump.nodes.values():
                for out in node.outputs:
                    dump.load(node, out)
        print(f"load every .dat of 1000 nodes (3000 files): {best(load_all):.3f} s")


if __name__ == "__main__":
    main()
