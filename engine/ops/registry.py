"""The op registry: every op is declared once, and the declaration drives everything.

A declaration gives the exact hexagon_nn name, the op id (from ``op_ids``), a category, the
input and output ports, whether the padding mode applies, a doc text, the kernel and the
float reference (``reference=``, see ``reference.py``). The
palette, validation, the docs panel and the executor all read it from :data:`REGISTRY`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import DuplicateOpError, UnknownOpError
from hexscope.engine.ops.op_ids import OP_IDS

if TYPE_CHECKING:
    from hexscope.engine.ops.context import Kernel


class Category(Enum):
    IO = "Graph I/O"
    PLUMBING = "Plumbing"
    CHECK = "Checks"
    PRINT = "Printing"
    D32 = "d32 layout"
    MATH = "Quantized math"
    ACTIVATION = "Activation"
    POOLING = "Pooling"
    QUANTIZE = "Quantize"
    ELEMENTWISE = "Elementwise"
    FLOAT = "Float"
    LOOKUP = "Lookup"
    STATE = "State"
    USER = "User ops"


@dataclass(frozen=True, slots=True)
class Port:
    """One input or output port. ``dtype`` None accepts any type, ``layout`` None any layout.

    A ``shape_only`` input reads only its shape (strides, windows), never its data.
    """

    name: str
    dtype: DType | None = None
    optional: bool = False
    layout: Layout | None = Layout.FLAT
    shape_only: bool = False
    doc: str = ""

    def named(self, name: str) -> Port:
        return Port(name, self.dtype, self.optional, self.layout, self.shape_only, self.doc)

    @property
    def type_text(self) -> str:
        text = self.dtype.c_name if self.dtype else "any"
        if self.layout is Layout.D32:
            text += " d32"
        return text + (" (shape only)" if self.shape_only else "")


@dataclass(frozen=True, slots=True)
class Repeat:
    """A group of ports repeated N >= ``min`` times: blocked (a0 a1 .. b0 b1 ..) by default,
    or interleaved (a0 b0 a1 b1 ..)."""

    ports: tuple[Port, ...]
    min: int = 0
    interleaved: bool = False


@dataclass(frozen=True, slots=True)
class PortList:
    """Fixed head ports (required, then optional), an optional repeated group, tail ports."""

    head: tuple[Port, ...] = ()
    repeat: Repeat | None = None
    tail: tuple[Port, ...] = ()

    @classmethod
    def of(cls, items: Sequence[Port | Repeat]) -> PortList:
        head: list[Port] = []
        tail: list[Port] = []
        repeat: Repeat | None = None
        for item in items:
            if isinstance(item, Repeat):
                if repeat is not None:
                    raise ValueError("an op has at most one repeated port group")
                repeat = item
            else:
                (tail if repeat else head).append(item)
        if repeat and any(p.optional for p in head + tail):
            raise ValueError("optional ports cannot be combined with a repeated group")
        seen_optional = False
        for p in head:
            if seen_optional and not p.optional:
                raise ValueError(f"required port {p.name} follows an optional port")
            seen_optional |= p.optional
        return cls(tuple(head), repeat, tuple(tail))

    @property
    def arity(self) -> tuple[int, int | None]:
        """(minimum, maximum) count; maximum None when unbounded."""
        fixed = len(self.head) + len(self.tail)
        if self.repeat:
            return fixed + self.repeat.min * len(self.repeat.ports), None
        return sum(not p.optional for p in self.head) + len(self.tail), fixed

    def allows(self, count: int) -> bool:
        lo, hi = self.arity
        if count < lo or (hi is not None and count > hi):
            return False
        if self.repeat:
            return (count - len(self.head) - len(self.tail)) % len(self.repeat.ports) == 0
        return True

    def arity_text(self) -> str:
        lo, hi = self.arity
        if self.repeat and len(self.repeat.ports) > 1:
            k = len(self.repeat.ports)
            fixed = len(self.head) + len(self.tail)
            return f"{k}N+{fixed} (N >= {self.repeat.min})" if fixed else f"{k}N (N >= {lo // k})"
        if hi is None:
            return f"at least {lo}"
        return str(lo) if lo == hi else f"{lo} to {hi}"

    def ports_for(self, count: int) -> tuple[Port, ...]:
        """The ports of a node with ``count`` connections, group ports numbered ``x[i]``."""
        if not self.repeat:
            return self.head[:count]
        n = max(0, (count - len(self.head) - len(self.tail)) // len(self.repeat.ports))
        group = self.repeat.ports
        if self.repeat.interleaved:
            middle = [p.named(f"{p.name}[{i}]") for i in range(n) for p in group]
        else:
            middle = [p.named(f"{p.name}[{i}]") for p in group for i in range(n)]
        return self.head + tuple(middle) + self.tail

    def port(self, index: int, count: int) -> Port | None:
        ports = self.ports_for(count)
        return ports[index] if 0 <= index < len(ports) else None


@dataclass(frozen=True)
class OpSpec:
    """The one declaration of an op."""

    name: str
    category: Category
    inputs: PortList
    outputs: PortList
    doc: str = ""
    kernel: Kernel | None = None
    op_id: int | None = None
    uses_padding: bool = False
    d32_output: bool = False   # output capacity follows the d32 widening (§1.4 step 3)
    retain: bool = False       # never removed as dead by prepare (Variable, Assign)
    user: bool = False         # declared by a plugin, not by hexagon_nn
    aliases: tuple[str, ...] = ()
    source: str = ""           # where a user op was declared (file:line)
    # What the op means on real numbers (engine/ops/reference.py): a function, SELF for
    # float ops, or NoReference("why"); None when the declaration gives none (user ops).
    reference: object = None
    # The integer zero codes its kernel subtracts from quint8 inputs (reference.ZeroCode).
    zero_codes: tuple = ()
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0] if self.doc.strip() else self.name

    @property
    def simulated(self) -> bool:
        return self.kernel is not None

    @property
    def never_dead(self) -> bool:
        """Nodes with no outputs, and Variable/Assign, survive dead-node removal (§2.5)."""
        return self.retain or self.outputs.arity == (0, 0)


class OpRegistry:
    """Ops by name, with aliases and suggestions for misspelt names."""

    def __init__(self) -> None:
        self._specs: dict[str, OpSpec] = {}
        self._aliases: dict[str, str] = {}

    def register(self, spec: OpSpec, *, replace: bool = False) -> OpSpec:
        if spec.name in self._specs and not replace:
            raise DuplicateOpError(f"op {spec.name} is already declared")
        for alias in spec.aliases:
            self._aliases[alias] = spec.name
        self._specs[spec.name] = spec
        return spec

    def unregister(self, name: str) -> None:
        spec = self._specs.pop(name)
        for alias in spec.aliases:
            self._aliases.pop(alias, None)

    def canonical(self, name: str) -> str:
        """The library's name for ``name`` (an alias such as a seed spelling resolves)."""
        return self._aliases.get(name, name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.canonical(name) in self._specs

    def get(self, name: str) -> OpSpec:
        try:
            return self._specs[self.canonical(name)]
        except KeyError:
            raise UnknownOpError(self.unknown_message(name)) from None

    def unknown_message(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._specs) + list(self._aliases), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        if name in OP_IDS:
            return f"op {name} is a hexagon_nn op that Hexscope does not declare yet{hint}"
        return f"unknown op {name!r}{hint}"

    def specs(self) -> list[OpSpec]:
        return sorted(self._specs.values(), key=lambda s: (s.op_id is None, s.op_id or 0, s.name))

    def names(self) -> list[str]:
        return [s.name for s in self.specs()]

    def by_category(self) -> dict[Category, list[OpSpec]]:
        groups: dict[Category, list[OpSpec]] = {}
        for spec in sorted(self._specs.values(), key=lambda s: s.name.lower()):
            groups.setdefault(spec.category, []).append(spec)
        return {c: groups[c] for c in Category if c in groups}


REGISTRY = OpRegistry()


def _spec(name: str, category: Category, inputs: Iterable[Port | Repeat],
          outputs: Iterable[Port | Repeat], doc: str, kernel: Kernel | None,
          **options: object) -> OpSpec:
    user = bool(options.get("user", False))
    op_id = None if user else OP_IDS.get(name)
    if op_id is None and not user:
        raise UnknownOpError(f"{name} is not in hexagon_nn's op table; declare it as a user op")
    return OpSpec(name, category, PortList.of(tuple(inputs)), PortList.of(tuple(outputs)),
                  doc=doc, kernel=kernel, op_id=op_id, **options)  # type: ignore[arg-type]


def op(name: str, category: Category, *, inputs: Iterable[Port | Repeat] = (),
       outputs: Iterable[Port | Repeat] = (), registry: OpRegistry | None = None,
       **options: object) -> Callable[[Kernel], Kernel]:
    """Declare an op whose kernel is the decorated function; its docstring is the doc text."""

    def decorate(kernel: Kernel) -> Kernel:
        doc = kernel.__doc__ or ""
        spec = _spec(name, category, inputs, outputs, _dedent(doc), kernel, **options)
        (registry or REGISTRY).register(spec)
        return kernel

    return decorate


def shared_doc(notes: str) -> Callable[[Kernel], Kernel]:
    """Append notes that several ops share to a kernel's own docstring.

    Place it below ``@op`` (decorators apply bottom-up), since ``@op`` reads the docstring.
    """

    def attach(kernel: Kernel) -> Kernel:
        own = _dedent(kernel.__doc__ or "")
        kernel.__doc__ = own + "\n\n" + _dedent(notes) if own else _dedent(notes)
        return kernel

    return attach


def declare_op(name: str, category: Category, *, inputs: Iterable[Port | Repeat] = (),
               outputs: Iterable[Port | Repeat] = (), doc: str = "",
               registry: OpRegistry | None = None, **options: object) -> OpSpec:
    """Declare an op without a kernel: the simulator reports it as not simulated."""
    spec = _spec(name, category, inputs, outputs, _dedent(doc), None, **options)
    return (registry or REGISTRY).register(spec)


def _dedent(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc)
