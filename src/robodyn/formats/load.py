"""``robodyn.load``: a built-in robot by name or a model file by path, each option handed to the file's reader."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robodyn import library
from robodyn.errors import ModelError, ModelWarning, did_you_mean
from robodyn.formats.mjcf import read_mjcf, root_element
from robodyn.formats.model_file import build_located, parse_text, read_model_file
from robodyn.formats.urdf import read_urdf
from robodyn.model.files import path_exists
from robodyn.model.manipulator import Manipulator

MODEL_SUFFIXES = (".yaml", ".yml", ".json")
URDF_SUFFIXES = (".urdf", ".xacro")
MJCF_SUFFIXES = (".xml", ".mjcf")


def load(model: str | Path, *, strict: bool = False, **options: Any) -> Manipulator:
    """Load a manipulator: a built-in name (``"puma560"``), a ``.yaml``/``.yml``/``.json`` model file, a ``.urdf``
    file (a serial chain or a tree: see :mod:`robodyn.formats.urdf`) or a xacro file (``.xacro``, expanded in
    process: the ``xacro`` extra), or MuJoCo's MJCF (an ``.xml`` or ``.mjcf`` file whose root element is
    ``<mujoco>``, read through MuJoCo's compiler, the optional ``mujoco`` package: see
    :mod:`robodyn.formats.mjcf`). The suffix chooses the reader.

    ``strict=True`` turns physically doubtful inertia (triangle inequality) into an error. Every other keyword is
    an option of the reader the file's kind chooses, handed to it unchanged (an option given as None, or as an
    empty mapping, ``lock={}``, is not given: the reader's default): :func:`~robodyn.formats.urdf.read_urdf` for
    URDF and xacro files (``lock``, ``mimic``, ``actuated``, ``floating``, ``root``, ``friction``,
    ``xacro_args``, ``package_paths``, ``gravity``, ``snap``), :func:`~robodyn.formats.mjcf.read_mjcf` for MJCF
    files (``floating``, ``frictionloss``, ...); a model file and a built-in robot take ``strict`` only (a model
    file says ``floating: true`` itself). An option the reader does not take is refused in one line that names
    it, says which files it applies to and lists the reader's options (read from its signature), e.g.
    ``rd.load("puma560", lock={"j1": 0})``: a lock applies to URDF files only.

    ``floating`` means the same for URDF and MJCF files: None (the default) lets the file decide (a URDF's root
    is fixed, an MJCF free joint makes a floating base), True asks for a floating base (a free joint at a URDF's
    root; an MJCF file must have its free joint) and False for a fixed one (an MJCF free joint welded where the
    file places it).

    A string that is a built-in name always loads the built-in robot, even where a file of that name
    exists in the working directory (a :class:`~robodyn.errors.ModelWarning` then says so); load such a
    file by a path that is not a bare name, ``./puma560`` or ``Path("puma560")``.
    """
    options = {name: value for name, value in options.items() if not _absent(value)}
    kind = _kind(model)
    _check_options(kind, options, str(model))
    robot = _read(model, kind, strict, options)
    return _assembled(robot, str(model)) if robot.implicit else robot


def _absent(value: Any) -> bool:
    """An option given as None or as an empty mapping (``lock={}``): not given."""
    return value is None or (isinstance(value, Mapping) and not value)


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


def _read(model: str | Path, kind: _Kind, strict: bool, options: dict[str, Any]) -> Manipulator:
    text = str(model)
    path = Path(text)
    exists = path_exists(path, text)  # a path that cannot be looked up: one ModelError
    if kind is BUILTIN:
        if exists:
            warnings.warn(f"{text!r} is a built-in robot and also a file here: loading the built-in; to load the "
                          f"file, give its path as ./{text}", ModelWarning, stacklevel=3)
        return _read_builtin(text, strict=strict)
    if not exists:
        raise ModelError(f"no such file{_nearby(path)}", file=text)
    if kind is MJCF:  # MuJoCo's MJCF (root <mujoco>); any other XML is refused in one line
        root = root_element(path)
        if root != "mujoco":
            raise ModelError(f"not MJCF (the root element is {f'<{root}>' if root else 'not found'}, not "
                             "<mujoco>): robodyn reads MJCF from .xml and .mjcf files, URDF from .urdf files",
                             file=text)
    return kind.reader(path, strict=strict, **options)


def _read_builtin(name: str, *, strict: bool = False) -> Manipulator:
    """A built-in robot (:mod:`robodyn.library`) by name."""
    shown, source = library.text(name)
    return build_located(parse_text(source, json_format=False, file=shown), shown, strict=strict)


@dataclass(frozen=True)
class _Kind:
    """A kind of robot description: its ``name`` in messages (``"URDF"``), what one is (``"a URDF file"``), and
    the reader whose keyword-only parameters are the options :func:`load` hands it."""

    name: str
    label: str
    reader: Callable[..., Manipulator]

    def options(self) -> list[str]:
        """The reader's options: its keyword-only parameters, read from its signature."""
        parameters = inspect.signature(self.reader).parameters.values()
        return [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]


URDF = _Kind("URDF", "a URDF file", read_urdf)
MJCF = _Kind("MJCF", "an MJCF file", read_mjcf)
MODEL_FILE = _Kind("model", "a model file", read_model_file)
BUILTIN = _Kind("built-in", "a built-in robot", _read_builtin)
KINDS = (URDF, MJCF, MODEL_FILE, BUILTIN)

#: The command line's option for each reader option it offers (every command that reads a model has them all).
FLAGS = {"lock": "--lock", "mimic": "--mimic", "actuated": "--actuated", "floating": "--floating/--fixed",
         "root": "--root", "friction": "--friction", "frictionloss": "--frictionloss", "fluid": "--fluid",
         "xacro_args": "--xacro-arg", "package_paths": "--package-path"}
#: Where a description that does not take an option says the same thing itself.
NOTES = {"actuated": "a model file lists its own", "floating": "a model file says 'floating: true' itself"}


def _kind(model: str | Path) -> _Kind:
    """The kind of ``model``: a built-in name (a string), else by the suffix: URDF (``.urdf``, ``.xacro``), MJCF
    (``.xml``, ``.mjcf``), else a model file (a ``Path``, a model file suffix, or a file that exists)."""
    text = str(model)
    path = Path(text)
    if isinstance(model, str) and text in library.names():
        return BUILTIN
    suffix = path.suffix.lower()
    if suffix in URDF_SUFFIXES:
        return URDF
    if suffix in MJCF_SUFFIXES:
        return MJCF
    if isinstance(model, Path) or suffix in MODEL_SUFFIXES or path_exists(path, text):
        return MODEL_FILE
    raise ModelError(
        f"{text!r} is neither a built-in robot (robodyn list names them) nor a model file path"
        f"{did_you_mean(text, library.names()) or _nearby(path)}"
    )


def _check_options(kind: _Kind, options: dict[str, Any], text: str) -> None:
    """Each option is one the reader of ``kind`` takes: else one line naming it, the kinds of file it applies
    to, and the reader's options."""
    taken = kind.options()
    for name in options:
        if name in taken:
            continue
        listed = f"the options of {kind.label}: {', '.join(taken)}"
        applies = [k.name for k in KINDS if name in k.options()]
        if not applies:
            known = sorted({option for k in KINDS for option in k.options()})
            raise ModelError(f"rd.load has no option {name!r}{did_you_mean(name, known)} ({listed})")
        flag = f" ({FLAGS[name]})" if name in FLAGS else ""
        note = f" ({NOTES[name]})" if name in NOTES and kind in (MODEL_FILE, BUILTIN) else ""
        raise ModelError(f"{name}={flag} applies to {' and '.join(applies)} files only{note}, and {text!r} is "
                         f"{kind.label} ({listed})")


#: The most directory entries :func:`_nearby` reads (a huge directory is not listed for a suggestion).
MAX_LISTED = 2000


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
    return did_you_mean(path.name, files, "" if str(directory) == "." else ", in the same directory")

