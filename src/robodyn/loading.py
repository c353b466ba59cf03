"""``robodyn.load``: a built-in robot by name or a model file by path."""

from __future__ import annotations

from pathlib import Path

from robodyn import library
from robodyn.errors import ModelError
from robodyn.model.io import read_model_file
from robodyn.model.manipulator import Manipulator

MODEL_SUFFIXES = (".yaml", ".yml", ".json")


def load(model: str | Path, *, strict: bool = False) -> Manipulator:
    """Load a manipulator: a built-in name (``"puma560"``), a ``.yaml``/``.yml``/``.json`` model file, or a
    ``.urdf`` file (a serial chain: see :mod:`robodyn.urdf`).

    ``strict=True`` turns physically doubtful inertia (triangle inequality) into an error.
    """
    text = str(model)
    path = Path(text)
    if path.suffix.lower() == ".urdf":
        from robodyn.urdf import read_urdf

        if not path.exists():
            raise ModelError("no such file", file=text)
        return read_urdf(path, strict=strict)
    if isinstance(model, Path) or path.suffix.lower() in MODEL_SUFFIXES or path.exists():
        if not path.exists():
            raise ModelError("no such file", file=text)
        return read_model_file(path, strict=strict)
    if text in library.names():
        return library.load(text, strict=strict)
    raise ModelError(
        f"{text!r} is neither a built-in robot ({', '.join(library.names())}) nor a model file path"
    )
