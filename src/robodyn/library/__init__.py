"""The built-in robots: model files shipped in this package, listed with their sources (the catalogue only:
no model is built here, so listing them does not import sympy; :func:`robodyn.load` builds one)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import yaml

from robodyn.errors import ModelError

#: libyaml's safe loader where PyYAML has it (the catalogue is read by ``robodyn list``, which should start fast).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)  # type: ignore[attr-defined]
        out.append(Entry(name, str(data.get("description", "")), str(data.get("source", ""))))
    return out


def text(name: str) -> tuple[str, str]:
    """(the name shown in messages, the model file's text) of a built-in robot;
    :func:`robodyn.load` builds it."""
    files = _files()
    if name not in files:
        raise ModelError(f"no built-in robot named {name!r}; available: {', '.join(sorted(files))}")
    return f"<library>/{name}.yaml", files[name].read_text(encoding="utf-8")  # type: ignore[attr-defined]
