"""Tables of a manipulator's description (DH and inertial data) as rows, text and LaTeX."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy

from robodyn.model.expr import expression_text

if TYPE_CHECKING:  # a robot is read through its attributes: Manipulator's LaTeX repr uses this module
    from robodyn.model.manipulator import Manipulator

CONVENTION_TEXT = {
    "standard": "standard DH (Paul, Fu, ROBMAT): A_i = Rot(z,theta_i) Trans(z,d_i) Trans(x,a_i) Rot(x,alpha_i)",
    "modified": "modified DH (Craig, Burdick): A_i = Rot(x,alpha_{i-1}) Trans(x,a_{i-1}) Rot(z,theta_i) Trans(z,d_i)",
}
INERTIA_TEXT = (
    "com: centre of mass in the link frame; inertia: tensor about the centre of mass, axes parallel to "
    "the link frame (off-diagonals = minus the products of inertia); gravity: acceleration vector in the base frame"
)


def joint_value(robot: Manipulator, i: int, name: str) -> sympy.Expr:
    """theta_i or d_i of link i (0-based), with q_i added where the joint moves it (neither for a spherical or
    planar joint, whose coordinates move the frame after both)."""
    link = robot.links[i]
    value = getattr(link, name)
    is_variable = not link.multi_dof and (name == "theta") == link.revolute
    return value + sympy.Symbol(f"q{i + 1}") if is_variable else value


def text(value: object) -> str:
    """A value of the tables as text: numbers short (a float as Python writes it, 0.333, not sympy's
    0.333000000000000; an exact rational as 1/3), expressions as sympy writes them."""
    return expression_text(sympy.sympify(value))


def _joint_variable(robot: Manipulator, i: int, name: str) -> str:
    return text(joint_value(robot, i, name))


def dh_rows(robot: Manipulator) -> list[list[str]]:
    """One row per link: joint, type, a, alpha, d, theta (with q_i where it moves)."""
    return [
        [
            str(i + 1),
            link.joint,
            text(link.a),
            text(link.alpha),
            _joint_variable(robot, i, "d"),
            _joint_variable(robot, i, "theta"),
        ]
        for i, link in enumerate(robot.links)
    ]


def topology(robot: Manipulator) -> list[tuple[str, list[str]]]:
    """The columns beside the DH table that only some robots need, as (header, one text per link): the links'
    names, their parents (a tree: the parent's number, 0 the base) and a mark where a fixed placement comes
    before the row's DH transform."""
    columns = []
    if any(link.name for link in robot.links):
        columns.append(("name", [link.name for link in robot.links]))
    if robot.is_tree:
        columns.append(("parent", [str(p + 1) for p in robot.parents]))
    if robot.has_placements:
        columns.append(("placement", ["yes" if link.has_placement else "" for link in robot.links]))
    return columns


def dh_headers(robot: Manipulator) -> list[str]:
    if robot.convention == "modified":
        return ["i", "joint", "a_{i-1}", "alpha_{i-1}", "d_i", "theta_i"]
    return ["i", "joint", "a_i", "alpha_i", "d_i", "theta_i"]


def _matrix_text(m: sympy.MatrixBase) -> str:
    if m.is_diagonal():
        return "diag(" + ", ".join(text(m[k, k]) for k in range(3)) + ")"
    return "[" + "; ".join(", ".join(text(m[r, c]) for c in range(3)) for r in range(3)) + "]"


def inertia_rows(robot: Manipulator) -> list[list[str]]:
    """One row per body: link, mass, com, inertia, damping, armature."""
    rows = [
        [
            str(i + 1),
            text(link.mass),
            "(" + ", ".join(text(c) for c in link.com) + ")",
            _matrix_text(link.inertia),
            text(link.damping),
            text(link.armature),
        ]
        for i, link in enumerate(robot.links)
    ]
    if robot.payload is not None:
        p = robot.payload
        rows.append(
            ["payload", text(p.mass), "(" + ", ".join(text(c) for c in p.com) + ")", _matrix_text(p.inertia), "", ""]
        )
    return rows


INERTIA_HEADERS = ["link", "mass", "com", "inertia about com", "damping", "armature"]


def dh_table_latex(robot: Manipulator) -> str:
    """The DH table as a LaTeX array."""
    head = " & ".join(h.replace("alpha", "\\alpha").replace("theta", "\\theta") for h in dh_headers(robot))
    body = " \\\\ ".join(
        " & ".join(
            [str(i + 1), link.joint]
            + [sympy.latex(x) for x in (link.a, link.alpha, joint_value(robot, i, "d"), joint_value(robot, i, "theta"))]
        )
        for i, link in enumerate(robot.links)
    )
    return "\\begin{array}{cccccc} " + head + " \\\\ \\hline " + body + " \\end{array}"


def inertia_notes(robot: Manipulator) -> list[str]:
    """One line per link whose inertia has a note (published data that break the triangle inequality, kept as
    given): ``link K: note`` (the link's name where it has one)."""
    return [f"link {robot.links[k].name or k + 1}: {note}" for k, note in enumerate(robot.inertia_notes) if note]


def loop_kind(robot: Manipulator, name: str) -> str:
    """How loop ``name`` is eliminated: ``parallelogram`` (linear couplings), ``four-bar`` (closed form) or
    ``implicit`` (its constraints solved numerically)."""
    if name in robot.implicit:
        return "implicit"
    closed = any(c.loop == name and c.closure is not None for c in robot.couplings)
    return "four-bar" if closed else "parallelogram"


def _role(robot: Manipulator, k: int) -> str:
    """A joint's part in the robot's coordinates: independent (actuated where the robot has loops), coupled to
    others (a mimic joint, a gear, a loop in closed form) or passive in an implicit loop."""
    coupling = next((c for c in robot.couplings if int(c.joint) == k), None)
    if coupling is not None:
        label = f", loop {coupling.loop}" if coupling.loop else ""
        if coupling.closure is not None:
            (leader, _), = coupling.leaders
            return f"passive: closed form of {robot.label(int(leader))}{label}"
        leaders = " and ".join(robot.label(int(j)) for j, _ in coupling.leaders) or "nothing (held)"
        return f"{'passive' if coupling.loop else 'coupled'}: follows {leaders}{label}"
    if k in robot.passive:
        loops = [loop.name for loop in robot.loops if loop.name in robot.implicit]
        return f"passive: implicit loop{'s' if len(loops) > 1 else ''} {', '.join(loops)}"
    return "actuated" if robot.loops else "independent"


def structure(robot: Manipulator) -> list[str]:
    """The robot drawn as its tree, base first, one line per joint (its number, link name, joint type and part in
    the coordinates: :func:`_role`), each loop closure marked at both of its links, and a line per loop saying
    which kind it is (:func:`loop_kind`)."""
    children: dict[int, list[int]] = {}
    for k, p in enumerate(robot.parents):
        children.setdefault(p, []).append(k)
    ends: dict[int, list[str]] = {}
    for loop in robot.loops:
        for end in loop.links:
            ends.setdefault(int(end), []).append(loop.name)
    base = "base (floating: a free joint, 6 coordinates)" if robot.floating else "base"
    lines = [base + "".join(f"  <- loop {name}" for name in ends.get(-1, []))]

    def walk(parent: int, prefix: str) -> None:
        kids = children.get(parent, [])
        for i, k in enumerate(kids):
            last = i == len(kids) - 1
            closing = "".join(f"  <- loop {name}" for name in ends.get(k, []))
            name = f" {robot.links[k].name}" if robot.links[k].name else ""
            lines.append(f"{prefix}{'└── ' if last else '├── '}{k + 1}{name} ({robot.links[k].joint}, "
                         f"{_role(robot, k)}){closing}")
            walk(k, prefix + ("    " if last else "│   "))

    walk(-1, "")
    for loop in robot.loops:
        names = " and ".join(robot.label(int(k)) if int(k) >= 0 else "the base" for k in loop.links)
        lines.append(f"loop {loop.name}: a {loop.joint} joint closes {names} ({loop_kind(robot, loop.name)})")
    return lines
