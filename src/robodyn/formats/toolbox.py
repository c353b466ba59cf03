"""Robotics Toolbox robots: a ``DHRobot`` of the Robotics Toolbox for Python as a robodyn manipulator.

    from robodyn.formats.toolbox import from_toolbox
    robot = from_toolbox(roboticstoolbox.models.DH.Puma560())           # rd.from_toolbox(dhrobot) too

:func:`from_toolbox` reads a Robotics Toolbox for Python ``DHRobot`` (by its attributes; the Toolbox itself is not
imported): standard or modified DH (``mdh``), each link's ``a``, ``alpha``, ``d``, ``theta``, ``offset`` (added to
q: theta for a revolute joint, d for a prismatic one), ``m``, ``r`` and ``I`` (the centre of mass and the inertia
about it, in the link's frame, as robodyn's), the motor data as joint-side terms (armature G^2 Jm, viscous damping
G^2 B, Coulomb friction ``|G| [Tc+, Tc-]``, a scalar Tc meaning [Tc, -Tc]), and the gravity, turned into the base frame
when ``base`` rotates it; ``flip`` (a joint moving the other way) is refused in one line, and so is a non-DH robot
(an ``ERobot``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robodyn.errors import ModelError
from robodyn.model.expr import to_identifier
from robodyn.model.link import Link
from robodyn.model.manipulator import Manipulator


def from_toolbox(dhrobot: Any, *, name: str | None = None, strict: bool = False) -> Manipulator:
    """The Manipulator of a Robotics Toolbox ``DHRobot`` (see the module docstring for what is read)."""
    links = getattr(dhrobot, "links", None)
    if links is None or not hasattr(dhrobot, "mdh"):
        raise TypeError(f"from_toolbox() expects a Robotics Toolbox DHRobot, got {type(dhrobot).__name__}")
    shown = f"<toolbox robot {getattr(dhrobot, 'name', '')!r}>"
    rows = []
    for j, link in enumerate(links):
        where = f"link {j + 1}"
        if not all(hasattr(link, field) for field in ("a", "alpha", "d", "theta", "offset", "m", "r", "I")):
            raise ModelError("not a DH link (a, alpha, d, theta, offset, m, r, I)", file=shown, link=where)
        if getattr(link, "flip", False):
            raise ModelError("flip=True (the joint moves the other way) is not supported: negate its q",
                             file=shown, link=where, field="flip")
        prismatic = bool(getattr(link, "isprismatic", getattr(link, "sigma", 0) == 1))
        G = abs(float(getattr(link, "G", 1.0) or 0.0))
        Tc = np.zeros(2) if getattr(link, "Tc", None) is None else np.asarray(link.Tc, dtype=float).ravel()
        Tc = np.array([Tc[0], -Tc[0]]) if Tc.size == 1 else Tc  # RTB: a scalar Tc is [Tc, -Tc]
        offset = float(link.offset)
        try:
            rows.append(Link(
                joint="P" if prismatic else "R", a=float(link.a), alpha=float(link.alpha),
                d=offset if prismatic else float(link.d), theta=float(link.theta) if prismatic else offset,
                mass=float(link.m), com=np.asarray(link.r, dtype=float).ravel().tolist(),
                inertia=np.asarray(link.I, dtype=float).reshape(3, 3).tolist(),
                armature=G**2 * float(getattr(link, "Jm", None) or 0.0),
                damping=G**2 * float(getattr(link, "B", None) or 0.0),
                coulomb=(G * Tc).tolist(),
                name=to_identifier(str(link.name)) if getattr(link, "name", "") else ""))
        except ModelError as exc:
            raise ModelError(exc.problem, file=shown, link=where, field=exc.field) from None
    base = getattr(dhrobot, "base", None)
    R = np.asarray(getattr(base, "A", np.eye(4)), dtype=float)[:3, :3] if base is not None else np.eye(3)
    gravity = R.T @ np.asarray(getattr(dhrobot, "gravity", (0.0, 0.0, -9.81)), dtype=float)  # in the base frame
    try:
        return Manipulator(links=tuple(rows), convention="modified" if dhrobot.mdh else "standard",
                           gravity=[float(x) for x in gravity], name=to_identifier(name or dhrobot.name or "toolbox"),
                           description=f"imported from the Robotics Toolbox robot {getattr(dhrobot, 'name', '')!r}",
                           source=shown, strict=strict)
    except ModelError as exc:
        raise exc.located(file=shown) from None
