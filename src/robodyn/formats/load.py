"""``robodyn.load``: a built-in robot by name or a model file by path."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from robodyn import library
from robodyn.errors import ModelError, ModelWarning
from robodyn.formats.mjcf import read_mjcf, root_element
from robodyn.formats.model_file import build_located, parse_text, read_model_file
from robodyn.formats.urdf import read_urdf
from robodyn.formats.urdf_xml import xacro_message
from robodyn.model.files import path_exists
from robodyn.model.manipulator import Manipulator

MODEL_SUFFIXES = (".yaml", ".yml", ".json")


def load(model: str | Path, *, strict: bool = False, lock: Mapping[str, float] | None = None,
         mimic: str = "couple", actuated: Sequence[str] | None = None, floating: bool = False) -> Manipulator:
    """Load a manipulator: a built-in name (``"puma560"``), a ``.yaml``/``.yml``/``.json`` model file, or a
    ``.urdf`` file (a serial chain or a tree: see :mod:`robodyn.formats.urdf`), or MuJoCo's MJCF (an ``.xml`` or
    ``.mjcf`` file whose root element is ``<mujoco>``, read through MuJoCo's compiler, the optional ``mujoco``
    package: see :mod:`robodyn.formats.mjcf`). The suffix chooses the reader; a ``.xacro`` file (expand it first:
    ``xacro arm.urdf.xacro > arm.urdf``) is refused in one line.

    ``strict=True`` turns physically doubtful inertia (triangle inequality) into an error. ``lock`` (URDF files
    only) fixes the named joints at the given positions (rad or m), e.g. ``lock={"finger_joint": 0.0}``;
    ``mimic`` (URDF files only): ``"couple"`` (the default) reads a mimic joint as a coupled coordinate (the
    robot's q are then its ``robot.nv`` independent joints', as Pinocchio's ``mimic=True``), ``"independent"``
    as an independent joint, ``"refuse"`` refuses it; ``actuated`` (URDF files with loop closures only): the
    actuated joints' URDF names (see :mod:`robodyn.formats.urdf`); ``floating=True`` puts a free joint at a URDF's
    root, the root link's inertia moving with it (:func:`robodyn.formats.urdf.read_urdf`), and requires one in an
    MJCF file (whose free joint makes a floating base anyway: :func:`robodyn.formats.mjcf.read_mjcf`); a model
    file says ``floating: true`` itself.

    A string that is a built-in name always loads the built-in robot, even where a file of that name
    exists in the working directory (a :class:`~robodyn.errors.ModelWarning` then says so); load such a
    file by a path that is not a bare name, ``./puma560`` or ``Path("puma560")``.
    """
    robot = _read(model, strict, lock, mimic, actuated, floating)
    return _assembled(robot, str(model)) if robot.implicit else robot


def _assembled(robot: Manipulator, shown: str) -> Manipulator:
    """A robot with implicit loops (:mod:`robodyn.numeric.closed_chains`; numeric, else unchecked here) must close
    at q = 0, its reference assembly, and move with its actuated joints there: Newton's method from q = 0 converges
    at q = 0 and at a step of 1e-3 rad (or m) of every actuated joint, with no constraint fixing an actuated joint;
    else one line names the loop (a locked or contradictory loop is refused when read, not at its first use)."""
    from robodyn.numeric import closed_chains  # (only here: loading imports no module of the numeric engine)

    if robot.parameters():
        return robot
    try:
        for q in (np.zeros(robot.nv), np.full(robot.nv, 1e-3)):
            closed_chains.projection(robot, q)
    except ModelError as exc:
        raise ModelError(f"{exc.problem} (checked at q = 0 and a step from it: the loops must close and move "
                         "there)", file=shown, field="loops") from None
    return robot


def _read(model: str | Path, strict: bool, lock: Mapping[str, float] | None, mimic: str,
          actuated: Sequence[str] | None, floating: bool) -> Manipulator:
    text = str(model)
    path = Path(text)
    if lock and path.suffix.lower() != ".urdf":
        raise ModelError(f"a lock (lock= or --lock) applies to URDF files only, and {text!r} is not a .urdf file")
    if mimic != "couple" and path.suffix.lower() != ".urdf":
        raise ModelError(f"mimic (mimic= or --mimic) applies to URDF files only, and {text!r} is not a .urdf file")
    if actuated is not None and path.suffix.lower() != ".urdf":
        raise ModelError(f"actuated (actuated= or --actuated) applies to URDF files only (a model file lists its "
                         f"own), and {text!r} is not a .urdf file")
    if floating and path.suffix.lower() not in (".urdf", ".xml", ".mjcf"):
        raise ModelError(f"floating=True applies to URDF and MJCF files (a model file says 'floating: true' "
                         f"itself), and {text!r} is neither")
    exists = path_exists(path, text)  # a path that cannot be looked up: one ModelError
    if isinstance(model, str) and text in library.names():
        if exists:
            warnings.warn(f"{text!r} is a built-in robot and also a file here: loading the built-in; to load the "
                          f"file, give its path as ./{text}", ModelWarning, stacklevel=2)
        shown, source = library.text(text)
        return build_located(parse_text(source, json_format=False, file=shown), shown, strict=strict)
    suffix = path.suffix.lower()
    if suffix in (".urdf", ".xacro", ".xml", ".mjcf"):
        if not exists:
            raise ModelError(f"no such file{_nearby(path)}", file=text)
        if suffix == ".xacro":
            raise ModelError(xacro_message(path), file=text)
        if suffix != ".urdf":  # MuJoCo's MJCF (root <mujoco>); any other XML is refused in one line
            root = root_element(path)
            if root != "mujoco":
                raise ModelError(f"not MJCF (the root element is {f'<{root}>' if root else 'not found'}, not "
                                 "<mujoco>): robodyn reads MJCF from .xml and .mjcf files, URDF from .urdf files",
                                 file=text)
            return read_mjcf(path, strict=strict, floating=True if floating else None)
        return read_urdf(path, strict=strict, lock=lock, mimic=mimic, actuated=actuated, floating=floating)
    if isinstance(model, Path) or path.suffix.lower() in MODEL_SUFFIXES or exists:
        if not exists:
            raise ModelError(f"no such file{_nearby(path)}", file=text)
        return read_model_file(path, strict=strict)
    raise ModelError(
        f"{text!r} is neither a built-in robot (robodyn list names them) nor a model file path"
        f"{_did_you_mean(text, library.names()) or _nearby(path)}"
    )


#: The most directory entries :func:`_nearby` reads (a huge directory is not listed for a suggestion).
MAX_LISTED = 2000


def _did_you_mean(name: str, candidates: list[str], where: str = "") -> str:
    """``"; did you mean 'puma560'?"`` for the closest of ``candidates`` to ``name`` (difflib's ratio at least
    0.6), followed by ``where``; "" when none is close."""
    import difflib

    close = difflib.get_close_matches(name, candidates, n=1)
    return f"; did you mean {close[0]!r}{where}?" if close else ""


def _nearby(path: Path) -> str:
    """:func:`_did_you_mean` over the files beside ``path`` (a file that does not exist): a misspelt name in a
    directory that exists; "" when the directory cannot be listed or has more than :data:`MAX_LISTED` entries."""
    import itertools
    import os

    directory = path.parent
    try:
        with os.scandir(directory) as entries:
            listed = list(itertools.islice(entries, MAX_LISTED + 1))
            files = [entry.name for entry in listed if entry.is_file()]
    except (OSError, ValueError):
        return ""
    if len(listed) > MAX_LISTED:
        return ""
    return _did_you_mean(path.name, files, "" if str(directory) == "." else ", in the same directory")

