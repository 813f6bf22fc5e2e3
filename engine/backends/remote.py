"""The connected DSP (``dsp://HOST:PORT``): a backend that runs whole graphs on a device agent.

hexagon_nn runs a graph, not a node. So this backend's ``run_node`` is served from a cache
filled by *remote runs*: upload the graph as authored up to the node the run is heading for
(a prefix of the append order is closed under inputs, spec §2.13), prepare it with a tap on
every output of every node that runs, execute, and keep every tap that comes back. The
executor still walks the plan node by node, so breakpoints, restart and run-to work as with
the simulator; an edit re-prepares, which makes the next remote run upload again.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hexscope.engine.errors import BackendError, EngineError, KernelError
from hexscope.engine.events import Emitter
from hexscope.engine.nodes import Node
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.registry import REGISTRY, OpRegistry, OpSpec
from hexscope.engine.remote import protocol as p
from hexscope.engine.remote.client import AgentClient, ConnectionLost
from hexscope.engine.remote.graph_wire import tap_slots, tensor_of, wire_input, wire_nodes
from hexscope.engine.tensor import Tensor

if TYPE_CHECKING:
    from hexscope.engine.prepare import Prepared

TOKEN_ENV = "HEXSCOPE_AGENT_TOKEN"
_KEYS = itertools.count(1)
OUTPUT_NODE_ID = 0x7FFFFFF0        # the agent's OUTPUT node; ids this high are rare in graphs


@dataclass(frozen=True, slots=True)
class ConnectionStatus:
    """What a status indicator shows: connected or not, the device, the last problem."""

    connected: bool
    address: str
    hexagon_nn_version: int = 0
    description: str = ""
    message: str = ""

    @property
    def version_text(self) -> str:
        v = self.hexagon_nn_version
        return f"{v >> 16}.{v >> 8 & 0xFF}.{v & 0xFF} (0x{v:08x})" if v else "unknown"


def parse_dsp_address(spec: str) -> tuple[str, int]:
    rest = spec.removeprefix("dsp://").rstrip("/")
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise BackendError(f"backend {spec!r}: expected dsp://HOST:PORT, e.g. "
                           "dsp://127.0.0.1:5599")
    return host.strip("[]"), int(port)


class RemoteBackend:
    """Runs graphs on a device agent (docs/protocol.md); see the module docstring."""

    runs_graph = True

    def __init__(self, host: str, port: int, token: str | None = None, *,
                 registry: OpRegistry = REGISTRY, connect_timeout: float = 5.0,
                 reply_timeout: float = 30.0, client: AgentClient | None = None) -> None:
        self.name = f"dsp://{host}:{port}"
        # an agent serves one client: a second session on the same device (a comparison)
        # shares this connection through sibling() instead of being refused as BUSY
        self._owns_client = client is None
        self.client = client or AgentClient(host, port, token, connect_timeout=connect_timeout,
                                            reply_timeout=reply_timeout,
                                            label=f"agent {self.name}")
        self._key = next(_KEYS)
        self.registry = registry
        self.status: Emitter[ConnectionStatus] = Emitter()
        self.prepared: Prepared | None = None
        self.cache: dict[int, dict[int, Tensor]] = {}
        self.counters: dict[int, int] = {}        # node id -> the device's counter, last run
        self.counter_kind = p.COUNTER_CYCLES
        self.remote_runs = 0
        self.uploads = 0
        self._lock = threading.RLock()
        self._position: dict[int, int] = {}       # authored node id -> append position
        self._covered = -1                        # plan index the last remote run reached
        self._problem: str | None = None          # why nodes up to _covered have no outputs
        self._failed: tuple[int, str] | None = None
        self._too_small: str | None = None       # OUTPUT's status 2: why taps are missing
        self._slot_bytes: dict[tuple[int, int], int] = {}   # the prepared taps' buffers
        self._output_id = OUTPUT_NODE_ID
        self._target: int | None = None
        self._graph_inputs: tuple[Tensor, ...] = ()
        self._bad: dict[int, str] = {}            # node id -> why its tap was unreadable
        self.last_target: int | None = None     # the node the last remote run went to

    # connection ----------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self.client.connected

    def connect(self) -> ConnectionStatus:
        """Connect (again); raises BackendError (AgentAuthError for a wrong token)."""
        with self._lock:
            self._on_agent = None
            try:
                hello = self.client.connect()
            except BackendError as exc:
                self._report(str(exc))
                raise
            self.counter_kind = hello.counter_kind
            status = self.connection_status()
            self.status.emit(status)
            return status

    def connection_status(self, message: str = "") -> ConnectionStatus:
        hello = self.client.hello
        return ConnectionStatus(self.client.connected, self.client.address,
                                hello.hexagon_nn_version if hello else 0,
                                hello.description if hello else "", message)

    def _report(self, message: str) -> None:
        self._on_agent = None
        self.status.emit(self.connection_status(message))

    def close(self) -> None:
        with self._lock:
            if self._owns_client:
                self.client.close()
            self._on_agent = None

    def abort(self) -> None:
        """Break the connection from any thread (see :meth:`AgentClient.abort`): a run
        waiting for the device ends at once, reporting the lost connection."""
        self.client.abort()

    def sibling(self) -> RemoteBackend:
        """Another backend on this connection (its own graph and cache; closing it leaves
        the connection open). Use it only while this one is not running."""
        return RemoteBackend(self.client.host, self.client.port, registry=self.registry,
                             client=self.client)

    @property
    def _on_agent(self) -> int | None:
        """The authored prefix length of this backend's graph prepared on the agent, or
        None when the agent holds another graph (or none)."""
        held = self.client.on_agent
        return held[1] if held is not None and held[0] == self._key else None

    @_on_agent.setter
    def _on_agent(self, end: int | None) -> None:
        if end is not None:
            self.client.on_agent = (self._key, end)
        elif self._on_agent is not None:
            self.client.on_agent = None

    # the backend interface -----------------------------------------------------------------
    def prepare(self, prepared: Prepared) -> None:
        """A new prepared graph: the agent's copy is out of date, and so is the cache."""
        with self._lock:
            self.prepared = prepared
            self._position = {n.node_id: k for k, n in enumerate(prepared.authored)}
            self._plan_index = {node_id: k for k, node_id in enumerate(prepared.plan)}
            self._on_agent = None
            self.begin_run()
            if not self.client.connected:
                self.connect()

    @property
    def problem(self) -> str | None:
        """Why the last device run returned less than asked (a lost connection, a refusal),
        or None."""
        return self._problem

    def begin_run(self) -> None:
        """A new execution: forget the outputs of the last one."""
        self.cache.clear()
        self.counters.clear()
        self._bad.clear()
        self._covered, self._problem, self._failed = -1, None, None
        self._too_small = None

    def set_target(self, node_id: int | None) -> None:
        """The node the current run is heading for (None: the node being asked for)."""
        self._target = node_id

    def run_node(self, node: Node, spec: OpSpec, inputs: Sequence[Tensor],
                 ctx: KernelContext) -> Sequence[Tensor | np.ndarray]:
        if node.op == "OUTPUT" or node.node_id not in self._position:
            # OUTPUT only hands tensors to the caller; a node prepare made (an internal id)
            # cannot be tapped on the device (it does not exist when the taps are appended)
            if spec.kernel is None:
                raise KernelError(f"{spec.name}: not simulated, and the device cannot tap it")
            return spec.kernel(ctx, *inputs)
        with self._lock:
            outputs = self.cache.get(node.node_id)
            index = self._plan_index.get(node.node_id, -1)
            if outputs is None and index > self._covered:
                self._remote_run(node.node_id, ctx.graph_inputs)
                outputs = self.cache.get(node.node_id)
            if outputs is None:
                raise self._missing(node)
            hello = self.client.hello
            if hello is not None and hello.agent_kind == p.AGENT_DEVICE and \
                    any(not o.max_sizes for o in node.outputs):
                ctx.warn("an output is declared without sizes: hexagon_nn gives it no buffer "
                         "(graph spec §1.4), so this node may fail or return nothing on the "
                         "device; declare its output sizes")
            return [outputs[k] if k in outputs else self._absent(node, k)
                    for k in range(len(node.outputs))]

    # remote runs ---------------------------------------------------------------------------
    def _remote_run(self, node_id: int, graph_inputs: Sequence[Tensor]) -> None:
        prepared = self.prepared
        assert prepared is not None
        target = self._target if self._target in self._plan_index else node_id
        last = self._plan_index[target]
        plan = prepared.plan[:last + 1]
        # the prefix of the append order that holds every node of the plan up to the target
        # (a Supernode runs in its convolution's place under its last node's id)
        end = max((self._position[i] for i in plan if i in self._position), default=-1) + 1
        authored = prepared.authored[:end]
        ids = {n.node_id for n in authored}
        self._covered, self._problem, self._failed = last, None, None
        self._too_small = None
        self._bad.clear()
        self.last_target = target
        try:
            if not self.client.connected:
                self.connect()
            if self._on_agent != end:
                self._on_agent = None
                self.client.upload(wire_nodes(authored))
                self.uploads += 1
                tapped = [prepared.nodes[i] for i in plan if i in ids]
                output_id = OUTPUT_NODE_ID
                while output_id in self._position:          # a graph that uses the id
                    output_id -= 1
                slots = tap_slots(tapped, self.registry)
                self.client.prepare(output_id, slots)
                self._slot_bytes = {(n, k): size for n, k, size in slots}
                self._output_id = output_id
                self._on_agent = end
            self._graph_inputs = tuple(graph_inputs)
            done = self.client.execute([wire_input(t) for t in graph_inputs], (),
                                       self._keep)
            self.remote_runs += 1
            perf = self.client.perfinfo(reset=True)
        except ConnectionLost as exc:
            received = sum(len(v) for v in self.cache.values())
            self._problem = (f"the connection to {self.name} was lost during the run: {exc}; "
                             f"the {received} output(s) received before are kept")
            self._report(self._problem)
            return
        except BackendError as exc:
            self._on_agent = None
            self._problem = f"{self.name}: {exc}"
            return
        self.counter_kind = perf.counter_kind
        for rec_id, _runs, counter in perf.records:
            self.counters[rec_id] = counter
        if done.status == 2 and done.failed_node_id in (self._output_id, 0):
            # NN_EXECUTE_BUFFER_SIZE_ERROR: every node ran, and the OUTPUT node copied the
            # taps that fit (spec §4.2); the others fail their nodes (_missing)
            self._too_small = done.message or "output too small"
        elif done.status != 0:
            self._failed = (done.failed_node_id, done.message or
                            f"execute returned {done.status}")
        # a node without outputs (Check, Close, PPrint) has nothing to tap: it ran if the run
        # got past it
        for i in plan:
            if i == done.failed_node_id and done.status != 0:
                break
            if not prepared.nodes[i].outputs and i in ids:
                self.cache.setdefault(i, {})

    def _keep(self, tap: p.Tap) -> None:
        """A TAP frame, as it arrives. Never raises: a tap that cannot be read fails its own
        node (``_bad``), not the whole run."""
        prepared = self.prepared
        assert prepared is not None
        node = prepared.nodes.get(tap.node_id)
        try:
            spec = self.registry.get(node.op) if node is not None and \
                node.op in self.registry else None
            tensor = tensor_of(tap, spec, tap.output_idx, self._inherited(node, tap.output_idx),
                               len(node.outputs) if node is not None else 0)
        except (ValueError, EngineError) as exc:
            self._bad[tap.node_id] = f"output {tap.output_idx} from the device: {exc}"
            return
        self.cache.setdefault(tap.node_id, {})[tap.output_idx] = tensor.readonly()

    def _inherited(self, node: Node | None, index: int) -> Tensor | None:
        """The tensor a pass-through op carries on in the simulator: the graph input for
        INPUT, else the op's first input (a Const's data, or a tap that came before)."""
        if node is None:
            return None
        if node.op == "INPUT":
            inputs = self._graph_inputs
            return inputs[index] if index < len(inputs) else None
        if not node.inputs or self.prepared is None:
            return None
        src, idx = node.inputs[0]
        source = self.prepared.nodes.get(src)
        if source is not None and source.is_const:
            return source.const
        return self.cache.get(src, {}).get(idx)

    def _missing(self, node: Node) -> Exception:
        if node.node_id in self._bad:
            return BackendError(self._bad[node.node_id])
        if self._failed is not None:
            failed, message = self._failed
            if failed == node.node_id or not failed:
                return KernelError(f"failed on the device: {message}")
            return BackendError(f"the device's run failed at node 0x{failed:x} ({message}); "
                                "a device returns no outputs of a failed run")
        if self._too_small is not None:
            return self._too_small_error(node, 0)
        if self._problem is not None:
            return BackendError(self._problem)
        return BackendError(f"{self.name} returned no outputs for node {node.title}")

    def _absent(self, node: Node, k: int) -> Tensor:
        """Some outputs of a node came, output ``k`` did not (the run broke between them)."""
        if self._too_small is not None:
            raise self._too_small_error(node, k)
        if self._problem is not None or self._failed is not None:
            raise self._missing(node)
        raise BackendError(f"{self.name} returned no output {k} of node {node.title}")


    def _too_small_error(self, node: Node, k: int) -> KernelError:
        size = self._slot_bytes.get((node.node_id, k))
        room = f"the {size} bytes its declared sizes give" if size else "its buffer"
        return KernelError(f"output {k} did not fit {room} on the device: hexagon_nn's OUTPUT "
                           f"node returned status 2, output too small ({self._too_small}); "
                           "declare output sizes large enough for the tensor")


def make_remote_backend(spec: str, token: str | None = None) -> RemoteBackend:
    import os

    host, port = parse_dsp_address(spec)
    return RemoteBackend(host, port, token if token is not None
                         else os.environ.get(TOKEN_ENV) or None)
