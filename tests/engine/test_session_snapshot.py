"""snapshot_states: the per-run roll-back copy of node state (engine/session.py)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.dtypes import DType
from hexscope.engine.graph import Graph
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import Shared
from hexscope.engine.ops.registry import Category, OpRegistry, Port, op
from hexscope.engine.session import Session, snapshot_states


@dataclass
class _Range:
    mn: np.float32
    mx: np.float32
    flags: int


@dataclass
class _Holder:
    values: list


def test_a_snapshot_is_not_changed_by_later_runs_and_shares_shared_entries() -> None:
    shared = Shared("key", np.arange(3))
    states = {1: {"range": [np.float32(-1.0), np.float32(1.0), True, False],
                  "rng": _Range(np.float32(0), np.float32(6), 3), "rhs": shared},
              2: {"nested": {"a": [1, [2]]}, "holder": _Holder([1, 2]), "n": 4}, 3: {}}
    snap = snapshot_states(states)
    assert snap == {1: {"range": [-1.0, 1.0, True, False], "rng": _Range(0, 6, 3),
                        "rhs": shared}, 2: {"nested": {"a": [1, [2]]}, "holder": _Holder([1, 2]),
                                            "n": 4}, 3: {}}
    assert snap[1]["rhs"] is shared
    states[1]["range"][0] = np.float32(-8.0)
    states[1]["rng"].mx = np.float32(12.0)
    states[2]["nested"]["a"][1].append(3)
    states[2]["holder"].values.append(3)
    states[3]["new"] = 1
    assert snap[1]["range"][0] == -1.0 and snap[1]["rng"].mx == 6.0
    assert snap[2]["nested"] == {"a": [1, [2]]} and snap[2]["holder"].values == [1, 2]
    assert snap[3] == {}


@dataclass
class _Arrays:
    lo: np.ndarray
    flags: int


def test_a_dataclass_holding_an_array_is_copied_deeply() -> None:
    states = {1: {"r": _Arrays(np.zeros(2), 1), "ok": _Range(np.float32(1), np.float32(2), 0)}}
    snap = snapshot_states(states)
    states[1]["r"].lo[0] = 5.0
    states[1]["ok"].flags = 3
    assert snap[1]["r"].lo[0] == 0.0 and snap[1]["ok"].flags == 0
    assert snap[1]["ok"] is not states[1]["ok"] and type(snap[1]["ok"]) is _Range


class _Mode(Enum):
    ADD = 1


@dataclass(frozen=True)
class _Scaling:
    scale: int
    gain: np.float32


@dataclass(frozen=True)
class _FrozenHolder:
    values: list


def test_immutable_tuples_enums_and_frozen_dataclasses_are_shared_mutable_ones_copied() -> None:
    key = ((1, 4, 4, 32), (4, 4, 4, 0, 0, 0), _Mode.ADD, np.float32(0.5))
    scaling = _Scaling(3, np.float32(1.5))
    holder = _FrozenHolder([1])
    mixed = (1, [2])
    states = {1: {"key": key, "oper": _Mode.ADD, "scaling": scaling, "holder": holder,
                  "mixed": mixed}}
    snap = snapshot_states(states)[1]
    assert snap["key"] is key and snap["oper"] is _Mode.ADD and snap["scaling"] is scaling
    assert snap["holder"] is not holder and snap["mixed"] is not mixed
    holder.values.append(2)
    mixed[1].append(3)
    assert snap["holder"].values == [1] and snap["mixed"] == (1, [2])


def test_a_range_type_copied_by_its_fields_is_still_copied_deeply_when_it_holds_a_list() -> None:
    scalars = _Range(np.float32(0), np.float32(1), 0)
    snapshot_states({1: {"r": scalars}})          # the type's fast copy is set up
    held = _Range(np.float32(0), np.float32(1), [1])  # type: ignore[arg-type]
    snap = snapshot_states({1: {"r": held, "s": scalars}})[1]
    held.flags.append(2)
    scalars.flags = 5
    assert snap["r"].flags == [1] and snap["s"].flags == 0
    assert snapshot_states({1: {"r": scalars}})[1]["r"] == scalars    # and it still runs


# --- begin_run's kept copies (snapshot_states with a memo) ---------------------------------------
def _bits(value: object) -> object:
    """A value as comparable data down to the bits of each float (0.0 and -0.0 differ) and
    with its type."""
    if isinstance(value, (float, np.floating)):
        return type(value).__name__, np.asarray(value).tobytes()
    if isinstance(value, dict):
        return tuple((k, _bits(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value).__name__, tuple(map(_bits, value))
    if hasattr(value, "__dict__") and not isinstance(value, Enum):
        return type(value).__name__, _bits(vars(value))
    return type(value).__name__, repr(value)


_STEPS = st.sampled_from(["same", "neg_zero", "new_equal_float", "same_float_again",
                          "replace_equal_range", "list_in_place", "add_key", "drop_key",
                          "reorder", "new_tuple", "swap_fields"])


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(_STEPS, max_size=12), value=st.floats(-4, 4, width=32))
def test_a_kept_copy_follows_every_change_made_between_snapshots(steps, value) -> None:
    """After each change a run could make to node state, the memo's snapshot equals a fresh
    one to the bit, and every earlier snapshot still holds what the state held when it was
    taken: nothing a run writes leaks into a kept copy."""
    rng_obj = _Range(np.float32(0.0), np.float32(value), 3)
    key = ((1, 2), _Mode.ADD)
    states = {1: {"rng": rng_obj, "key": key, "n": 1, "s": Shared("k", 1)},
              2: {"list": [1, 2], "rng": _Range(np.float32(1), np.float32(2), 0)},
              3: {"n": 2}}
    memo: dict[int, tuple] = {}
    taken = []
    for step in ["same", *steps]:
        live = states[1]
        if step == "neg_zero":
            live["rng"].mn = np.float32(-0.0) if np.signbit(live["rng"].mn) is np.False_ \
                else np.float32(0.0)
        elif step == "new_equal_float":
            live["rng"].mx = np.float32(float(live["rng"].mx))
        elif step == "same_float_again":
            live["rng"].mx = live["rng"].mx
        elif step == "replace_equal_range":
            live["rng"] = _Range(live["rng"].mn, live["rng"].mx, live["rng"].flags)
        elif step == "list_in_place":
            states[2]["list"].append(3)
        elif step == "add_key":
            live["extra"] = _Range(np.float32(1), np.float32(1), 1)
        elif step == "drop_key":
            live.pop("extra", None)
        elif step == "reorder":
            states[1] = dict(reversed(live.items()))
        elif step == "new_tuple":
            live["key"] = ((1, 2), _Mode.ADD)
        elif step == "swap_fields":
            live["rng"].mn, live["rng"].mx = live["rng"].mx, live["rng"].mn
        snap = snapshot_states(states, memo)
        fresh = snapshot_states(states)
        assert _bits(snap) == _bits(fresh) == _bits(states)
        for node_id, state in states.items():     # immutables shared as a fresh copy does
            for k, v in state.items():
                assert (snap[node_id][k] is v) == (fresh[node_id][k] is v)
        taken.append((snap, _bits(snap)))
        for old, bits in taken:
            assert _bits(old) == bits


def test_a_range_written_in_place_during_a_run_is_rolled_back_by_restart() -> None:
    """A Session's runs with a node that widens a kept range object in place: runs that
    change nothing reuse begin_run's copy; then a run widens the range (and a -0.0 for a
    0.0), and Restart, after it finished and part-way through, gives back the range the
    run began with, to the bit; the run after the widening one begins from (and rolls back
    to) the widened range, not a copy kept from before it."""
    reg = OpRegistry()
    for name in ("INPUT", "OUTPUT"):
        reg.register(REGISTRY.get(name))

    @op("Widen", Category.USER, registry=reg, user=True,
        inputs=(Port("x", DType.FLOAT32),), outputs=(Port("y", DType.FLOAT32),))
    def widen(ctx, x):
        """Widens its kept range to the input's extremes, in place."""
        r = ctx.state.setdefault("r", _Range(np.float32(0.0), np.float32(1.0), 0))
        lo, hi = np.float32(x.array.min()), np.float32(x.array.max())
        if lo < r.mn or (lo == 0 and np.signbit(lo)):
            r.mn = lo
        if hi > r.mx:
            r.mx = hi
        return [np.array([r.mn, r.mx], np.float32)]

    g = Graph()
    g.append_node(1, "INPUT", outputs=1)
    g.append_node(2, "Widen", inputs=[(1, 0)], outputs=1)
    g.append_node(3, "OUTPUT", inputs=[(2, 0)])
    s = Session(g, registry=reg)
    small = np.array([0.5, 0.25], np.float32)
    for _ in range(3):
        s.execute([small])
    began = _bits(s.executor.states[2])
    wide = np.array([-0.0, 7.0], np.float32)
    assert s.execute([wide])[0].array.ravel().tolist() == [0.0, 7.0]
    assert np.signbit(s.executor.states[2]["r"].mn)
    s.restart()
    assert _bits(s.executor.states[2]) == began
    s.run()
    assert _bits(s.executor.states[2]) != began
    s.restart()
    s.step()
    s.step()                                        # Widen has run: the range is wide
    assert s.executor.states[2]["r"].mx == 7.0
    s.restart()
    assert _bits(s.executor.states[2]) == began
    s.set_inputs([small])
    s.run()
    assert _bits(s.executor.states[2]) == began     # the small run changes nothing
    s.execute([wide])
    widened = _bits(s.executor.states[2])
    assert widened != began
    s.execute([small])                              # begins from the widened range
    s.restart()
    assert _bits(s.executor.states[2]) == widened
