"""Chrome trace-event JSON of a run: the timeline Perfetto and ``chrome://tracing`` open
(issue 30).

One complete event (``ph: "X"``) per node run, named by op, on one track per input set,
with the node's id, label, shapes, the authored nodes a fused node absorbed and, when known,
the device's counter in ``args``; a counter track (``ph: "C"``) of that counter; metadata
events (``ph: "M"``) naming the process and the tracks.

Timestamps are the simulator's clock: each node's measured wall time, laid end to end in
plan order (the executor records durations, not the gaps between nodes), in microseconds
as the format wants. Device cycles are a count, never a duration: they go in ``args`` and
on the counter track, whose name says the unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hexscope.engine.batch.records import BatchResult, RunRecord
from hexscope.engine.device.profile import fused_into
from hexscope.engine.prepare import Prepared
from hexscope.engine.session import Session

__all__ = ["NodeSlice", "RunSlices", "slices_from_batch", "slices_from_session",
           "trace_document"]

PID = 1


@dataclass(frozen=True, slots=True)
class NodeSlice:
    node_id: int
    op: str
    label: str
    seconds: float
    status: str = "done"
    inputs: tuple[tuple[int, ...], ...] = ()
    outputs: tuple[tuple[int, ...], ...] = ()
    absorbed: tuple[str, ...] = ()          # titles of the authored nodes fused into it
    counter: int | None = None              # the device's, for this node
    counter_source: str = ""                # "dsp://..." or the imported profile's file


@dataclass(frozen=True, slots=True)
class RunSlices:
    name: str
    nodes: tuple[NodeSlice, ...]


def _title(prepared: Prepared, node_id: int) -> str:
    node = prepared.nodes.get(node_id)
    label = f" '{node.label}'" if node is not None and node.label else ""
    return f"0x{node_id:x}{label}"


def _absorbed_titles(prepared: Prepared, authored: Mapping[int, str]) -> dict[int, tuple]:
    return {k: tuple(authored.get(a, f"0x{a:x}") for a in v)
            for k, v in fused_into(prepared).items()}


def slices_from_batch(result: BatchResult, prepared: Prepared,
                      authored_titles: Mapping[int, str] | None = None,
                      cycles: Mapping[int, int] | None = None, cycles_source: str = ""
                      ) -> list[RunSlices]:
    """Every run of a ``hexscope run``; ``cycles`` (an imported profile) is used where the
    run has no device counter of its own."""
    absorbed = _absorbed_titles(prepared, authored_titles or {})
    device = result.device or {}
    return [RunSlices(run.name, tuple(_batch_slices(run, prepared, absorbed, device,
                                                    cycles or {}, cycles_source,
                                                    result.backend)))
            for run in result.runs]


def _batch_slices(run: RunRecord, prepared: Prepared, absorbed: dict[int, tuple],
                  device: Mapping[str, object], cycles: Mapping[int, int], source: str,
                  backend: str) -> list[NodeSlice]:
    shapes = {n.node_id: [tuple(o["shape"]) for o in n.outputs] for n in run.nodes}  # type: ignore
    out = []
    for rec in run.nodes:
        if rec.status == "not-run":
            continue
        counter, where = cycles.get(rec.node_id), source
        if rec.device_counter is not None and device.get("counter") == "cycles":
            counter, where = rec.device_counter, backend
        out.append(NodeSlice(rec.node_id, rec.op, rec.label, rec.seconds, rec.status,
                             _input_shapes(prepared, rec.node_id, shapes),
                             tuple(shapes.get(rec.node_id, ())), absorbed.get(rec.node_id, ()),
                             counter, where if counter is not None else ""))
    return out


def _input_shapes(prepared: Prepared, node_id: int,
                  shapes: Mapping[int, Sequence[tuple[int, ...]]]) -> tuple[tuple[int, ...], ...]:
    node = prepared.nodes.get(node_id)
    if node is None:
        return ()
    found = []
    for src, idx in node.inputs:
        source = prepared.nodes.get(src)
        if source is not None and source.const is not None:
            found.append(tuple(source.const.shape))
        elif idx < len(shapes.get(src, ())):
            found.append(tuple(shapes[src][idx]))
        else:
            found.append(())
    return tuple(found)


def slices_from_session(session: Session, cycles: Mapping[int, int] | None = None,
                        cycles_source: str = "", name: str = "run") -> RunSlices:
    """The nodes that have run in ``session`` (the app's last run)."""
    prepared = session.prepared
    authored = {n.node_id: n.title for n in session.graph}
    absorbed = _absorbed_titles(prepared, authored)
    trace = session.executor.trace
    shapes = {i: [tuple(t.shape) for t in r.outputs] for i, r in trace.items()}
    device = getattr(session.backend, "counters", None) or {}
    kind_ok = getattr(session.backend, "counter_kind", 0) != 1     # 1: simulated-ns
    out = []
    for node_id in session.plan:
        result = trace.get(node_id)
        if result is None:
            continue
        node = prepared.nodes[node_id]
        counter, where = (cycles or {}).get(node_id), cycles_source
        if kind_ok and node_id in device:
            counter, where = int(device[node_id]), session.backend.name
        out.append(NodeSlice(node_id, node.op, node.label, result.seconds, "done",
                             _input_shapes(prepared, node_id, shapes),
                             tuple(shapes[node_id]), absorbed.get(node_id, ()), counter,
                             where if counter is not None else ""))
    return RunSlices(name, tuple(out))


def trace_document(runs: Sequence[RunSlices], graph_name: str, backend: str) -> dict:
    """The trace-event JSON object (``{"traceEvents": [...], ...}``)."""
    events: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": PID, "tid": 0,
         "args": {"name": f"hexscope {graph_name} ({backend})"}},
    ]
    any_counter = any(s.counter is not None for r in runs for s in r.nodes)
    clock = 0.0
    for k, run in enumerate(runs, 1):
        events.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": k,
                       "args": {"name": f"nodes: {run.name} (simulator clock)"}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": k,
                       "args": {"sort_index": k}})
        for s in run.nodes:
            # whole nanoseconds, so that a slice never ends after the next one starts once
            # written with 3 decimals (a viewer would nest them)
            start_ns = round(clock * 1000)
            end_ns = start_ns + max(round(s.seconds * 1e9), 0)
            ts, dur = start_ns / 1000, (end_ns - start_ns) / 1000
            while ts + dur > end_ns / 1000:
                dur = (dur * 1000 - 1) / 1000
            args: dict[str, object] = {
                "node": f"0x{s.node_id:x}", "label": s.label, "status": s.status,
                "inputs": [list(x) for x in s.inputs], "outputs": [list(x) for x in s.outputs],
            }
            if s.absorbed:
                args["fused"] = list(s.absorbed)
            if s.counter is not None:
                args["device_cycles"] = s.counter
                args["device_cycles_from"] = s.counter_source
            events.append({"ph": "X", "name": s.op, "cat": "node", "pid": PID, "tid": k,
                           "ts": ts, "dur": dur, "args": args})
            if any_counter:
                events.append({"ph": "C", "name": "device cycles (a count, not time)",
                               "pid": PID, "ts": ts, "args": {"cycles": s.counter or 0}})
            clock = end_ns / 1000
    if any_counter:
        events.append({"ph": "C", "name": "device cycles (a count, not time)", "pid": PID,
                       "ts": clock, "args": {"cycles": 0}})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"tool": "hexscope", "graph": graph_name, "backend": backend,
                          "clock": "simulator wall time per node, laid end to end"}}
