"""The built-in robots: model files shipped in this package, listed with their sources."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import yaml

from robodyn.errors import ModelError
from robodyn.model.io import build_located, parse_text
from robodyn.model.manipulator import Manipulator


@dataclass(frozen=True)
class Entry:
    name: str
    description: str
    source: str


def _files() -> dict[str, object]:
    root = resources.files(__package__)
    return {p.name.removesuffix(".yaml"): p for p in root.iterdir() if p.name.endswith(".yaml")}


def names() -> list[str]:
    """Names of the built-in robots, sorted."""
    return sorted(_files())


def entries() -> list[Entry]:
    """Name, one-line description and source of every built-in robot."""
    out = []
    for name, path in sorted(_files().items()):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))  # type: ignore[attr-defined]
        out.append(Entry(name, str(data.get("description", "")), str(data.get("source", ""))))
    return out


def load(name: str, *, strict: bool = False) -> Manipulator:
    """A built-in robot by name."""

    files = _files()
    if name not in files:
        raise ModelError(f"no built-in robot named {name!r}; available: {', '.join(sorted(files))}")
    path = files[name]
    shown = f"<library>/{name}.yaml"
    data = parse_text(path.read_text(encoding="utf-8"), json_format=False, file=shown)  # type: ignore[attr-defined]
    return build_located(data, shown, strict=strict)
