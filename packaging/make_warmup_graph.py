"""Build resources/warmup/delegate_blazeface.hexgraph (run again after changing the importer).

The install's warm-up (``hexscope --warm-up``, app/warm_up.py) runs it twice: a graph as
TFLite's Hexagon delegate builds it reaches the kernel specialisations a real model's run
takes (read-only Consts, the d32 forms, the per-node kept set-ups and fused passes of a
second run), which the bundled examples and ``kernels/warm.py``'s tiny calls miss: a first
MobileNetV2 run after a fresh install compiled for 1.9 s more than the next one. Needs the
``tflite`` extra (the flatbuffers schema's readers), a developer's tool; the graph file is
committed.

Run: .venv/bin/python packaging/make_warmup_graph.py
"""

from __future__ import annotations

from pathlib import Path

from hexscope.engine.io.tflite.importer import import_tflite

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "tests" / "data" / "tflite" / "blazeface.tflite"   # MediaPipe's, Apache-2.0
OUT = ROOT / "resources" / "warmup" / "delegate_blazeface.hexgraph"


def main() -> None:
    graph = import_tflite(str(MODEL))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    graph.save(OUT)
    print("wrote", OUT, f"({len(graph)} nodes)")


if __name__ == "__main__":
    main()
