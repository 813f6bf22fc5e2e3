"""A TFLite model in Hexscope: import and prepare time, and a run against TFLite's interpreter
(one thread), interleaved in one process.

Usage: ``.venv/bin/python bench/tflite_bench.py MODEL.tflite [--repeat N] [--profile OUT]
[--ops]``.
For MobileNetV2: ``TFVENV/bin/python packaging/make_tflite_models.py --mobilenet-v2
/tmp/mbv2.tflite`` (a Python with TensorFlow makes it) then ``bench/tflite_bench.py
/tmp/mbv2.tflite``.

TFLite is timed three ways, each invoke only on an interpreter built once: with XNNPACK (its
default delegate; issue 25's yardstick), with its builtin kernels, and as ``compare
--reference tflite`` runs it (builtin kernels, every tensor kept, the interpreter built each
time). Hexscope's run is ``Session.execute`` on a prepared session (the simulator, one thread),
through the executor's fast plan, and once more per round stepped node by node (the executor
without its plan) for comparison.
``--profile OUT`` writes a cProfile of Hexscope's runs and prints the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import statistics
import time
import warnings

import numpy as np

from hexscope.engine.io.tflite.importer import import_tflite
from hexscope.engine.io.tflite.model import read_model
from hexscope.engine.io.tflite.reference import model_input_arrays, run_tflite, unrunnable_ops
from hexscope.engine.session import Session

_CPU: dict[str, list[float]] = {}


def _timed(fn, cpu: str | None = None):  # type: ignore[no-untyped-def]
    """(wall seconds, result); with ``cpu``, the calling thread's CPU seconds go to
    ``_CPU[cpu]`` (on a loaded machine the wall clock counts the time other processes ran:
    CPU time keeps one-thread ratios steady)."""
    start, cpu0 = time.perf_counter(), time.thread_time()
    result = fn()
    if cpu is not None:
        _CPU.setdefault(cpu, []).append(time.thread_time() - cpu0)
    return time.perf_counter() - start, result


def _interpreter(path: str, xnnpack: bool, inputs: list[np.ndarray]):  # type: ignore[no-untyped-def]
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = (OpResolverType.AUTO if xnnpack
            else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        interp = Interpreter(model_path=path, num_threads=1, experimental_op_resolver_type=kind)
    interp.allocate_tensors()
    for detail, arr in zip(interp.get_input_details(), inputs, strict=False):
        interp.set_tensor(detail["index"], arr)
    return interp


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", metavar="OUT", help="cProfile Hexscope's runs into OUT")
    parser.add_argument("--ops", action="store_true",
                        help="after the rounds, each op's share of a run (the executor's "
                             "per-node times summed per op, median of --repeat runs)")
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
    print(f"parse    median {_ms(parse):8.1f} ms")
    print(f"import   median {_ms(imports):8.1f} ms (parse, rules, builders)")
    inputs = model_input_arrays(model, None)
    missing = unrunnable_ops(graph)
    if missing:
        print(f"Hexscope run: not yet (needs {', '.join(missing)})")
        return
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    prepares = []
    for _ in range(args.repeat):
        session = Session(graph)
        prepares.append(_timed(session.prepare)[0])
    first, _ = _timed(lambda: session.execute(inputs))      # packs weights, warms kernels
    xnn, builtin = _interpreter(args.model, True, inputs), _interpreter(args.model, False, inputs)
    times: dict[str, list[float]] = {"xnnpack": [], "builtin": [], "compare": [], "hexscope": [],
                                     "stepping": []}
    profile = cProfile.Profile() if args.profile else None
    def stepped() -> None:
        session.executor.use_plan = False      # the same run through the stepping executor
        times["stepping"].append(_timed(lambda: session.execute(inputs), "stepping")[0])
        session.executor.use_plan = True

    for k in range(args.repeat):        # interleaved: all see the same machine load
        times["xnnpack"].append(_timed(xnn.invoke, "xnnpack")[0])
        times["builtin"].append(_timed(builtin.invoke, "builtin")[0])
        times["compare"].append(_timed(lambda: run_tflite(args.model, inputs), "compare")[0])
        if k % 2:       # every other round first: the run after another finds warmer caches
            stepped()
        if profile:
            profile.enable()
        times["hexscope"].append(_timed(lambda: session.execute(inputs), "hexscope")[0])
        if profile:
            profile.disable()
        if not k % 2:
            stepped()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    hexscope = statistics.median(times["hexscope"])
    print(f"prepare  median {_ms(prepares):8.1f} ms; first run {first * 1e3:.0f} ms "
          "(packs the weights)")
    for key, what in (("xnnpack", "TFLite, XNNPACK, invoke"),
                      ("builtin", "TFLite, builtin kernels, invoke"),
                      ("compare", "TFLite as compare runs it (all tensors, built each time)")):
        ratio = hexscope / statistics.median(times[key])
        cpu_ratio = statistics.median(_CPU["hexscope"]) / statistics.median(_CPU[key])
        print(f"{key:8} median {_ms(times[key]):8.1f} ms  Hexscope is {ratio:.2f}x  ({what}); "
              f"CPU time {_ms(_CPU[key]):.1f} ms, {cpu_ratio:.2f}x")
    print(f"hexscope median {hexscope * 1e3:8.1f} ms (min {min(times['hexscope']) * 1e3:.1f}); "
          f"CPU time median {_ms(_CPU['hexscope']):.1f} ms (min "
          f"{min(_CPU['hexscope']) * 1e3:.1f})")
    print(f"stepping median {_ms(times['stepping']):8.1f} ms; CPU time median "
          f"{_ms(_CPU['stepping']):.1f} ms (the same run stepped node by node, no fast plan)")
    print(f"peak RSS {rss:.0f} MB ({rss0:.0f} MB before the session)")
    if profile:
        profile.dump_stats(args.profile)
        pstats.Stats(args.profile).sort_stats("tottime").print_stats(15)
    if args.ops:
        _print_op_split(session, inputs, args.repeat)


def _print_op_split(session: Session, inputs: list[np.ndarray], repeat: int) -> None:
    """Each op's time in a run: the trace's per-node seconds summed per op (median over
    ``repeat`` runs), its node count, and its share of the nodes' total."""
    per_op: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    for node_id in session.plan:
        op = session.prepared.nodes[node_id].op
        counts[op] = counts.get(op, 0) + 1
    for _ in range(repeat):
        session.execute(inputs)
        sums: dict[str, float] = {}
        for node_id, seconds in session.times.items():
            op = session.prepared.nodes[node_id].op
            sums[op] = sums.get(op, 0.0) + seconds
        for op, total in sums.items():
            per_op.setdefault(op, []).append(total)
    medians = {op: statistics.median(v) for op, v in per_op.items()}
    whole = sum(medians.values())
    print(f"per op (median of {repeat} runs, nodes' own times: {whole * 1e3:.1f} ms)")
    for op, t in sorted(medians.items(), key=lambda kv: -kv[1]):
        print(f"  {op:36} {counts[op]:4d} nodes {t * 1e3:7.2f} ms  {t / whole:6.1%}")


if __name__ == "__main__":
    main()
