"""A TFLite model in Hexscope: import time, and a run against TFLite's interpreter (one
thread, builtin kernels), interleaved in one process.

Usage: ``.venv/bin/python bench/tflite_bench.py MODEL.tflite [--repeat N]``. For MobileNetV2:
``TFVENV/bin/python packaging/make_tflite_models.py --mobilenet-v2 /tmp/mbv2.tflite``
(a Python with TensorFlow makes it) then ``bench/tflite_bench.py /tmp/mbv2.tflite``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.model import read_model
from hexscope.engine.io.tflite.reference import model_input_arrays, run_tflite, unrunnable_ops
from hexscope.engine.session import Session


def _timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    model = read_model(args.model)
    parse = [_timed(lambda: read_model(args.model))[0] for _ in range(args.repeat)]
    imports, graph = [], None
    for _ in range(args.repeat):
        seconds, graph = _timed(lambda: import_tflite(args.model))
        imports.append(seconds)
    assert graph is not None
    print(f"{args.model}: {len(model.operators)} operators, {len(model.tensors)} tensors -> "
          f"{len(graph)} nodes ({sum(n.is_const for n in graph)} Const)")
    print(f"parse   median {statistics.median(parse) * 1e3:8.1f} ms")
    print(f"import  median {statistics.median(imports) * 1e3:8.1f} ms (parse, rules, builders)")
    inputs = model_input_arrays(model, None)
    missing = unrunnable_ops(graph)
    session = None if missing else Session(graph)
    tfl, hexs = [], []
    for _ in range(args.repeat):        # interleaved: both see the same machine load
        tfl.append(_timed(lambda: run_tflite(args.model, inputs))[0])
        if session is not None:
            hexs.append(_timed(lambda: session.execute(inputs))[0])
    print(f"TFLite  median {statistics.median(tfl) * 1e3:8.1f} ms (one thread, builtin "
          "kernels, every tensor kept, interpreter built each time)")
    if session is None:
        print(f"Hexscope run: not yet (needs {', '.join(missing)})")
    else:
        print(f"Hexscope median {statistics.median(hexs) * 1e3:8.1f} ms "
              f"({statistics.median(hexs) / statistics.median(tfl):.1f}x TFLite)")


if __name__ == "__main__":
    main()
