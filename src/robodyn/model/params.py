"""Values for a robot's symbolic parameters (``params={"L1": 1.0, ...}``, ``--param L1=1.0``), checked once.

Every place that binds parameter values goes through :func:`bind_parameters` (names to floats, with
defaults), :func:`symbol_values` (Symbols to floats) or :func:`bound_robot` (the robot with them
substituted); the compiled code checks its parameter vector with :func:`parameter_value`. A name the robot
does not have, a value that is not a number, or one that is not finite (nan, inf, or an overflowing literal
such as ``1e999``) is one :class:`~robodyn.errors.ModelError` naming the parameter, and an unknown name is
listed beside the robot's parameters. Silently ignoring a misspelt name would leave the default or stop
later with a vaguer message.
"""

from __future__ import annotations

import cmath
import math
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import sympy

from robodyn.errors import ModelError
from robodyn.model.expr import MAX_MAGNITUDE, shown
from robodyn.model.manipulator import Manipulator

#: Values used for parameters the caller leaves free (only where the robot has them).
DEFAULT_PARAMETERS: dict[str, float] = {"g": 9.81}


def parameter_value(name: object, value: Any) -> float:
    """``value`` as a finite float; otherwise a :class:`ModelError` naming the parameter."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"parameter {name} must be a number, got {value!r}", field="params") from None
    if not math.isfinite(number):
        raise ModelError(f"parameter {name} must be a finite number, got {value!r}", field="params")
    if abs(number) > MAX_MAGNITUDE:
        raise ModelError(f"parameter {name} must be at most {MAX_MAGNITUDE:g} in magnitude, got {value!r}",
                         field="params")
    return number


def parameter_list(robot: Manipulator) -> str:
    """The robot's parameter names for a message ("L1, L2, g" or "none: the model is numeric")."""
    names = [s.name for s in robot.parameters()]
    return ", ".join(names) if names else "none: the model is numeric"


def check_names(robot: Manipulator, names: Iterable[object]) -> None:
    """Refuse a name that is not one of ``robot``'s parameters, listing them."""
    known = {s.name for s in robot.parameters()}
    unknown = sorted({str(name) for name in names} - known)
    if unknown:
        raise ModelError(
            f"robot {robot.name!r} has no parameter {unknown[0]!r} (its parameters: {parameter_list(robot)})",
            field="params",
        )


def bind_parameters(
    robot: Manipulator, params: Mapping[Any, Any] | None, defaults: Mapping[str, float] = DEFAULT_PARAMETERS
) -> dict[str, float]:
    """``params`` as {name: finite float}, checked against ``robot``'s parameters, with ``defaults`` for the
    parameters of ``robot`` the caller leaves out."""
    given = {str(name): value for name, value in (params or {}).items()}
    check_names(robot, given)
    names = {s.name for s in robot.parameters()}
    values = {k: v for k, v in defaults.items() if k in names}
    values.update({name: parameter_value(name, value) for name, value in given.items()})
    return values


def symbol_values(params: Mapping[Any, Any] | None) -> dict[sympy.Symbol, float]:
    """``params`` keyed by sympy Symbols (names or Symbols given), each value checked by :func:`parameter_value`."""
    mapping: dict[sympy.Symbol, float] = {}
    for key, value in (params or {}).items():
        symbol = sympy.Symbol(key) if isinstance(key, str) else key
        if not isinstance(symbol, sympy.Symbol):
            raise TypeError(f"params keys must be str or sympy.Symbol, got {type(key).__name__}")
        mapping[symbol] = parameter_value(symbol, value)  # a finite number, or one ModelError
    return mapping


def check_bound(robot: Manipulator, bound: Iterable[sympy.Symbol] | Mapping[sympy.Symbol, float]) -> None:
    """Refuse, with one :class:`ModelError` naming them (also as ``unbound``, for the command line's hint), the
    parameters of ``robot`` that ``bound`` leaves without a value. When ``bound`` maps the symbols to their values
    (as :func:`symbol_values` gives them; every binder passes them so: :func:`bound_robot`,
    :func:`robodyn.model.floats.bound_floats`), every field is then checked under them by
    :func:`check_bound_values`."""
    given = set(bound)
    missing = [s.name for s in robot.parameters() if s not in given]
    if missing:
        example = ", ".join(repr(m) + ": ..." for m in missing[:3]) + (", ..." if len(missing) > 3 else "")
        listed = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise ModelError(f"robot {robot.name!r} has free symbols {listed}; a numeric computation needs "
                         f"numbers: bind them with params={{{example}}}", field="params", unbound=tuple(missing))
    if isinstance(bound, Mapping):
        check_bound_values(robot, bound)


def _fields(robot: Manipulator) -> Iterator[tuple[int | str | None, str, Any]]:
    """(link, field, expression) for every expression of ``robot`` (link: 1-based, "payload" or None)."""
    bodies: list[tuple[int | str, Any]] = [(k, link) for k, link in enumerate(robot.links, start=1)]
    if robot.payload is not None:
        bodies.append(("payload", robot.payload))
    for where, body in bodies:
        for name in ("a", "alpha", "d", "theta", "mass", "damping", "armature", "stiffness", "springref"):
            if hasattr(body, name):
                yield where, name, getattr(body, name)
        for name in ("com", "inertia", "coulomb", "placement"):
            for value in getattr(body, name, ()):
                yield where, name, value
    for name in ("gravity", "tip_force", "tip_moment", "tool"):
        for value in getattr(robot, name):
            yield None, name, value
    for coupling in getattr(robot, "couplings", ()):
        yield None, "couplings", coupling.ratio
        yield None, "couplings", coupling.offset


def check_bound_values(robot: Manipulator, values: Mapping[sympy.Symbol, float]) -> None:
    """Refuse, with one :class:`ModelError` naming the link and the field, a field of ``robot`` whose value under
    ``values`` is not a finite real number of magnitude at most :data:`~robodyn.model.expr.MAX_MAGNITUDE`
    (``1/(l1 - 1)`` at l1 = 1, ``sqrt(l1)`` at l1 = -1, ``1e18*m1`` at m1 = 1e20): the one check of bound values,
    shared by every engine (the numeric one, the lambdified and compiled simulation, the linearisation), so
    that none computes with a complex or infinite number and all refuse the same values."""
    floats = {s: sympy.Float(v) for s, v in values.items()}
    for link, field, expr in _fields(robot):
        symbols = getattr(expr, "free_symbols", None)
        if not symbols or not symbols <= floats.keys():
            continue
        try:
            number = complex(sympy.N(expr.xreplace(floats), 17))
        except (TypeError, ValueError, OverflowError, ZeroDivisionError):
            number = complex(math.nan)
        given = ", ".join(f"{s.name}={values[s]:g}" for s in sorted(symbols, key=lambda s: s.name)[:4])
        if not cmath.isfinite(number):
            problem = "is infinite or undefined"
        elif number.imag != 0:
            problem = f"is complex ({number:.3g})"
        elif abs(number.real) > MAX_MAGNITUDE:
            problem = f"is {number.real:.3g}"
        else:
            continue
        raise ModelError(f"{shown(expr)} {problem} with the parameter values given ({given}): not a finite real "
                         f"number of magnitude at most {MAX_MAGNITUDE:g}", link=link, field=field)


def bound_robot(robot: Manipulator, params: Mapping[Any, Any] | None) -> Manipulator:
    """``robot`` with ``params`` (names or Symbols, checked as by :func:`symbol_values`, :func:`check_names` and
    :func:`check_bound`) substituted: every parameter bound."""
    values = symbol_values(params)
    check_names(robot, (s.name for s in values))
    check_bound(robot, values)
    if not values:
        return robot
    with warnings.catch_warnings():  # the model's own warnings were given when it was loaded
        warnings.simplefilter("ignore")
        return robot.subs(values)


def random_values(robot: Manipulator, rng: Any, low: float = 0.5, high: float = 2.0,
                  off_diagonal_scale: float | None = None) -> dict[str, float]:
    """A random value in [low, high) for every parameter of ``robot`` (``rng``: a numpy Generator), physical
    where the inertia tensors are made of plain symbols: the symbols of off-diagonal entries are scaled by
    ``off_diagonal_scale`` (default low / (2 high)), so each tensor is diagonally dominant, hence positive
    definite, as values bound with ``params=`` must be. For checks at random parameter values (the demo, tests)."""
    scale = low / (2 * high) if off_diagonal_scale is None else off_diagonal_scale
    bodies = (*robot.links, *([robot.payload] if robot.payload is not None else []))
    off_diagonal = {s for body in bodies for i in range(3) for j in range(3) if i != j
                    for s in body.inertia[i, j].free_symbols}
    return {s.name: float(rng.uniform(low, high)) * (scale if s in off_diagonal else 1.0) for s in robot.parameters()}


def geometry_symbols(robot: Manipulator) -> set[sympy.Symbol]:
    """The symbols of the robot's geometry and gravity (what Y depends on; inertial data excluded)."""
    out: set[sympy.Symbol] = set()
    for link in robot.links:
        for x in (link.a, link.alpha, link.d, link.theta):
            out |= x.free_symbols
        out |= link.placement.free_symbols
    for x in robot.gravity:
        out |= x.free_symbols
    return out
