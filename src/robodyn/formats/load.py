"""``robodyn.load``: a built-in robot by name or a model file by path."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path

from robodyn import library
from robodyn.errors import ModelError, ModelWarning
from robodyn.formats.model_file import build_located, parse_text, read_model_file
from robodyn.formats.urdf import read_urdf, xacro_message
from robodyn.model.files import path_exists
from robodyn.model.manipulator import Manipulator

MODEL_SUFFIXES = (".yaml", ".yml", ".json")


def load(model: str | Path, *, strict: bool = False, lock: Mapping[str, float] | None = None,
         mimic: str = "couple") -> Manipulator:
    """Load a manipulator: a built-in name (``"puma560"``), a ``.yaml``/``.yml``/``.json`` model file, or a
    ``.urdf`` file (a serial chain or a tree: see :mod:`robodyn.formats.urdf`). The suffix chooses the reader;
    a ``.xacro`` file (expand it first: ``xacro arm.urdf.xacro > arm.urdf``) and MuJoCo's MJCF (``.xml``,
    ``.mjcf``) are refused in one line.

    ``strict=True`` turns physically doubtful inertia (triangle inequality) into an error. ``lock`` (URDF files
    only) fixes the named joints at the given positions (rad or m), e.g. ``lock={"finger_joint": 0.0}``;
    ``mimic`` (URDF files only): ``"couple"`` (the default) reads a mimic joint as a coupled coordinate (the
    robot's q are then its ``robot.nv`` independent joints', as Pinocchio's ``mimic=True``), ``"independent"``
    as an independent joint, ``"refuse"`` refuses it (see :mod:`robodyn.formats.urdf`).

    A string that is a built-in name always loads the built-in robot, even where a file of that name
    exists in the working directory (a :class:`~robodyn.errors.ModelWarning` then says so); load such a
    file by a path that is not a bare name, ``./puma560`` or ``Path("puma560")``.
    """
    text = str(model)
    path = Path(text)
    if lock and path.suffix.lower() != ".urdf":
        raise ModelError(f"a lock (lock= or --lock) applies to URDF files only, and {text!r} is not a .urdf file")
    if mimic != "couple" and path.suffix.lower() != ".urdf":
        raise ModelError(f"mimic= applies to URDF files only, and {text!r} is not a .urdf file")
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
            raise ModelError("no such file", file=text)
        if suffix == ".xacro":
            raise ModelError(xacro_message(path), file=text)
        if suffix != ".urdf":  # MuJoCo's XML, which a YAML reader would misread (one line, not a YAML error)
            raise ModelError(f"MJCF (MuJoCo) files are not supported yet ({suffix} file; robodyn reads URDF from "
                             ".urdf files and model files from .yaml, .yml, .json)", file=text)
        return read_urdf(path, strict=strict, lock=lock, mimic=mimic)
    if isinstance(model, Path) or path.suffix.lower() in MODEL_SUFFIXES or exists:
        if not exists:
            raise ModelError("no such file", file=text)
        return read_model_file(path, strict=strict)
    raise ModelError(
        f"{text!r} is neither a built-in robot ({', '.join(library.names())}) nor a model file path"
    )

