"""The simulator behind ``hexscope-agent``: one graph's life as hexagon_nn would live it.

States follow spec §2.1: no graph, under construction, prepared, dead (after a failed append
or prepare). Every refusal is a ProtocolError with the code the client is told.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import EngineError
from hexscope.engine.events import NodeFinished, RunStatus
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.remote import protocol as p
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor

HEXAGON_NN_VERSION = 0x00021401           # the version the simulator follows (spec §2.11)
_LOG_DEFAULT = 64 * 1024


def dtype_of(code: int, fallback: DType) -> DType:
    try:
        return DType(code)
    except ValueError:
        return fallback


def guess_input_dtype(shape: tuple[int, ...], nbytes: int) -> DType:
    """hexagon_nn's guess for a graph input (spec §1.2): 4 bytes FLOAT, 2 QINT16, else QUINT8."""
    elements = max(1, int(np.prod(shape)))
    return {4: DType.FLOAT32, 2: DType.QINT16}.get(nbytes // elements, DType.QUINT8)


def guess_const_dtype(elementsize: int) -> DType:
    """hexagon_nn's guess for a const (spec §1.2); a float-sized const is float32 here, as
    the simulator's kernels read 4-byte consts by the port type anyway."""
    return {1: DType.QUINT8, 2: DType.QUINT16, 4: DType.FLOAT32}.get(elementsize, DType.UINT8)


def wire_tensor(tensor: Tensor, device_like: bool = False) -> p.WireTensor:
    data = tensor.raw.tobytes() if tensor.has_data else b""
    if device_like:             # execute_new reports a shape and bytes, no type or padding
        return p.WireTensor(tensor.shape, data, p.UNKNOWN, p.UNKNOWN)
    # the type the device writes into the tensor (qint8 over a broadcast add's quint8 codes)
    return p.WireTensor(tensor.shape, data, tensor.device_dtype.value, tensor.layout.value,
                        tuple(tensor.padding))


class SimDevice:
    """One client's graph on the simulator."""

    def __init__(self, slow_seconds: float = 0.0, device_like: bool = False,
                 max_graph_bytes: int = p.DEFAULT_MAX_GRAPH) -> None:
        self.slow_seconds = slow_seconds        # a test aid: time each node takes at least
        # a test aid: answer as a device agent must (taps without types or d32 padding, after
        # the whole run, none of a failed run), so the client's device paths run here
        self.device_like = device_like
        self.max_graph_bytes = max_graph_bytes
        self.graph_bytes = 0                    # UPLOAD bytes of the graph under construction
        self.state = "none"
        self.graph: Graph | None = None
        self.session: Session | None = None
        self.slots: dict[tuple[int, int], int] = {}
        self.slot_index: dict[tuple[int, int], int] = {}
        self.flat_read: set[tuple[int, int]] = set()
        self.output_node_id = 0
        self.perf: dict[int, list[int]] = {}
        self.log_text = ""

    # graph life ----------------------------------------------------------------------------
    def teardown(self) -> None:
        if self.session is not None:
            self.session.close()
        self.state, self.graph, self.session = "none", None, None
        self.slots, self.slot_index, self.perf = {}, {}, {}
        self.graph_bytes = 0

    def upload(self, msg: p.Upload, size: int = 0) -> p.UploadOk:
        """Append ``msg``'s nodes; ``size``: the bytes of its frame, counted against the
        agent's limit on one graph (``max_graph_bytes``)."""
        if msg.new_graph:
            self.teardown()
            self.graph, self.state, self.log_text = Graph(), "construction", ""
        if self.state != "construction" or self.graph is None:
            raise p.ProtocolError(p.ErrorCode.STATE, f"UPLOAD without NEW_GRAPH: the graph is "
                                  f"{'dead' if self.state == 'dead' else 'not under construction'}")
        if self.graph_bytes + size > self.max_graph_bytes:
            total = self.graph_bytes + size
            self.teardown()                     # give the memory back at once
            self.state = "dead"
            raise p.ProtocolError(p.ErrorCode.APPEND_FAILED, f"UPLOAD: the graph would hold "
                                  f"{total:,} bytes of UPLOAD frames, over this agent's limit "
                                  f"of {self.max_graph_bytes:,} (its --max-graph-bytes); "
                                  "nothing of this frame was appended and the graph is torn "
                                  "down")
        self.graph_bytes += size
        for node in msg.nodes:                  # check the whole frame before appending
            if not node.is_const and node.op not in REGISTRY:
                self.state = "dead"
                raise p.ProtocolError(p.ErrorCode.APPEND_FAILED, f"node 0x{node.node_id:x}: "
                                      f"unknown op {node.op!r}", node.node_id, -1)
        for node in msg.nodes:
            try:
                self._append(node)
            except (EngineError, ValueError) as exc:
                self.state = "dead"
                raise p.ProtocolError(p.ErrorCode.APPEND_FAILED, f"node 0x{node.node_id:x} "
                                      f"({node.op}): {exc}", node.node_id, -1) from None
        return p.UploadOk(len(self.graph))

    def _append(self, node: p.WireNode) -> None:
        assert self.graph is not None
        if node.is_const:
            out = node.outputs[0]
            shape = tuple(out.max_sizes[-4:])
            if not node.const:
                self.graph.append_const_node(node.node_id, None, shape)
                return
            dtype = dtype_of(node.const_dtype, guess_const_dtype(out.elementsize)) \
                if node.const_dtype else guess_const_dtype(out.elementsize)
            data = np.frombuffer(node.const, dtype.numpy)
            if data.size != int(np.prod(shape)):
                raise ValueError(f"{len(node.const)} bytes of const data for shape {shape}")
            self.graph.append_const_node(node.node_id, data.reshape(shape), shape)
            return
        outputs = [OutputDef(o.max_sizes, o.elementsize, o.zero_offset, o.stepsize)
                   for o in node.outputs]
        self.graph.append_node(node.node_id, node.op, node.inputs, outputs, node.padding)

    def prepare(self, msg: p.Prepare) -> p.PrepareOk:
        if self.state != "construction" or self.graph is None:
            raise p.ProtocolError(p.ErrorCode.STATE, "PREPARE: no graph under construction")
        try:
            if msg.taps:
                self.graph.append_node(msg.output_node_id, "OUTPUT",
                                       [(n, i) for n, i, _ in msg.taps])
            start = time.perf_counter_ns()
            self.session = Session(self.graph, "sim", debug_level=msg.debug_level)
            cycles = time.perf_counter_ns() - start
        except EngineError as exc:
            self.state, self.session = "dead", None
            self.log_text += f"prepare failed: {exc}\n"
            raise p.ProtocolError(p.ErrorCode.PREPARE_FAILED, f"prepare failed: {exc}",
                                  nn_rc=-1) from None
        self.session.events.connect(self._on_event)
        self.slots = {(n, i): size for n, i, size in msg.taps}
        self.slot_index = {(n, i): k for k, (n, i, _) in enumerate(msg.taps)}
        # taps the prepared OUTPUT reads through another node: prepare moved the readers of a
        # node it made d32 to its Convert_from_d32 (change_output_refs), so the device's
        # OUTPUT copies that flat tensor into the slot, not the d32 node's padded memory (the
        # tap still carries the d32 node's own output, as the client expects)
        out = self.session.prepared.nodes.get(msg.output_node_id)
        self.flat_read = {(n, i) for (n, i, _), src in zip(
            msg.taps, out.inputs if out is not None else (), strict=False) if src != (n, i)}
        self.output_node_id = msg.output_node_id
        self.state = "prepared"
        self.perf = {i: [0, 0] for i in self.session.plan}
        return p.PrepareOk(len(self.session.prepared.order), cycles)

    # running -------------------------------------------------------------------------------
    def _on_event(self, event: object) -> None:
        if isinstance(event, NodeFinished) and event.node_id in self.perf:
            record = self.perf[event.node_id]
            record[0] += 1
            record[1] += int(event.seconds * 1e9)
            if self._emit is not None:
                self._emit(event.node_id, event.outputs)
            if self.slow_seconds:
                time.sleep(self.slow_seconds)

    _emit: Callable[[int, tuple[Tensor, ...]], None] | None = None

    def execute(self, msg: p.Execute, send_tap: Callable[[p.Tap], None]) -> p.ExecuteDone:
        session = self.session
        if self.state != "prepared" or session is None:
            raise p.ProtocolError(p.ErrorCode.STATE, "EXECUTE: the graph is not prepared")
        wanted = set(msg.taps) if msg.taps else set(self.slots)
        for tap in msg.taps:
            if tap not in self.slots:
                raise p.ProtocolError(p.ErrorCode.BAD_TAP, f"tap 0x{tap[0]:x}:{tap[1]} was not "
                                      "prepared", tap[0])
        inputs = []
        for k, t in enumerate(msg.inputs):
            dtype = dtype_of(t.dtype, guess_input_dtype(t.shape, len(t.data))) \
                if t.dtype != p.UNKNOWN else guess_input_dtype(t.shape, len(t.data))
            try:
                inputs.append(Tensor(t.shape, dtype, np.frombuffer(t.data, np.uint8)))
            except ValueError as exc:
                raise p.ProtocolError(p.ErrorCode.EXECUTE_FAILED, f"input {k}: {exc}") from None
        sent = 0

        held: list[p.Tap] = []            # device-like: sent after the run, if it succeeds
        too_small: list[str] = []         # OUTPUT's refusals, as hexagon_nn logs them

        def emit(node_id: int, outputs: tuple[Tensor, ...]) -> None:
            nonlocal sent
            for idx, tensor in enumerate(outputs):
                if (node_id, idx) in wanted:
                    tap = p.Tap(node_id, idx, wire_tensor(tensor, self.device_like))
                    limit = self.slots[node_id, idx]
                    # matches the device: OUTPUT copies only what fits its slot (spec §4.2);
                    # a slot of 0 bytes (no declared sizes) is not limited here, as the
                    # simulator sizes outputs itself
                    size = math.prod(tensor.shape) * tensor.dtype.size \
                        if (node_id, idx) in self.flat_read else len(tap.tensor.data)
                    if limit and size > limit:
                        too_small.append(f"output {self.slot_index[node_id, idx]} too small "
                                         f"({size} > {limit})")
                        continue
                    if self.device_like:
                        held.append(tap)
                    else:
                        send_tap(tap)
                        sent += 1

        start = time.perf_counter_ns()
        try:
            session.set_inputs(inputs)
            for node_id, idx in sorted(wanted):           # consts do not run: send them first
                node = session.prepared.nodes.get(node_id)
                if node is not None and node.is_const and idx == 0:
                    emit(node_id, (session.output(node_id),))
            self._emit = emit
            finished = session.run()
        except EngineError as exc:
            raise p.ProtocolError(p.ErrorCode.EXECUTE_FAILED, str(exc)) from None
        finally:
            self._emit = None
        cycles = time.perf_counter_ns() - start
        if self.device_like and finished.status is not RunStatus.FAILED:
            for tap in held:
                send_tap(tap)
            sent = len(held)
        if finished.status is RunStatus.FAILED:
            failed = finished.failed_node or 0
            self.log_text += f"execute() failed on node id={failed:x} err=-1\n"
            return p.ExecuteDone(-1, failed, sent, cycles, finished.message)
        if too_small:
            # NN_EXECUTE_BUFFER_SIZE_ERROR: OUTPUT ran and copied every slot that fit
            out = self.output_node_id
            self.log_text += "".join(f"{line}\n" for line in too_small)
            self.log_text += f"execute() failed on node id={out:x} err=2\n"
            return p.ExecuteDone(2, out, sent, cycles, "; ".join(too_small))
        return p.ExecuteDone(0, 0, sent, cycles)

    # inspection ----------------------------------------------------------------------------
    def perfinfo(self, msg: p.PerfRequest) -> p.PerfInfo:
        if self.state != "prepared":
            raise p.ProtocolError(p.ErrorCode.STATE, "PERFINFO: the graph is not prepared")
        records = tuple((i, runs, ns) for i, (runs, ns) in self.perf.items())
        if msg.reset:
            self.perf = {i: [0, 0] for i in self.perf}
        return p.PerfInfo(records, p.COUNTER_SIMULATED_NS)

    def getlog(self, msg: p.LogRequest) -> p.LogText:
        text = self.log_text
        if self.session is not None:
            text += self.session.log.text()
            self.session.log.clear()
        limit = msg.max_bytes or _LOG_DEFAULT
        raw = text.encode()
        self.log_text = ""
        return p.LogText(raw[:limit].decode("utf-8", "ignore"), len(raw) > limit)
