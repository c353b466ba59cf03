"""The manipulator description: frozen ``Link``s, an optional ``Payload``, and ``Manipulator``.

Conventions (docs/conventions.md):

- ``standard`` DH (Paul, Fu, ROBMAT): A_i = Rot(z, theta_i) Trans(z, d_i) Trans(x, a_i) Rot(x, alpha_i);
  joint i moves about/along z_{i-1}; link i's frame sits at its distal end.
- ``modified`` DH (Craig, Burdick): A_i = Rot(x, alpha_{i-1}) Trans(x, a_{i-1}) Rot(z, theta_i) Trans(z, d_i);
  a link row holds alpha_{i-1} and a_{i-1} as ``alpha`` and ``a``; joint i moves about/along z_i.
- A revolute joint's variable q_i adds to ``theta``; a prismatic joint's adds to ``d``.
- ``com`` is the centre of mass in the link frame; ``inertia`` the tensor about the centre of
  mass with axes parallel to the link frame (off-diagonals are minus the products of inertia).
- ``gravity`` is the acceleration of gravity in the base frame, e.g. (0, 0, -g).
- ``tip_force``/``tip_moment``: what the last link exerts on the environment (Fu's f_{n+1},
  n_{n+1}), in the last link frame, the moment about that frame's origin.
- ``damping`` is the viscous coefficient b_i (tau_i gets b_i qd_i, Fu table 3.2); ``armature``
  is the rotor inertia reflected to the joint, G^2 Jm, added to M_ii; ``coulomb`` = [Tc+, Tc-] is the Coulomb
  friction at the joint (tau_i gets Tc+ when qd_i > 0, Tc- when qd_i < 0, nothing at rest; the Robotics Toolbox's
  |G| Tc of the motor), part of the ``damping`` term of the equations with b_i qd_i; ``stiffness`` k_i >= 0 and
  ``springref`` q_ref,i make a joint spring (tau_i gets k_i (q_i - q_ref,i), the ``spring`` term of the equations;
  revolute and prismatic joints only).
- ``placement`` (optional, 4x4) is a fixed transform P_i applied before the DH transform of its row,
  A_i = P_i A_i^DH, for joints that no DH row can place (URDF imports): see :mod:`robodyn.model.dh`.
- ``parent`` (optional) makes the arm a kinematic tree: ``parent[i]`` is the link that link i is attached to
  (0-based, -1 the base; or a link ``name``), and A_i maps the frame of link parent[i] to the frame of link i,
  in either convention. Links are listed after their parent (Featherstone's regular numbering, which makes
  every recursion one pass over the list). Absent, link i hangs on link i-1: a serial chain. The tip load and
  the payload act on the last link of the list.
- ``floating`` (default False: the root is fixed) puts a free joint (:mod:`robodyn.model.joints`: position and a
  unit quaternion (x, y, z, w), nq 7, nv 6, the body-frame twist, Pinocchio's ``JointModelFreeFlyer``) between the
  world and the base, which then moves and carries ``base`` (a :class:`RigidBody` in the base frame, its centre of
  mass and inertia as a link's); ``gravity`` is then in the world frame, and a floating robot may have no link
  (a drone). The numeric engine (:mod:`robodyn.numeric.floating`), ``rd.simulate`` and the programs of
  :mod:`robodyn.program.floating` (``rd.compile``, the generated code) handle a floating robot; the symbolic
  derivations refuse it in one line (:meth:`Manipulator.check_fixed_base`).
- A link's ``joint`` S is a spherical joint (:attr:`Link.spherical`; nq 4: a unit quaternion (x, y, z, w), nv 3:
  the angular velocity in the child frame), anywhere in the tree, on a fixed or a floating base: q and v then hold
  each link's coordinates in link order (:meth:`Manipulator.idx_q`, :meth:`Manipulator.idx_v`). The numeric
  engine's inverse_dynamics, mass_matrix and forward_dynamics (:mod:`robodyn.numeric.floating`), ``rd.simulate`` and
  the dynamics' programs (``rd.compile``, the generated code: :mod:`robodyn.recursions.pseudo_joints`) handle it; every
  path that takes one coordinate per link refuses it in one line (:meth:`Manipulator.check_one_dof`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

import sympy

from robodyn.errors import ModelError, prefixed_warnings
from robodyn.model import files
from robodyn.model.convert import to_convention
from robodyn.model.couplings import ClosureMap, Coupling, closure_map, coupling_map, independent
from robodyn.model.expr import check_name, check_text, shown, to_expr
from robodyn.model.frames import Frame, check_frames, find_frame, frame_names
from robodyn.model.inertia import as_vector3, check_inertia
from robodyn.model.link import ZERO3, Link, Payload, RigidBody, _as_transform
from robodyn.model.loops import Loop, check_actuated, check_loops, loop_joints
from robodyn.model.names import check_source_names, joint_names, named, q_from
from robodyn.model.parallelograms import eliminate_loops
from robodyn.model.tables import dh_table_latex
from robodyn.symbols import g as gravity_symbol

CONVENTIONS = ("standard", "modified")
#: The most links (moving joints) a robot may have, on every input path: ``Manipulator(...)``, ``from_dh``, model
#: files and URDF; 200 is far beyond any arm and still refuses a file made to exhaust memory. Loading, ``show`` and
#: the numeric routines handle it; the symbolic commands do not (a 200-link chain took 5 GB in 240 s without
#: finishing), so :func:`robodyn.derive` refuses more than :data:`robodyn.formulations.MAX_DERIVE_LINKS` (20) links
#: and ``robodyn check`` more than :data:`robodyn.analysis.check.MAX_CHECK_LINKS` (measurements there).
MAX_LINKS = 200


def _parent_index(entry: object, k: int, names: dict[str, int], n: int) -> int:
    """One ``parent`` entry of link k (0-based): an index (-1 the base) or a link name ("base" the base)."""
    if isinstance(entry, str):
        if entry == "base":
            return -1
        if entry not in names:
            known = ", ".join(sorted(names)) or "none: give the links names, or use indices"
            raise ModelError(f"no link is named {shown(entry)} (names: {known})", link=k + 1, field="parent")
        return names[entry]
    if isinstance(entry, bool) or not isinstance(entry, int) or not -1 <= entry < n:
        raise ModelError(f"{shown(entry)} is not a link index (0 to {n - 1}, or -1 for the base) or a link name",
                         link=k + 1, field="parent")
    return entry


def _parents(value: object, links: tuple[Link, ...]) -> tuple[int, ...] | None:
    """``parent`` resolved to 0-based indices (-1 the base), checked; None for a serial chain."""
    names: dict[str, int] = {}
    for k, link in enumerate(links):
        if link.name == "base":
            raise ModelError("'base' names the base (as a parent): choose another name", link=k + 1, field="name")
        if link.name in names:
            raise ModelError(f"the name {link.name!r} is also link {names[link.name] + 1}'s", link=k + 1,
                             field="name")
        if link.name:
            names[link.name] = k
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ModelError("expected one parent per link", field="parent")
    entries = list(value)
    if len(entries) != len(links):
        raise ModelError(f"{len(entries)} parents for {len(links)} links", field="parent")
    parents = tuple(_parent_index(e, k, names, len(links)) for k, e in enumerate(entries))
    for k, p in enumerate(parents):
        if p >= k:
            raise ModelError(_order_problem(parents, k), link=k + 1, field="parent")
    return None if parents == tuple(range(-1, len(links) - 1)) else parents


def _order_problem(parents: tuple[int, ...], k: int) -> str:
    """Why link k's parent (not listed before it) is refused: a cycle, or the order of the list."""
    if parents[k] == k:
        return "a link cannot be its own parent"
    seen, j = [k], parents[k]
    while j >= 0 and j not in seen:
        seen.append(j)
        j = parents[j]
    if j == k:
        return "the parents form a cycle: links " + " -> ".join(str(i + 1) for i in (*seen, k))
    return (f"the parent is link {parents[k] + 1}, listed after this one: list every link after its parent "
            "(the base's children first)")


def _inertia_notes(value: object, links: tuple[Link, ...]) -> tuple[str, ...]:
    """``inertia_notes`` checked: () for none, else one text per link ("" where there is none), from a sequence of
    texts or a mapping of link (0-based index or name) to text."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        names = {link.name: k for k, link in enumerate(links) if link.name}
        notes = [""] * len(links)
        for key, text in value.items():
            k = names.get(key) if isinstance(key, str) else key
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(links):
                raise ModelError(f"{shown(key)} is not a link index (0 to {len(links) - 1}) or a link name",
                                 field="inertia_notes")
            notes[k] = _text(text, "inertia_notes")
    elif isinstance(value, str) or not isinstance(value, Iterable):
        raise ModelError("expected one text per link, or a mapping of link to text", field="inertia_notes")
    else:
        notes = [_text(text, "inertia_notes") for text in value]
        if notes and len(notes) != len(links):
            raise ModelError(f"{len(notes)} notes for {len(links)} links", field="inertia_notes")
    return tuple(notes) if any(notes) else ()


def _text(value: object, field_name: str) -> str:
    """Free text (a description, a source), valid Unicode (no lone surrogate): kept as data, never printed into
    code or markup unescaped."""
    return check_text(value, field_name)


@dataclass(frozen=True)
class Manipulator:
    """An immutable serial arm: links, DH convention, gravity, optional tip load, payload and tool.

    Data and conversions only (other convention, model-file dict, file, LaTeX table): the algorithms that take a
    robot are free functions (:mod:`robodyn.numeric`, :mod:`robodyn.analysis.toolbox`,
    :func:`robodyn.formats.urdf.to_urdf`, ...).

    Build one in code (``Manipulator(links=[Link(...), ...])`` or :meth:`from_dh`), from a
    model file (:func:`robodyn.load`), or from the built-in library. ``strict=True`` turns
    the triangle-inequality warning into an error. ``inertia_notes`` (one text per link, "" where none, or a
    mapping of link index or name to text) says why a link's published inertia breaks the triangle inequality
    (e.g. only the moment about the joint axis is given): such a link gives no warning (``strict`` still refuses
    it); the notes are data, kept in model files as each link's ``inertia_note``. ``source_names`` (one text per
    link, "" for its own name, or a mapping of link index or name to text; stored as () when none differs) are
    the joints' names in the robot's source, any text (a URDF's "l_arm/shoulder", whose link ``name``
    is ``l_arm_shoulder``): data, kept in model files as each link's ``joint_name``, answered by
    :attr:`joint_names` and used by :meth:`q_from` and :meth:`named` (:mod:`robodyn.model.names`).

    ``name`` and every parameter name follow :data:`robodyn.model.expr.IDENTIFIER` (an ASCII letter, then
    letters, digits and ``_``, at most 64 characters), checked here, so that whatever builds a
    Manipulator, only such names reach generated code and file names; ``description`` and ``source`` are
    free text, kept as data.
    """

    links: tuple[Link, ...]
    convention: str = "standard"
    gravity: Any = (0, 0, -gravity_symbol)
    name: str = "robot"
    description: str = ""
    source: str = ""
    tip_force: Any = ZERO3
    tip_moment: Any = ZERO3
    payload: Payload | None = None
    tool: Any = None
    parent: Any = None
    inertia_notes: Any = ()
    #: Linear couplings q_joint = ratio q_leader + offset (:mod:`robodyn.model.couplings`): the robot's coordinates
    #: q are then its independent joints' (:attr:`independent`, ``nv`` of them), at every public API.
    couplings: tuple[Coupling, ...] = ()
    #: The joints' names in the robot's source, any text (:attr:`joint_names`); () when none differs.
    source_names: Any = ()
    #: Named frames fixed to links (:mod:`robodyn.model.frames`): a URDF's fixed links (``panda_hand``, ``tool0``)
    #: and every URDF link's own frame, a model file's ``frames:``; :meth:`frame` answers them by name.
    frames: Any = ()
    #: Loop closures (:mod:`robodyn.model.loops`): a closed chain is the tree plus these; each passive joint of a
    #: loop then follows the ``actuated`` ones through a coupling derived from the loop (parallelograms:
    #: :mod:`robodyn.model.parallelograms`), or through the loop's constraints solved numerically (an implicit loop,
    #: :attr:`implicit`), and the robot's q are its actuated joints'.
    loops: tuple[Loop, ...] = ()
    #: The actuated joints (0-based link indices, or names) of a robot with loops; () without loops.
    actuated: tuple[int, ...] = ()
    #: A free joint at the root (see the module docstring): the base moves and carries :attr:`base`.
    floating: bool = False
    #: The names of the implicit loops (derived, not given): the loops that no elimination solves in closed form, whose
    #: constraints phi(q_tree) = 0 the numeric engine solves (:mod:`robodyn.numeric.closed_chains`); their passive
    #: joints (:attr:`passive`) are none of the robot's coordinates.
    implicit: tuple[str, ...] = field(default=(), init=False, compare=False, repr=False)
    #: The floating base's body (in the base frame); None for a fixed base (a floating one without it: massless).
    base: RigidBody | None = None
    strict: InitVar[bool] = False

    def __post_init__(self, strict: bool) -> None:
        links = tuple(self.links)
        if not isinstance(self.floating, bool):
            raise ModelError(f"expected True or False, got {shown(self.floating)}", field="floating")
        if self.base is not None and not isinstance(self.base, RigidBody):
            raise ModelError("expected a RigidBody", field="base")
        if self.base is not None and not self.floating:
            raise ModelError("a base body moves only with a floating base (floating=True)", field="base")
        if not links and not self.floating:
            raise ModelError("a manipulator needs at least one link", field="links")
        if len(links) > MAX_LINKS:
            raise ModelError(f"{len(links)} links: at most {MAX_LINKS} are accepted", field="links")
        for k, link in enumerate(links, start=1):
            if not isinstance(link, Link):
                raise ModelError(f"expected a Link, got {type(link).__name__}", link=k)
        object.__setattr__(self, "links", links)
        object.__setattr__(self, "parent", _parents(self.parent, links))
        object.__setattr__(self, "inertia_notes", _inertia_notes(self.inertia_notes, links))
        object.__setattr__(self, "source_names", check_source_names(self.source_names, links))
        object.__setattr__(self, "frames", check_frames(self.frames, links))
        if self.convention not in CONVENTIONS:
            raise ModelError(
                f"unknown convention {self.convention!r} (expected one of {', '.join(CONVENTIONS)})",
                field="convention",
            )
        link_names = [link.name for link in links]
        multi = next((k for k, link in enumerate(links) if link.multi_dof), None)
        if multi is not None and (self.couplings or self.loops):
            raise ModelError(f"a {links[multi].kind} joint in a robot with couplings or loops is not handled so far",
                             link=multi + 1, field="joint")
        object.__setattr__(self, "loops", check_loops(self.loops, link_names, self.parents))
        object.__setattr__(self, "actuated", check_actuated(self.actuated, link_names))
        couplings, implicit = eliminate_loops(links, self.convention, self.parents, self.loops, self.actuated,
                                              self.couplings)
        object.__setattr__(self, "couplings", couplings)
        object.__setattr__(self, "implicit", implicit)
        object.__setattr__(self, "name", check_name(self.name, "name"))
        object.__setattr__(self, "description", _text(self.description, "description"))
        object.__setattr__(self, "source", _text(self.source, "source"))
        object.__setattr__(self, "gravity", as_vector3(self.gravity, "gravity"))
        object.__setattr__(self, "tip_force", as_vector3(self.tip_force, "tip_force"))
        object.__setattr__(self, "tip_moment", as_vector3(self.tip_moment, "tip_moment"))
        object.__setattr__(self, "tool", _as_transform(self.tool, "tool"))
        if self.payload is not None and not isinstance(self.payload, Payload):
            raise ModelError("expected a Payload", field="payload")
        for k, link in enumerate(links, start=1):
            try:
                if self.inertia_notes and self.inertia_notes[k - 1] and not strict:
                    # published data that break the triangle inequality, and say so: no warning (strict: the error)
                    check_inertia(link.inertia, mass=link.mass, field="inertia", where=f"link {k}", triangle=False)
                else:
                    link.check(f"link {k}", strict)
            except ModelError as exc:
                raise exc.located(link=k) from None
        if self.payload is not None:
            try:
                self.payload.check("payload", strict)
            except ModelError as exc:
                raise exc.located(link="payload") from None
        if self.base is not None:
            try:
                self.base.check("base", strict)
            except ModelError as exc:
                raise exc.located(link="base") from None

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_dh(
        cls,
        rows: Iterable[Mapping[str, Any] | Link],
        convention: str = "standard",
        **kwargs: Any,
    ) -> Manipulator:
        """Build from DH rows: dicts with the model-file keys (``joint``, ``a``, ``alpha``,
        ``d``, ``theta``, ``mass``, ``com``, ``inertia``, ``damping``, ``armature``, ...) or Links."""
        links = []
        for k, row in enumerate(rows, start=1):
            if isinstance(row, Link):
                links.append(row)
                continue
            try:
                with prefixed_warnings(f"link {k}"):
                    links.append(Link(**dict(row)))
            except ModelError as exc:
                raise exc.located(link=k) from None
            except TypeError as exc:
                raise ModelError(str(exc).replace("__init__() ", ""), link=k) from None
        return cls(links=tuple(links), convention=convention, **kwargs)

    # -- questions ----------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.links)

    @property
    def nv(self) -> int:
        """Number of independent coordinates: the length of q, qd, qdd and tau at every public API (``n`` less
        the coupled joints; ``n`` for a robot without :attr:`couplings`); a floating robot's 6 base velocities
        come first (then q has :attr:`nq` entries), and a spherical or planar joint has 3."""
        return (self.n - len(self.couplings) - len(self.passive) + (6 if self.floating else 0)
                + 2 * len(self.multi_dof))

    @property
    def nq(self) -> int:
        """The length of q: :attr:`nv`, plus one for a floating robot (its base's 7 coordinates: position, then
        the unit quaternion (x, y, z, w); :mod:`robodyn.model.joints`) and one per spherical joint (4 coordinates,
        3 velocities), as per planar joint (x, y, cos theta, sin theta)."""
        return self.nv + (1 if self.floating else 0) + len(self.multi_dof)

    @property
    def spherical(self) -> tuple[int, ...]:
        """The links with a spherical joint (0-based, in link order; :attr:`Link.spherical`)."""
        return tuple(k for k, link in enumerate(self.links) if link.spherical)

    @property
    def planar(self) -> tuple[int, ...]:
        """The links with a planar joint (0-based, in link order; :attr:`Link.planar`)."""
        return tuple(k for k, link in enumerate(self.links) if link.planar)

    @property
    def multi_dof(self) -> tuple[int, ...]:
        """The links with a joint of several velocities, spherical or planar (0-based, in link order)."""
        return tuple(k for k, link in enumerate(self.links) if link.multi_dof)

    def idx_q(self, k: int) -> int:
        """Where link k's coordinates start in q (Pinocchio's ``idx_q``): after the floating base's 7 and the
        independent links listed before it (1 each, 4 for a spherical or planar joint)."""
        return self._start(k, 7, 4)

    def idx_v(self, k: int) -> int:
        """Where link k's velocities start in v (Pinocchio's ``idx_v``): after the floating base's 6 and the
        independent links listed before it (1 each, 3 for a spherical or planar joint)."""
        return self._start(k, 6, 3)

    def _start(self, k: int, base: int, multi: int) -> int:
        independent = self.independent
        if k not in independent:
            raise ValueError(f"{self.name}: link {self.label(k) if 0 <= k < self.n else k} has no coordinate of its "
                             "own (coupled, passive, or no such link)")
        return (base if self.floating else 0) + sum(multi if self.links[j].multi_dof else 1
                                                    for j in independent if j < k)

    def check_one_dof(self, what: str = "this path") -> None:
        """Nothing when every joint has one coordinate; for a robot with a spherical or planar joint the one-line
        :class:`ModelError` of every path that takes one coordinate per link (``what`` names the path)."""
        multi = self.multi_dof
        if multi:
            raise ModelError(f"{self.name}: link {self.label(multi[0])!r} has a {self.links[multi[0]].kind} joint: "
                             f"not handled by {what} so far (robodyn.numeric's inverse_dynamics, mass_matrix and "
                             "forward_dynamics, rd.simulate and rd.compile handle it)")

    def check_fixed_base(self) -> None:
        """Nothing for a fixed base of one-coordinate joints; for a floating one (or one with a spherical joint,
        :meth:`check_one_dof`) the one-line :class:`ModelError` of every path that does not handle it (symbolic
        derivation, the base-parameter and identification paths, the recursions' programs, ...)."""
        self.check_one_dof("the symbolic paths and identification")
        if self.floating:
            raise ModelError(f"{self.name}: floating base: not handled here so far (robodyn.numeric, rd.simulate and "
                             "rd.compile's programs handle it)")
        if self.implicit:
            raise ModelError(f"{self.name}: implicit loop {self.implicit[0]!r}: implicit loops are numeric only in "
                             "this version (robodyn.numeric.closed_chains, rd.simulate)")

    @property
    def passive(self) -> tuple[int, ...]:
        """The passive joints of the implicit loops (0-based, in link order): the tree's joints that the loops'
        constraints fix (:mod:`robodyn.numeric.closed_chains`), neither actuated nor coupled; () without implicit
        loops."""
        if not self.implicit:
            return ()
        coupled = {int(c.joint) for c in self.couplings}
        held: set[int] = set()
        for loop in self.loops:
            if loop.name in self.implicit:
                up_a, _, up_b = loop_joints(loop, self.parents)
                held |= {j for j in up_a + up_b if j not in self.actuated and j not in coupled}
        return tuple(sorted(held))

    @property
    def independent(self) -> tuple[int, ...]:
        """The links whose joints follow none (0-based, in link order; neither coupled nor :attr:`passive`): q[j] is
        joint independent[j]'s."""
        passive = set(self.passive)
        return tuple(k for k in independent(self.n, self.couplings) if k not in passive)

    def closure_map(self) -> ClosureMap:
        """q_tree = g(q), W(q), Wdot qd: the linear couplings and the four-bars' closed forms
        (:class:`robodyn.model.couplings.ClosureMap`)."""
        return closure_map(self.n, self.couplings)

    def coupling_map(self) -> tuple[sympy.Matrix, sympy.Matrix]:
        """(G, c), n x nv and n x 1, with q_tree = G q + c (:mod:`robodyn.model.couplings`)."""
        return coupling_map(self.n, self.couplings)

    @property
    def parents(self) -> tuple[int, ...]:
        """parents[i]: the link that link i hangs on (0-based, -1 the base); i - 1 for a serial chain."""
        return self.parent if self.parent is not None else tuple(range(-1, self.n - 1))

    @property
    def is_tree(self) -> bool:
        """True if some link does not hang on the link before it (a branched tree)."""
        return self.parent is not None

    def children(self, k: int) -> tuple[int, ...]:
        """The links that hang on link k (0-based; -1: on the base)."""
        return tuple(i for i, p in enumerate(self.parents) if p == k)

    def ancestors(self, k: int) -> tuple[int, ...]:
        """Link k and the links between it and the base, from k down (Featherstone's kappa(k) reversed)."""
        out = []
        while k >= 0:
            out.append(k)
            k = self.parents[k]
        return tuple(out)

    def depth_first(self) -> tuple[int, ...]:
        """The links in depth-first order (each subtree consecutive, children in list order): the robot's own
        order for a chain and for any tree listed so (Pinocchio requires it,
        :func:`robodyn.formats.pinocchio.to_pinocchio`)."""
        order: list[int] = []
        stack = list(reversed(self.children(-1)))
        while stack:
            k = stack.pop()
            order.append(k)
            stack.extend(reversed(self.children(k)))
        return tuple(order)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """The joints' names, one per link in the robot's order: its source name (a URDF's ``<joint name>`` as
        written), else its ``name``, else ``joint<k>`` (k from 1); distinct."""
        return joint_names(self)

    def q_from(self, state: Any, default: float | None = None, *, field: str = "position",
               ignore_unknown: bool = False) -> Any:
        """q (a float array, the robot's order) from ``{joint name: value}`` or a ``sensor_msgs/JointState``-like
        message (``.name``, ``.position``; ``field="velocity"`` for qd); a joint not given takes ``default``
        (none: a ModelError), an unknown name is a ModelError unless ``ignore_unknown``
        (:func:`robodyn.model.names.q_from`)."""
        return q_from(self, state, default, field=field, ignore_unknown=ignore_unknown)

    def named(self, q: Any) -> dict[str, float]:
        """``q`` (the robot's order) as ``{joint name: value}``, the inverse of :meth:`q_from`."""
        return named(self, q)

    def frame(self, name: str) -> Frame:
        """The frame named ``name`` (:mod:`robodyn.model.frames`): one of :attr:`frames`, else a link's own frame
        (by the link's ``name``; placement the identity), else the base frame (``"base"``); a ValueError listing the
        names otherwise."""
        return find_frame(self, name)

    @property
    def frame_names(self) -> tuple[str, ...]:
        """Every name :meth:`frame` answers: the named frames, the links' names, ``base``."""
        return frame_names(self)

    def label(self, k: int) -> str:
        """How messages name link k (0-based): its ``name``, else its number from 1."""
        return self.links[k].name or str(k + 1)

    @property
    def joint_types(self) -> str:
        """E.g. ``"RRP"``."""
        return "".join(link.joint for link in self.links)

    def parameters(self) -> tuple[sympy.Symbol, ...]:
        """Every free symbol of the description, sorted by name (``g`` included if used)."""
        symbols: set[sympy.Symbol] = set()
        for expr in self._expressions():
            symbols |= expr.free_symbols
        return tuple(sorted(symbols, key=lambda s: s.name))

    @property
    def has_placements(self) -> bool:
        """True if any link has a fixed placement before its DH transform (see :class:`Link`)."""
        return any(link.has_placement for link in self.links)

    @property
    def is_numeric(self) -> bool:
        return not self.parameters()

    @property
    def has_floats(self) -> bool:
        """True if any number in the description is a floating-point number (not exact)."""
        return any(expr.has(sympy.Float) for expr in self._expressions())

    def bodies(self, k: int) -> tuple[RigidBody, ...]:
        """The rigid bodies moving with link k (0-based): the link, and the payload on the last."""
        if k == self.n - 1 and self.payload is not None:
            return (self.links[k], self.payload)
        return (self.links[k],)

    def _expressions(self) -> Iterable[sympy.Expr]:
        for link in self.links:
            yield from (link.a, link.alpha, link.d, link.theta, link.mass, link.damping, link.armature,
                        link.stiffness, link.springref)
            yield from link.coulomb
            yield from link.com
            yield from link.inertia
            if link.has_placement:
                yield from link.placement
        yield from self.gravity
        yield from self.tip_force
        yield from self.tip_moment
        for coupling in self.couplings:
            yield from (ratio for _, ratio in coupling.leaders)
            yield coupling.offset
        for loop in self.loops:
            yield from loop.expressions()
        yield from self.tool
        if self.base is not None:
            yield self.base.mass
            yield from self.base.com
            yield from self.base.inertia
        for frame in self.frames:
            yield from frame.placement
        if self.payload is not None:
            yield self.payload.mass
            yield from self.payload.com
            yield from self.payload.inertia

    # -- transformation -----------------------------------------------------------------
    def subs(self, values: Mapping[Any, Any]) -> Manipulator:
        """A copy with parameters replaced, e.g. ``robot.subs({"L1": 1.0, "g": 9.81})``."""
        mapping = {sympy.Symbol(k) if isinstance(k, str) else k: to_expr(v, f"values[{shown(k)}]")  # never sympify text
                   for k, v in values.items()}

        def sub(value: Any) -> Any:
            if isinstance(value, sympy.MatrixBase):
                return value.subs(mapping)
            if isinstance(value, tuple):
                return tuple(sub(v) for v in value)
            if isinstance(value, sympy.Basic):
                return value.subs(mapping)
            return value

        def body(b: RigidBody) -> dict[str, Any]:
            return {f.name: sub(getattr(b, f.name)) for f in dataclasses.fields(b)}

        links = []
        for k, link in enumerate(self.links, start=1):
            try:
                links.append(Link(**body(link)))
            except ModelError as exc:
                raise exc.located(link=k) from None
        try:
            payload = Payload(**body(self.payload)) if self.payload is not None else None
        except ModelError as exc:
            raise exc.located(link="payload") from None
        base = RigidBody(**body(self.base)) if self.base is not None else None
        return dataclasses.replace(
            self,
            links=tuple(links),
            gravity=sub(self.gravity),
            tip_force=sub(self.tip_force),
            tip_moment=sub(self.tip_moment),
            tool=sub(self.tool),
            payload=payload,
            base=base,
            couplings=tuple(c.subs(mapping) for c in self.couplings if not c.loop),
            loops=tuple(loop.subs(mapping) for loop in self.loops),
            frames=tuple(dataclasses.replace(f, placement=f.placement.subs(mapping)) for f in self.frames),
        )

    def replace(self, **changes: Any) -> Manipulator:
        return dataclasses.replace(self, **changes)

    def to_convention(self, convention: str) -> Manipulator:
        """The same physical arm described in the other DH convention (see :mod:`robodyn.model.convert`)."""
        return to_convention(self, convention)

    # -- files --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The model-file structure (see :mod:`robodyn.formats.model_file`)."""
        return files.manipulator_to_dict(self)

    def save(self, path: str | Path) -> Path:
        """Write a YAML (or, for a ``.json`` path, JSON) model file atomically."""
        return files.save(self, path)

    def __repr__(self) -> str:
        return (
            f"Manipulator(name={self.name!r}, n={self.n}, joints={self.joint_types!r}, "
            f"convention={self.convention!r}, parameters={len(self.parameters())}"
            f"{', floating=True' if self.floating else ''})"
        )

    def _repr_latex_(self) -> str:
        return "$" + dh_table_latex(self) + "$"
