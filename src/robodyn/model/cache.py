"""Values computed once per robot (and per key, such as a parameter binding), forgotten with the robot.

Robots are immutable, so what is compiled from one (a NumPy model, lambdified dynamics, derivative
functions) can be kept as long as the robot lives. The cache is keyed by the robot's identity, not its
value: hashing a robot would hash every sympy expression in it, and two equal robots built apart are
rare. An entry goes when its robot is garbage collected; each robot keeps at most ``limit`` keys,
the oldest dropped first.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerRobotCache(Generic[T]):
    """``cache.get(robot, key, make)``: ``make()`` the first time for this robot and key, then the same value."""

    def __init__(self, limit: int = 16) -> None:
        self.limit = limit
        self._entries: dict[int, tuple[weakref.ref, dict[Hashable, T]]] = {}

    def get(self, robot: object, key: Hashable, make: Callable[[], T]) -> T:
        entry = self._entries.get(id(robot))
        if entry is None or entry[0]() is not robot:  # a new robot, or a dead one's id reused
            entry = (weakref.ref(robot), {})
            self._entries[id(robot)] = entry
            weakref.finalize(robot, self._entries.pop, id(robot), None)
        values = entry[1]
        if key not in values:
            value = make()
            if len(values) >= self.limit:
                values.pop(next(iter(values)))
            values[key] = value
        return values[key]

    def __len__(self) -> int:
        return len(self._entries)
