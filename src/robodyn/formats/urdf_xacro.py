"""xacro files expanded to URDF in process, through ROS's own ``xacro`` package (the ``xacro`` extra).

:func:`expand` gives the URDF text of a xacro file (``robot.urdf.xacro``), in memory: nothing is written. Its
``<xacro:arg>`` values are ``args`` (``rd.load(path, xacro_args={"prefix": "left_"})``, ``--xacro-arg
prefix=left_``); a package that an include names, ``$(find NAME)`` or ``package://NAME/...``, is looked up:

- in ``package_paths``, in order: a directory named NAME (or whose ``package.xml`` names NAME) is the package
  itself, else its subdirectory NAME is (a directory of packages, as a ROS workspace's ``src``);
- else in the package that holds the file (the nearest directory above it whose ``package.xml`` names NAME).

A package found nowhere, an undefined argument, an unknown macro or a macro called with the wrong parameters is
one :class:`~robodyn.errors.ModelError` naming the file, the macro being expanded and the file it is in; an
argument given that no file read declares or uses (``<xacro:arg>``, ``$(arg NAME)``) is ignored, as xacro ignores
it, with a :class:`~robodyn.errors.ModelWarning` (a misspelt name would leave the default in place). The
file and every include are read as URDF files are (regular files of at most
:data:`robodyn.formats.urdf_xml.MAX_FILE_BYTES`: a FIFO is refused, not opened). xacro's own warnings become one
:class:`~robodyn.errors.ModelWarning`. Expressions in the file (``${...}``, ``$(eval ...)``) are evaluated as
xacro evaluates them; expand only files you would run ``xacro`` on.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from robodyn.errors import ModelError, ModelWarning, did_you_mean, printable
from robodyn.model.files import read_limited

#: The prefix of a ROS package URI.
PACKAGE_URI = "package://"
#: The most bytes of a xacro file, of each include, and of the expanded URDF.
MAX_BYTES = 20_000_000
INSTALL = "pip install 'robodyn[xacro]'"

_LOCK = threading.Lock()  # xacro keeps its state (the file and macro stacks, the arguments) in module globals


def is_xacro(path: Path, data: bytes) -> bool:
    """A ``.xacro`` file, or one whose text declares xacro's XML namespace and uses it (xacro's own output keeps
    the declaration on ``<robot>``: a declaration alone is no macro)."""
    return path.suffix.lower() == ".xacro" or (b"ros.org/wiki/xacro" in data and b"<xacro:" in data)


def expand(path: Path, data: bytes, shown: str, args: Mapping[str, Any] | None = None,
           package_paths: Sequence[str | Path] | None = None) -> bytes:
    """The URDF text of the xacro file at ``path`` (its bytes ``data``), expanded with ``args`` and the packages
    found as the module docstring says; errors name ``shown``."""
    try:
        import xacro
        from xacro import substitution_args
    except ImportError:
        raise ModelError(f"a xacro file: expanding it needs the 'xacro' package: {INSTALL}", file=shown) from None
    _check_no_doctype(data, shown)
    mappings = _arguments(args, shown)
    packages = _Packages(path, _directories(package_paths, shown))
    stderr = io.StringIO()
    texts = [data]  # the file's and each include's, as read
    with _LOCK, _patched(xacro, substitution_args, packages, texts), contextlib.redirect_stderr(stderr):
        xacro.init_stacks(str(path))
        xacro.all_includes = []
        try:
            document = xacro.parse(io.BytesIO(data))
            xacro.process_doc(document, mappings=mappings)
            text = document.toxml(encoding="utf-8")
        except RecursionError:
            raise ModelError(f"xacro: macros or includes nested too deeply{_location(xacro)}", file=shown) from None
        except Exception as exc:  # xacro's errors (XacroException, XML errors, its expressions' errors)
            raise _error(exc, xacro, shown) from None
    _check_arguments(mappings, texts, shown)
    said = stderr.getvalue().strip()
    if said:  # its first line (the rest says where: the file, the macro)
        first = said.splitlines()[0].strip().removeprefix("warning: ")
        warnings.warn(f"{shown}: xacro: {printable(first)}", ModelWarning, stacklevel=5)
    if len(text) > MAX_BYTES:
        raise ModelError(f"xacro: the expanded URDF is larger than {MAX_BYTES} bytes", file=shown)
    return bytes(text)


#: A xacro argument's declaration, ``<xacro:arg name="NAME" ...>``, or use, ``$(arg NAME)``.
_ARGUMENT = re.compile(rb"""<xacro:arg\s[^>]*?name\s*=\s*["']([^"']+)["']|\$\(arg\s+([^\s)]+)\)""")


def _check_arguments(given: Mapping[str, str], texts: list[bytes], shown: str) -> None:
    """A warning for each given argument that no file read declares or uses (xacro itself ignores it: a misspelt
    name would leave the default in place)."""
    known = sorted({(m.group(1) or m.group(2)).decode("utf-8", "replace") for text in texts
                    for m in _ARGUMENT.finditer(text)})
    unknown = [name for name in given if name not in known]
    if unknown:
        hint = did_you_mean(unknown[0], known) or f" (its arguments: {', '.join(known) or 'none'})"
        warnings.warn(f"{shown}: xacro_args {', '.join(map(repr, unknown))}: not an argument of the file, "
                      f"ignored{hint}", ModelWarning, stacklevel=6)


def _check_no_doctype(data: bytes, shown: str) -> None:
    """No DOCTYPE or entity declaration (as in a URDF file), checked before xacro's XML parser reads the text."""
    if re.search(rb"<!(DOCTYPE|ENTITY)", data, re.IGNORECASE):
        raise ModelError("a DOCTYPE or entity declaration is not allowed in a xacro file", file=shown)


def _arguments(args: Mapping[str, Any] | None, shown: str) -> dict[str, str]:
    """``args`` checked: names (text) to values, each as the text xacro substitutes."""
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise ModelError(f"xacro_args must map argument names to values, got {type(args).__name__}", file=shown,
                         field="xacro_args")
    out = {}
    for name, value in args.items():
        if not isinstance(name, str) or not name:
            raise ModelError(f"a xacro argument's name must be text, got {name!r}", file=shown, field="xacro_args")
        out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def _directories(paths: Sequence[str | Path] | None, shown: str) -> list[Path]:
    """``package_paths`` checked: directories that exist."""
    if paths is None:
        return []
    if isinstance(paths, str | bytes | Path):
        paths = [paths]
    out = []
    for item in paths:
        if not isinstance(item, str | Path):
            raise ModelError(f"a package path must be a directory, got {type(item).__name__}", file=shown,
                             field="package_paths")
        directory = Path(item)
        if not directory.is_dir():
            raise ModelError(f"package path {str(item)!r} is not a directory", file=shown, field="package_paths")
        out.append(directory.resolve())
    return out


_NAME = re.compile(rb"<name>\s*([^<\s]+)\s*</name>")


def _package_name(directory: Path) -> str | None:
    """The name in ``directory``'s ``package.xml`` (None without one, or with none)."""
    manifest = directory / "package.xml"
    if not manifest.is_file():
        return None
    try:
        found = _NAME.search(read_limited(manifest, 1_000_000, str(manifest)))
    except ModelError:
        return None
    return found.group(1).decode("utf-8", "replace") if found else None


class _Packages:
    """Finds a package's directory by name: in the given directories, else the one holding the file."""

    def __init__(self, path: Path, directories: list[Path]) -> None:
        self.path = path
        self.directories = directories

    def find(self, name: str) -> str:
        for directory in self.directories:
            if directory.name == name or _package_name(directory) == name:
                return str(directory)
            if (directory / name).is_dir():
                return str(directory / name)
        for directory in self.path.resolve().parents:
            if _package_name(directory) == name:
                return str(directory)
        where = f" in {', '.join(str(d) for d in self.directories)}" if self.directories else ""
        raise ModelError(f"xacro: package {name!r} not found{where}: give its directory, or the directory that "
                         "holds it, with package_paths=[...] (--package-path DIR)")

    def resolved(self, spec: str) -> str:
        """A ``package://NAME/rest`` URI as the path of ``rest`` in the package; any other file name as given."""
        if not spec.startswith(PACKAGE_URI):
            return spec
        name, _, rest = spec[len(PACKAGE_URI):].partition("/")
        return os.path.join(self.find(name), rest)


@contextlib.contextmanager
def _patched(xacro: Any, substitution_args: Any, packages: _Packages, texts: list[bytes]) -> Iterator[None]:
    """xacro with its package look-up (``$(find)``, which needs ROS otherwise) and includes (``package://`` URIs
    resolved; each file read as :func:`~robodyn.model.files.read_limited` reads, its text added to ``texts``) made
    robodyn's, for the time of one expansion."""
    saved = (xacro.abs_filename_spec, xacro.parse, substitution_args._eval_find,
             substitution_args._eval_dict.get("find"))
    original_spec, original_parse = saved[0], saved[1]

    def abs_filename_spec(spec: str) -> str:
        return str(original_spec(packages.resolved(spec)))

    def parse(inp: Any, filename: str | None = None) -> Any:
        if inp is None and filename is not None:
            data = read_limited(filename, MAX_BYTES, str(filename))
            _check_no_doctype(data, str(filename))
            texts.append(data)
            inp = io.BytesIO(data)
        return original_parse(inp, filename)

    xacro.abs_filename_spec, xacro.parse = abs_filename_spec, parse
    substitution_args._eval_find = substitution_args._eval_dict["find"] = packages.find
    try:
        yield
    finally:
        xacro.abs_filename_spec, xacro.parse = saved[0], saved[1]
        substitution_args._eval_find, substitution_args._eval_dict["find"] = saved[2], saved[3]
        xacro.all_includes = []
        xacro.substitution_args_context.clear()


def _error(exc: BaseException, xacro: Any, shown: str) -> ModelError:
    """One line for an error of xacro's: robodyn's own error (a package not found, an include that is not a
    regular file) where it wraps one, else xacro's message and where it happened."""
    inner: BaseException | None = exc
    while inner is not None:
        if isinstance(inner, ModelError):
            include = f"include {inner.file}: " if inner.file and inner.file != shown else ""
            return ModelError(f"{include}{inner.problem}{_location(xacro)}", file=shown, field=inner.field)
        inner = getattr(inner, "exc", None)
    message = " ".join(str(exc).split()) or type(exc).__name__
    return ModelError(f"xacro: {message}{_location(xacro)}", file=shown)


def _location(xacro: Any) -> str:
    """``" (in macro 'arm', in file parts/arm.xacro)"``: the macro being expanded and the file being read when
    xacro stopped ("" where neither is known)."""
    parts = []
    macros = [m.body.getAttribute("name") for m in (xacro.macrostack or []) if getattr(m, "body", None)]
    if macros:
        parts.append(f"in macro {macros[-1]!r}")
    files = [f for f in (xacro.filestack or []) if f]
    if len(files) > 1:
        parts.append(f"in file {files[-1]}")
    return f" ({', '.join(parts)})" if parts else ""


__all__ = ["expand", "is_xacro"]
