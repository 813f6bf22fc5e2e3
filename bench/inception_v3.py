"""InceptionV3-shaped work on the simulator vs onnxruntime's quantized operators, one thread.

Builds the 94 convolutions of InceptionV3 (299x299x3 input, ~5.7 G multiply-adds) with its
poolings and concatenations and a final fully connected layer, with random uint8 weights, twice:

* as a hexagon_nn graph run by ``hexscope.engine.Session``: per convolution
  QuantizedConv2d_8x8to32 -> QuantizeDownAndShrinkRange_32to8 -> QuantizedRelu_8;
  QuantizedMaxPool_8, QuantizedAvgPool_8 (SAME 3x3, padding not counted), QuantizedConcat_8,
  QuantizedMatMul_8x8to32 for the classifier;
* as an ONNX model for onnxruntime: QLinearConv (uint8 activations and weights, output zero
  point 0 = ReLU), MaxPool, com.microsoft.QLinearAveragePool, Concat, QLinearMatMul.

Both run on ONE thread in this process. Prints the time ratio simulator / onnxruntime, the
split of the simulator's time, its peak RSS and the sum of the tensor sizes it keeps, and
the per-node overhead of the session on a chain of 1,000 Nop nodes.

Run (needs the "bench" extra)::

    .venv/bin/python bench/inception_v3.py [--repeat 5]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

from hexscope.engine import Graph, Padding, Session  # noqa: E402
from hexscope.engine.ops.context import Shared  # noqa: E402
from hexscope.engine.ops.conv.conv2d import output_window  # noqa: E402
from hexscope.engine.ops.kernels import compiled, gemm, igemm, winograd  # noqa: E402

RNG = np.random.default_rng(0)


class HexBuilder:
    """Appends the network to a hexagon_nn graph; a handle is (node id, (h, w, c))."""

    def __init__(self, realistic: bool = False) -> None:
        self.realistic = realistic
        self.g = Graph()
        self.next_id = 0x1000
        self.macs = 0
        self.n_conv = 0
        self.g.append_node(0x10, "INPUT", outputs=1)
        self._shapes: dict[tuple[int, int], int] = {}
        self._franges: dict[int, tuple[int, int]] = {}
        self.x_min = self._const(np.array([-1.0], np.float32))
        self.x_max = self._const(np.array([1.0078740], np.float32))
        self.axis = self._const(np.array([3], np.int32))

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _const(self, data: np.ndarray) -> int:
        node_id = self._id()
        self.g.append_const_node(node_id, data)
        return node_id

    def _filter_range(self, k: int) -> tuple[int, int]:
        """Weights of std ~ 1/sqrt(K), so activations keep their scale through 94 layers.
        A converter's graph gives every convolution its own range consts."""
        if self.realistic or k not in self._franges:
            a = float(np.sqrt(3.0 / k))
            self._franges[k] = (self._const(np.array([-a], np.float32)),
                                self._const(np.array([a * 128 / 127], np.float32)))
        return self._franges[k]

    def _shape_const(self, h: int, w: int) -> int:
        if (h, w) not in self._shapes:
            node_id = self._id()
            self.g.append_const_node(node_id, shape=(1, h, w, 1))
            self._shapes[(h, w)] = node_id
        return self._shapes[(h, w)]

    def _node(self, op: str, inputs: list, padding: str = "NA", outputs: int = 3) -> int:
        node_id = self._id()
        self.g.append_node(node_id, op, inputs=[(i, k) for i, k in inputs], outputs=outputs,
                           padding=padding)
        return node_id

    def input(self) -> tuple:
        return ((0x10, 0), (self.x_min, 0), (self.x_max, 0)), (299, 299, 3)

    def conv(self, t: tuple, cout: int, kh: int, kw: int, s: int = 1, pad: str = "SAME",
             weights: list | None = None) -> tuple:
        (data, mn, mx), (h, w, cin) = t
        filt = RNG.integers(0, 256, (kh, kw, cin, cout), dtype=np.uint8)
        if weights is not None:
            weights.append(filt)
        f_min, f_max = self._filter_range(kh * kw * cin)
        conv = self._node("QuantizedConv2d_8x8to32",
                          [data, (self._const(filt), 0), mn, mx, (f_min, 0), (f_max, 0),
                           (self._shape_const(s, s), 0)], pad)
        rq = self._node("QuantizeDownAndShrinkRange_32to8", [(conv, 0), (conv, 1), (conv, 2)])
        if self.realistic:          # bias add and a second requantize, as converters write
            bias = self._const(RNG.integers(0, 256, (1, 1, 1, cout), dtype=np.uint8))
            b_min = self._const(np.array([-0.25], np.float32))
            b_max = self._const(np.array([0.25], np.float32))
            add = self._node("QuantizedBiasAdd_8p8to32", [(rq, 0), (bias, 0), (rq, 1), (rq, 2),
                                                          (b_min, 0), (b_max, 0)])
            rq = self._node("QuantizeDownAndShrinkRange_32to8", [(add, 0), (add, 1), (add, 2)])
        relu = self._node("QuantizedRelu_8", [(rq, 0), (rq, 1), (rq, 2)])
        oh = output_window(h, kh, s, Padding.parse(pad)).out
        ow = output_window(w, kw, s, Padding.parse(pad)).out
        self.macs += oh * ow * cout * kh * kw * cin
        self.n_conv += 1
        return ((relu, 0), (relu, 1), (relu, 2)), (oh, ow, cout)

    def pool(self, kind: str, t: tuple, k: int, s: int, pad: str) -> tuple:
        (data, mn, mx), (h, w, c) = t
        op = "QuantizedMaxPool_8" if kind == "max" else "QuantizedAvgPool_8"
        node = self._node(op, [data, mn, mx, (self._shape_const(k, k), 0),
                               (self._shape_const(s, s), 0)], pad)
        oh = output_window(h, k, s, Padding.parse(pad)).out
        return ((node, 0), (node, 1), (node, 2)), (oh, oh, c)

    def concat(self, ts: list) -> tuple:
        refs = [t[0] for t in ts]
        inputs = [(self.axis, 0)] + [r[0] for r in refs] + [r[1] for r in refs] + \
            [r[2] for r in refs]
        node = self._node("QuantizedConcat_8", inputs)
        h, w, _ = ts[0][1]
        return ((node, 0), (node, 1), (node, 2)), (h, w, sum(t[1][2] for t in ts))

    def fc(self, t: tuple, n: int) -> None:
        (data, mn, mx), (_, _, c) = t
        b = self._const(RNG.integers(0, 256, (1, 1, c, n), dtype=np.uint8))
        f_min, f_max = self._filter_range(c)
        mm = self._node("QuantizedMatMul_8x8to32", [data, (b, 0), mn, mx, (f_min, 0), (f_max, 0)])
        rq = self._node("QuantizeDownAndShrinkRange_32to8", [(mm, 0), (mm, 1), (mm, 2)])
        self.g.append_node(0x20, "OUTPUT", inputs=[(rq, 0), (rq, 1), (rq, 2)])


def inception_v3(nb) -> None:
    """The InceptionV3 network (TF-slim layout) against a builder."""
    t = nb.input()
    t = nb.conv(t, 32, 3, 3, 2, "VALID")
    t = nb.conv(t, 32, 3, 3, 1, "VALID")
    t = nb.conv(t, 64, 3, 3)
    t = nb.pool("max", t, 3, 2, "VALID")
    t = nb.conv(t, 80, 1, 1, 1, "VALID")
    t = nb.conv(t, 192, 3, 3, 1, "VALID")
    t = nb.pool("max", t, 3, 2, "VALID")
    for proj in (32, 64, 64):                                   # mixed 5b, 5c, 5d
        b5 = nb.conv(nb.conv(t, 48, 1, 1), 64, 5, 5)
        b3 = nb.conv(nb.conv(nb.conv(t, 64, 1, 1), 96, 3, 3), 96, 3, 3)
        bp = nb.conv(nb.pool("avg", t, 3, 1, "SAME"), proj, 1, 1)
        t = nb.concat([nb.conv(t, 64, 1, 1), b5, b3, bp])
    b3 = nb.conv(t, 384, 3, 3, 2, "VALID")                      # mixed 6a
    bd = nb.conv(nb.conv(nb.conv(t, 64, 1, 1), 96, 3, 3), 96, 3, 3, 2, "VALID")
    t = nb.concat([b3, bd, nb.pool("max", t, 3, 2, "VALID")])
    for c7 in (128, 160, 160, 192):                             # mixed 6b .. 6e
        b7 = nb.conv(nb.conv(nb.conv(t, c7, 1, 1), c7, 1, 7), 192, 7, 1)
        bd = nb.conv(t, c7, 1, 1)
        for cout, (kh, kw) in ((c7, (7, 1)), (c7, (1, 7)), (c7, (7, 1)), (192, (1, 7))):
            bd = nb.conv(bd, cout, kh, kw)
        bp = nb.conv(nb.pool("avg", t, 3, 1, "SAME"), 192, 1, 1)
        t = nb.concat([nb.conv(t, 192, 1, 1), b7, bd, bp])
    b3 = nb.conv(nb.conv(t, 192, 1, 1), 320, 3, 3, 2, "VALID")   # mixed 7a
    b7 = nb.conv(nb.conv(nb.conv(nb.conv(t, 192, 1, 1), 192, 1, 7), 192, 7, 1),
                 192, 3, 3, 2, "VALID")
    t = nb.concat([b3, b7, nb.pool("max", t, 3, 2, "VALID")])
    for _ in range(2):                                          # mixed 7b, 7c
        b1 = nb.conv(t, 320, 1, 1)
        b3 = nb.conv(t, 384, 1, 1)
        b3 = [nb.conv(b3, 384, 1, 3), nb.conv(b3, 384, 3, 1)]
        bd = nb.conv(nb.conv(t, 448, 1, 1), 384, 3, 3)
        bd = [nb.conv(bd, 384, 1, 3), nb.conv(bd, 384, 3, 1)]
        bp = nb.conv(nb.pool("avg", t, 3, 1, "SAME"), 192, 1, 1)
        t = nb.concat([b1, *b3, *bd, bp])
    t = nb.pool("avg", t, 8, 1, "VALID")
    nb.fc(t, 1000)


class OnnxBuilder:
    """The same network as an ONNX model of quantized onnxruntime operators (NCHW)."""

    def __init__(self, realistic: bool = False) -> None:
        from onnx import TensorProto, helper, numpy_helper

        self.realistic = realistic
        self.helper, self.numpy_helper, self.tp = helper, numpy_helper, TensorProto
        self.nodes: list = []
        self.inits: list = []
        self.count = 0
        for name, value in (("s_x", np.float32(0.02)), ("s_w", np.float32(0.004)),
                            ("s_y", np.float32(0.05)), ("zp0", np.uint8(0)),
                            ("zp128", np.uint8(128)), ("shape_fc", np.array([1, -1], np.int64))):
            self.inits.append(numpy_helper.from_array(np.asarray(value), name))

    def _name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def _pads(self, h: int, w: int, kh: int, kw: int, s: int, pad: str) -> tuple[list, int, int]:
        rows = output_window(h, kh, s, Padding.parse(pad))
        cols = output_window(w, kw, s, Padding.parse(pad))
        after_h = max(0, (rows.out - 1) * s + kh - rows.before - h)
        after_w = max(0, (cols.out - 1) * s + kw - cols.before - w)
        return [rows.before, cols.before, after_h, after_w], rows.out, cols.out

    def input(self) -> tuple:
        return "x", (299, 299, 3)

    def conv(self, t: tuple, cout: int, kh: int, kw: int, s: int = 1, pad: str = "SAME") -> tuple:
        name, (h, w, cin) = t
        wname, out = self._name("w"), self._name("conv")
        filt = RNG.integers(0, 256, (cout, cin, kh, kw), dtype=np.uint8)
        self.inits.append(self.numpy_helper.from_array(filt, wname))
        pads, oh, ow = self._pads(h, w, kh, kw, s, pad)
        inputs = [name, "s_x", "zp128", wname, "s_w", "zp128", "s_y", "zp0"]
        if self.realistic:          # the bias in the accumulator's scale (int32)
            bname = self._name("b")
            self.inits.append(self.numpy_helper.from_array(
                RNG.integers(-3000, 3000, cout, dtype=np.int32), bname))
            inputs.append(bname)
        self.nodes.append(self.helper.make_node(
            "QLinearConv", inputs, [out], kernel_shape=[kh, kw], strides=[s, s], pads=pads))
        return out, (oh, ow, cout)

    def pool(self, kind: str, t: tuple, k: int, s: int, pad: str) -> tuple:
        name, (h, w, c) = t
        pads, oh, ow = self._pads(h, w, k, k, s, pad)
        out = self._name(kind)
        if kind == "max":
            node = self.helper.make_node("MaxPool", [name], [out], kernel_shape=[k, k],
                                         strides=[s, s], pads=pads)
        else:
            node = self.helper.make_node(
                "QLinearAveragePool", [name, "s_y", "zp0", "s_y", "zp0"], [out],
                domain="com.microsoft", kernel_shape=[k, k], strides=[s, s], pads=pads,
                count_include_pad=0)
        self.nodes.append(node)
        return out, (oh, ow, c)

    def concat(self, ts: list) -> tuple:
        out = self._name("cat")
        self.nodes.append(self.helper.make_node("Concat", [t[0] for t in ts], [out], axis=1))
        h, w, _ = ts[0][1]
        return out, (h, w, sum(t[1][2] for t in ts))

    def fc(self, t: tuple, n: int) -> None:
        name, (_, _, c) = t
        flat = self._name("flat")
        self.nodes.append(self.helper.make_node("Reshape", [name, "shape_fc"], [flat]))
        self.inits.append(self.numpy_helper.from_array(
            RNG.integers(0, 256, (c, n), dtype=np.uint8), "w_fc"))
        self.nodes.append(self.helper.make_node(
            "QLinearMatMul", [flat, "s_x", "zp128", "w_fc", "s_w", "zp128", "s_y", "zp0"], ["y"]))

    def session(self):
        import onnxruntime as ort

        h, tp = self.helper, self.tp
        graph = h.make_graph(self.nodes, "inception_v3_q", [
            h.make_tensor_value_info("x", tp.UINT8, [1, 3, 299, 299])],
            [h.make_tensor_value_info("y", tp.UINT8, None)], self.inits)
        model = h.make_model(graph, ir_version=8, opset_imports=[
            h.make_opsetid("", 13), h.make_opsetid("com.microsoft", 1)])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        return ort.InferenceSession(model.SerializeToString(), opts,
                                    providers=["CPUExecutionProvider"])


# measurements -------------------------------------------------------------------------------

def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def simulator(realistic: bool = False) -> tuple[Session, np.ndarray, dict]:
    """The prepared session, its input and static figures, after one warm-up run; the peak
    RSS is read here, before onnxruntime is loaded."""
    igemm.available()                  # LLVM and the compiled kernel count as the process
    # numba's kernels too: prepare loads them (from numba's disk cache after the first
    # process) when a graph uses them; timed on their own, not as prepare
    start = time.perf_counter()
    compiled.load()
    kernels_s = time.perf_counter() - start
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    nb = HexBuilder(realistic)
    inception_v3(nb)
    start = time.perf_counter()
    session = Session(nb.g)
    prepare_s = time.perf_counter() - start
    x = RNG.integers(0, 256, (1, 299, 299, 3), dtype=np.uint8)
    session.execute([x])                                         # warm-up
    trace = session.executor.trace
    kept = sum(t.nbytes for r in trace.values() for t in r.outputs if t.has_data)
    consts = sum(n.const.nbytes for n in session.prepared.nodes.values()
                 if n.is_const and n.const is not None and n.const.has_data)
    weights = sum(_gemm_bytes(entry.value) for state in session.executor.states.values()
                  for entry in state.values() if isinstance(entry, Shared))
    return session, x, dict(kept=kept, consts=consts, weights=weights, base_rss=base_rss,
                            nodes=len(trace), macs=nb.macs, n_conv=nb.n_conv,
                            authored=len(nb.g),
                            prepare=prepare_s, kernels=kernels_s,
                            rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _gemm_bytes(value: object) -> int:
    """Bytes of weights a conv or matmul keeps for its GEMMs: the packing of the integer
    kernel (int16, or the codes for VNNI), or the float32 copies of the BLAS path (direct
    and F(2,3))."""
    if isinstance(value, gemm.Rhs):           # each exists once a GEMM used it
        made = value.__dict__
        return sum(made[name].nbytes for name in ("mat",) if name in made) \
            + sum(made[name].blocks.nbytes for name in ("packed", "packed8") if name in made)
    if isinstance(value, winograd.WinogradRhs):
        return sum(m.nbytes for m in value.mats)
    return 0


def simulator_run(session: Session, x: np.ndarray) -> tuple[float, float, float, dict]:
    """One timed execution: (seconds, GEMM seconds, im2col seconds, seconds per op)."""
    gemm.TIMES.reset()
    start = time.perf_counter()
    session.execute([x])
    total = time.perf_counter() - start
    return total, gemm.TIMES.gemm, gemm.TIMES.im2col, _per_op(session)


def _per_op(session: Session) -> dict[str, float]:
    per_op: dict[str, float] = defaultdict(float)
    for node_id, result in session.executor.trace.items():
        per_op[session.prepared.nodes[node_id].op] += result.seconds
    return dict(per_op)


def onnxruntime_run(realistic: bool = False):
    """A function that runs the onnxruntime model once (after one warm-up run)."""
    ob = OnnxBuilder(realistic)
    inception_v3(ob)
    sess = ob.session()
    x = RNG.integers(0, 256, (1, 3, 299, 299), dtype=np.uint8)
    sess.run(None, {"x": x})
    return lambda: sess.run(None, {"x": x})


def compare(repeat: int, rounds: int = 2, realistic: bool = False) -> tuple[dict, float]:
    """The simulator's figures (its best run) and onnxruntime's best time.

    The simulator's peak RSS is read before onnxruntime is loaded. Then each side runs
    ``repeat`` times in its own phase (warm caches, as a user would run it), and the phases
    alternate for ``rounds`` rounds, so that both sides meet the drifting speed of a shared
    machine (+-20 % over minutes). ``sim["rounds"]`` holds each round's best-to-best ratio."""
    session, x, sim = simulator(realistic)
    ort = onnxruntime_run(realistic)
    runs, ort_best, ratios = [], [], []
    for _ in range(rounds):
        phase = [simulator_run(session, x) for _ in range(repeat)]
        ort_best.append(best(ort, repeat))
        ratios.append(min(r[0] for r in phase) / ort_best[-1])
        runs += phase
    sim["rounds"] = ratios
    sim["total"], sim["gemm"], sim["im2col"], sim["per_op"] = min(runs, key=lambda r: r[0])
    return sim, min(ort_best)


def nop_overhead(n: int = 1000) -> float:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=1)
    for k in range(n):
        g.append_node(0x100 + k, "Nop", inputs=[(0x10 if k == 0 else 0xFF + k, 0)], outputs=1)
    g.append_node(0x20, "OUTPUT", inputs=[(0xFF + n, 0)])
    session = Session(g)
    x = np.zeros((1, 1, 1, 16), np.uint8)
    session.execute([x])
    return best(lambda: session.execute([x]), 5) / n


def batch_child(mode: str, images: int) -> None:
    """One batch measurement in this (fresh) process: ``hexscope run``'s engine over
    ``images`` random images of the realistic graph; prints one JSON line. The peak RSS is
    this process's, and for workers the largest worker's (a LocalCluster's workers report
    their own)."""
    import json

    from hexscope.engine.batch.records import InputSet
    from hexscope.engine.batch.runner import run_batch
    from hexscope.engine.tensor import Tensor

    nb = HexBuilder(realistic=True)
    inception_v3(nb)
    rng = np.random.default_rng(1)
    sets = [InputSet(f"img{k:03d}", [Tensor.from_array(
        rng.integers(0, 256, (1, 299, 299, 3), dtype=np.uint8))]) for k in range(images)]
    workers_rss = 0.0
    if mode == "cluster":
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=None)
        start = time.perf_counter()
        result = run_batch(nb.g, sets, scheduler=cluster.scheduler_address)
        wall = time.perf_counter() - start
        with distributed.Client(cluster) as client:
            peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        workers_rss = max(peaks.values()) / 1024
        cluster.close()
    else:
        start = time.perf_counter()
        result = run_batch(nb.g, sets, jobs=int(mode))
        wall = time.perf_counter() - start
        workers_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert result.outcome.value == "passed", result.message
    print(json.dumps({"mode": mode, "images": images, "wall": wall,
                      "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "workers_rss": workers_rss}))


def batch_figures(images: int) -> list[dict]:
    """--jobs 1, --jobs 2 and a LocalCluster of 2 workers, each in a fresh process."""
    import json
    import subprocess
    import sys

    out = []
    for mode in ("1", "2", "cluster"):
        proc = subprocess.run([sys.executable, __file__, "--batch-child", mode,
                               "--images", str(images)], capture_output=True, text=True,
                              check=False)
        if proc.returncode:
            print(f"batch {mode}: failed\n{proc.stderr[-1500:]}")
            continue
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--images", type=int, default=16,
                        help="images per batch measurement (0: no batch figures)")
    parser.add_argument("--batch-child", metavar="MODE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.batch_child:
        batch_child(args.batch_child, args.images)
        return
    with threadpool_limits(1):
        blas = [(i["internal_api"], i.get("architecture"), i["num_threads"])
                for i in threadpool_info()]
        print(f"BLAS: {blas}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}")
        print("GEMM: " + ("integer kernel (int8 x uint8 -> int32, AVX-512 VNNI)"
                          if igemm.available8() else
                          "integer kernel (int16 x int16 -> int32, AVX2)" if igemm.available()
                          else "float32 BLAS in exact K chunks (HEXSCOPE_GEMM=float or no "
                               "AVX2/llvmlite)"))
        shapes = {}
        for realistic in (True, False):       # realistic first: its peak RSS is its own
            shapes[realistic] = compare(args.repeat, realistic=realistic)
        per_node = nop_overhead()
    for realistic, (sim, ort_s) in shapes.items():
        print("\n== " + ("realistic shape: conv -> requantize -> bias add -> requantize -> "
                         "relu (prepare fuses each chain into a Supernode)" if realistic else
                         "plain shape: conv -> requantize -> relu"))
        _report(sim, ort_s, per_node)
    if args.images:
        print(f"\n== batch (hexscope run's engine), realistic graph, {args.images} images, "
              "each setting in a fresh process (wall time includes starting the workers and "
              "their prepare; not the LocalCluster's own start)")
        for fig in batch_figures(args.images):
            label = {"1": "--jobs 1", "2": "--jobs 2",
                     "cluster": "LocalCluster 2 workers"}[fig["mode"]]
            print(f"  {label:<24}{fig['images'] / fig['wall']:6.2f} images/s  "
                  f"({fig['wall']:.1f} s)  peak RSS: parent {fig['rss']:.0f} MiB, "
                  f"largest worker {fig['workers_rss']:.0f} MiB")


def _report(sim: dict, ort_s: float, per_node: float) -> None:
    total, per_op = sim["total"], sim["per_op"]
    requant = per_op.get("QuantizeDownAndShrinkRange_32to8", 0.0)
    rest = total - sim["gemm"] - sim["im2col"] - requant
    print(f"network: {sim['n_conv']} convolutions, {sim['macs'] / 1e9:.2f} G multiply-adds, "
          f"{sim['authored']} nodes as authored, {sim['nodes']} run after prepare "
          f"(prepare {sim['prepare'] * 1e3:.0f} ms; numba's kernels loaded before it in "
          f"{sim['kernels'] * 1e3:.0f} ms)")
    print(f"simulator   {total * 1e3:8.1f} ms   (best of runs)")
    print(f"onnxruntime {ort_s * 1e3:8.1f} ms   (QLinearConv etc., 1 thread)")
    print(f"ratio simulator/onnxruntime = {total / ort_s:.2f}   (best against best; per round "
          + ", ".join(f"{r:.2f}" for r in sim["rounds"]) + ")")
    print("simulator time split:")
    for label, value in (("GEMM", sim["gemm"]), ("im2col", sim["im2col"]),
                         ("requantize", requant), ("rest", rest)):
        print(f"  {label:<11}{value * 1e3:8.1f} ms  {100 * value / total:5.1f} %")
    convs = ("QuantizedConv2d_8x8to32", "Supernode_8x8p8to8")
    conv = sum(per_op.get(op, 0.0) for op in convs) - sim["gemm"] - sim["im2col"]
    print("  rest by op: " + ", ".join(
        f"{op} {s * 1e3:.1f} ms" for op, s in sorted(per_op.items(), key=lambda kv: -kv[1])
        if op not in (*convs, "QuantizeDownAndShrinkRange_32to8"))
        + f", conv/Supernode outside GEMM/im2col {conv * 1e3:.1f} ms")
    print(f"simulator peak RSS {sim['rss']:.0f} MiB (before onnxruntime was loaded); "
          f"tensors kept by the session {sim['kept'] / 2**20:.0f} MiB")
    parts = (sim["consts"] + sim["weights"] + sim["kept"]) / 2**20
    print(f"  of which: process before the graph {sim['base_rss']:.0f} MiB, constants "
          f"{sim['consts'] / 2**20:.0f} MiB, weights cached for the GEMM "
          f"{sim['weights'] / 2**20:.0f} MiB, kept tensors {sim['kept'] / 2**20:.0f} MiB, "
          f"the rest (graph objects, temporaries) {sim['rss'] - sim['base_rss'] - parts:.0f} MiB")
    print(f"session overhead per node (1,000 Nop chain) {per_node * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
