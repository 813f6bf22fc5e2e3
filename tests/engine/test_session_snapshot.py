"""snapshot_states: the per-run roll-back copy of node state (engine/session.py)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from hexscope.engine.ops.context import Shared
from hexscope.engine.session import snapshot_states


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
