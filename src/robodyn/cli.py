"""The ``robodyn`` command: a thin layer over the public API.

Bad input prints one line (``error: FILE: link K: field 'F': problem``) and exits 2,
without a traceback; output files are written to a temporary file and renamed.
"""

from __future__ import annotations

import json
import logging
import math
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

import robodyn as rd
from robodyn import library
from robodyn._version import __version__
from robodyn.errors import DerivationError, ModelError, bounded, printable
from robodyn.program import outputs as vocabulary

if TYPE_CHECKING:
    from robodyn.equations import Equations

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Symbolic equations of motion of robot manipulators: serial chains and kinematic trees. "
    "`robodyn --version` prints the version.",
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


MODEL_HELP = ("A built-in robot name (see `robodyn list`), a model file (.yaml, .yml, .json), a URDF or xacro file "
              "(.urdf, .xacro: expanded in process, see --xacro-arg) or an MJCF file (.xml, .mjcf).")


# The choices of the options that name the API's vocabularies are built from the one vocabulary,
# robodyn.program.outputs (which imports nothing heavy), so that no command offers a name the API lacks. Enums made
# by the functional API have members that mypy does not see: they are reached by value, Method("ne").

#: ``--method`` of derive and report: the short names (ne, le, gd), then the derivation methods.
Method = StrEnum("Method", {m: m for m in (*vocabulary.METHOD_ALIASES, *vocabulary.METHODS)})  # type: ignore[misc]
NEWTON_EULER = Method("ne")


#: The one help text of ``--trajectory`` (every command that takes one, the same names).
TRAJECTORY_HELP = ("A built-in trajectory (angeles1: Angeles, Ma and Rojas' example 1; angeles2: their example 2) "
                   "or a CSV file (t, q1..qn[, qd1..qdn, qdd1..qddn]).")


class CountMethod(StrEnum):
    """``count --counting``: the straight-line program, or Kane's operation count (Angeles, Ma and Rojas)."""

    program = "program"
    kane = "kane"


class Mimic(StrEnum):
    """``--mimic``: how a URDF model's mimic joints are read (robodyn.formats.urdf.MIMIC, tested equal)."""

    couple = "couple"
    independent = "independent"
    refuse = "refuse"


class Friction(StrEnum):
    """``--friction``: how a URDF model's <dynamics friction> is read (robodyn.formats.urdf.FRICTION, tested equal)."""

    coulomb = "coulomb"
    ignore = "ignore"


class Frictionloss(StrEnum):
    """``--frictionloss``: how an MJCF model's joint frictionloss is read (robodyn.formats.mjcf)."""

    coulomb = "coulomb"
    ignore = "ignore"
    refuse = "refuse"


class Fluid(StrEnum):
    """``--fluid``: how an MJCF model's fluid forces are read (robodyn.formats.mjcf)."""

    auto = "auto"
    drop = "drop"
    refuse = "refuse"


#: ``count --outputs`` names Burdick's distinct elements ``all``; every other choice is the output's own name.
COUNT_NAMES = {"elements": "all"}
#: ``count --outputs``: what can be counted (the program's outputs and the groups of derivatives).
CountOutput = StrEnum(  # type: ignore[misc]
    "CountOutput", {COUNT_NAMES.get(o, o): COUNT_NAMES.get(o, o) for o in vocabulary.COUNTABLE})
#: ``count --route``: auto (the cheapest), or one route of the program for every part.
Route = StrEnum("Route", {r: r for r in (vocabulary.AUTO, *vocabulary.ROUTES)})  # type: ignore[misc]
#: ``derive --form``: the forms in which the equations print.
Form = StrEnum("Form", {f: f for f in vocabulary.FORMS})  # type: ignore[misc]
#: The defaults of those options: tau (the form, and the output counted), the cheapest route.
TAU_FORM, TAU_OUTPUT, AUTO_ROUTE = Form("tau"), CountOutput("tau"), Route(vocabulary.AUTO)


class Format(StrEnum):
    text = "text"
    latex = "latex"
    json = "json"


class UserError(Exception):
    """A problem the user can fix; reported in one line with exit code 2."""


def _shown(text: str) -> str:
    """Text from a model (names, descriptions) for rich: one line, control characters escaped, markup escaped."""
    return escape(printable(text))


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    err.print(f"warning: {bounded(str(message), WARNING_CHARS)}", markup=False)


#: The most characters of a warning line (an error line: :data:`robodyn.errors.MAX_LINE`).
WARNING_CHARS = 2000
#: The most parameter names listed in the ``--param`` hint.
LISTED_NAMES = 10


def _path(path: object) -> str:
    """A path (or any value from the command line) as every message and ``wrote`` line shows it: control
    characters escaped (a newline cannot forge a line of output), cut short (:func:`robodyn.model.files.shown_path`)."""
    from robodyn.model.files import shown_path

    return shown_path(path if isinstance(path, (str, bytes)) else str(path))


def _robust_streams() -> None:
    """Make printing text that is not valid Unicode (a lone surrogate in a name) write an escape, never raise."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with suppress(Exception):
                reconfigure(errors="backslashreplace")


def _cli_message(exc: Exception) -> str:
    """The error as the command line says it: parameters left without values are given with ``--param``."""
    unbound = getattr(exc, "unbound", ())
    if unbound:
        listed = ", ".join(unbound[:LISTED_NAMES])
        more = f" and {len(unbound) - LISTED_NAMES} more" if len(unbound) > LISTED_NAMES else ""
        return (f"the model's parameters {listed}{more} need values: give each with --param NAME=VALUE "
                f"(e.g. --param {unbound[0]}=1.0)")
    return str(exc)


#: The fields of errors about the command's options and the API's arguments rather than the model file: such an
#: error is not prefixed with the model file (see :func:`_located`).
OPTION_FIELDS = frozenset({"params", "q0", "qd0", "tau0", "q", "qd", "qdd", "tau", "mode", "samples", "method",
                           "engine", "torque", "t_span", "t_eval", "t_end", "t", "max_evaluations", "dt", "output",
                           "trajectory", "rtol", "atol", "threshold", "lock"})


class _Model:
    """The model file the running command loaded (None: a built-in robot, or nothing loaded yet)."""

    file: str | None = None


def _located(exc: Exception) -> Exception:
    """A :class:`ModelError` raised while the command worked on a model file, that does not name a file (a
    value found non-finite under the parameters given, a constant too large for generated code...), with that
    file named."""
    if isinstance(exc, ModelError) and not exc.file and _Model.file and exc.field not in OPTION_FIELDS:
        return exc.located(file=_Model.file)
    return exc


def _refusal(exc: ValueError, robot: str | None = None) -> Exception:
    """A ``ValueError`` of the program builder or the code generator as one line: a :class:`ModelError` (a number of
    the model too large for generated code...) names the model file (:func:`_located`); another is prefixed with
    the robot's name, if given."""
    if isinstance(exc, ModelError) and (exc.file or _Model.file):
        return _located(exc)
    return UserError(f"{robot}: {exc}" if robot else str(exc))


class _Interrupt:
    """Ctrl-C while the command runs: ``seen`` once SIGINT arrived (also where a library caught the
    KeyboardInterrupt it raised and went on), ``told`` once "interrupted" is printed."""

    seen = False
    told = False


def _on_sigint(signum: int, frame: object) -> None:
    _Interrupt.seen = True
    raise KeyboardInterrupt


@contextmanager
def _interruptible() -> Iterator[None]:
    """SIGINT noted in :class:`_Interrupt` as well as raised, for the block (the previous handler and a clean
    :class:`_Interrupt` restored after; an ignored SIGINT, as in a background job, stays ignored)."""
    previous = signal.getsignal(signal.SIGINT)
    ours = previous is signal.default_int_handler and threading.current_thread() is threading.main_thread()
    if ours:
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        if ours:
            signal.signal(signal.SIGINT, previous)
        _Interrupt.seen = _Interrupt.told = False


def _interrupted() -> typer.Exit:
    """The one line "interrupted" (once) and exit status 130."""
    if not _Interrupt.told:
        _Interrupt.told = True
        err.print("interrupted", markup=False)
    # CPython 3.11 notes a KeyboardInterrupt that ends an exec() of source text (a dataclass's methods being
    # made when Ctrl-C came) as never handled, and so ends the process by SIGINT instead of its exit status;
    # an exec() that finishes clears the note.
    exec("None")
    return typer.Exit(130)


def _stop_if_interrupted() -> None:
    """KeyboardInterrupt if SIGINT arrived and its KeyboardInterrupt was lost on the way (caught inside a
    library): checked between the stages of a build and before an output is written."""
    if _Interrupt.seen:
        raise KeyboardInterrupt


def _guarded(body: Callable[[], int | None]) -> None:
    warnings.showwarning = _show_warning
    _robust_streams()
    _Model.file = None
    try:
        code = body()
        _stop_if_interrupted()
    except (ModelError, DerivationError, UserError) as exc:
        err.print(f"error: {bounded(_cli_message(_located(exc)))}", markup=False)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        raise _interrupted() from None
    except OSError as exc:  # last resort: a system error no check above turned into a message
        where = f"{_path(exc.filename)}: " if exc.filename is not None else ""
        err.print(bounded(f"error: {where}{exc.strerror or exc}"), markup=False)
        raise typer.Exit(2) from None
    if code:
        raise typer.Exit(code)


@contextmanager
def delayed_progress(label: str) -> Iterator[Callable[[str], None]]:
    """rd.compile's progress bar (:func:`robodyn.program.progress.on_terminal`) on the command line's stderr: it
    appears only on a terminal and if the work takes longer than a second; with ``$ROBODYN_PROGRESS=lines``, the
    label and each stage as a line of their own instead. A stage checks for a lost Ctrl-C
    (:func:`_stop_if_interrupted`)."""
    from robodyn.program.progress import on_terminal

    with on_terminal(label, err, every=_stop_if_interrupted) as update:
        yield update


def _load(model: str, strict: bool, lock: list[str] | None = None, mimic: Mimic = Mimic.couple,
          floating: bool | None = None, actuated: list[str] | None = None, root: str | None = None,
          friction: Friction | None = None, frictionloss: Frictionloss | None = None, fluid: Fluid | None = None,
          xacro_arg: list[str] | None = None, package_path: list[Path] | None = None) -> rd.Manipulator:
    """``rd.load`` with the reader options given on the command line (those not given: None, the reader's
    default; rd.load refuses one the model's reader does not take)."""
    names = [name.strip() for item in actuated or [] for name in item.split(",") if name.strip()]
    robot = rd.load(model, strict=strict, lock=_parse_lock(lock or []) or None,
                    mimic=None if mimic is Mimic.couple else mimic.value, floating=floating, actuated=names or None,
                    root=root, friction=_value(friction), frictionloss=_value(frictionloss), fluid=_value(fluid),
                    xacro_args=_parse_pairs("--xacro-arg", xacro_arg or []) or None, package_paths=package_path)
    if model not in library.names():  # a file: named in the errors that do not name it (see _located)
        _Model.file = _path(model)
    return robot


def _value(choice: StrEnum | None) -> str | None:
    return None if choice is None else choice.value


def _parse_pairs(option: str, items: list[str]) -> dict[str, str]:
    """``--xacro-arg NAME=VALUE`` options: each name once, the value as given (text)."""
    pairs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UserError(f"{option} {item!r}: expected NAME=VALUE")
        if name in pairs:
            raise UserError(f"{option} {item!r}: {name!r} is given twice")
        pairs[name] = value
    return pairs


def _parse_lock(items: list[str]) -> dict[str, float]:
    """``--lock NAME=VALUE`` options: a URDF joint name and its position, a finite number (rad or m)."""
    lock: dict[str, float] = {}
    for item in items:
        name, sep, value = (part.strip() for part in item.partition("="))
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not name or not math.isfinite(number):
            raise UserError(f"--lock {item!r}: expected NAME=VALUE, a URDF joint name and a finite number")
        if name in lock:
            raise UserError(f"--lock {item!r}: joint {name!r} is given twice")
        lock[name] = number
    return lock


def _write(text: str, output: Path | None) -> None:
    from robodyn.model.files import atomic_write, path_exists

    _stop_if_interrupted()
    if output is None:
        out.print(text, markup=False)
        return

    if not path_exists(output.parent, str(output)):
        raise UserError(f"{_path(output)}: directory {_path(output.parent)} does not exist")
    try:
        atomic_write(output, text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise UserError(f"{_path(output)}: cannot write ({exc.strerror})") from None
    err.print(f"wrote {_path(output)}", markup=False)


def _check_output_directory(directory: Path) -> None:
    """Refuse, before any work, an output directory that exists as something else."""
    from robodyn.model.files import path_exists

    if path_exists(directory, f"--output {directory}") and not directory.is_dir():
        raise UserError(f"--output {_path(directory)}: not a directory")


def _write_set(directory: Path, write: Callable[[], list[Path]]) -> None:
    """Run ``write`` (all files or none, :func:`robodyn.model.files.write_all`) and list what it wrote; an
    ``OSError`` (full or read-only disk) is one line."""
    try:
        paths = write()
    except OSError as exc:
        where = exc.filename or directory
        raise UserError(f"{_path(where)}: cannot write ({exc.strerror or exc}); no file written") from None
    for path in paths:
        out.print(f"wrote {_path(path)}", markup=False)


def _write_each(writers: Iterable[tuple[Path | None, Callable[[Path], object]]]) -> None:
    """Call each writer (an atomic file writer of the API) on its path, skipping paths not asked for."""
    for path, write in writers:
        if path is None:
            continue
        try:
            write(path)
        except OSError as exc:
            raise UserError(f"{_path(path)}: cannot write ({exc.strerror or exc})") from None
        out.print(f"wrote {_path(path)}", markup=False)


StrictOption = Annotated[
    bool, typer.Option("--strict", help="Treat doubtful inertia (triangle inequality) as an error.")
]
LockOption = Annotated[
    list[str] | None,
    typer.Option("--lock", metavar="NAME=VALUE", help="A URDF model: fix joint NAME at VALUE (rad or m); repeatable."),
]
MimicOption = Annotated[
    Mimic, typer.Option("--mimic", help="A URDF model's mimic joints: couple (coupled coordinates: q, tau are the "
                        "independent joints', as Pinocchio's mimic=True), independent (ordinary joints) or refuse.")
]
ActuatedOption = Annotated[
    list[str] | None,
    typer.Option("--actuated", metavar="NAME[,NAME...]",
                 help="A URDF model with loop closures: its actuated joints, by URDF name (repeat the option or "
                      "separate names by commas); default: the joints the file marks independent=\"true\".")
]
FloatingOption = Annotated[
    bool | None, typer.Option("--floating/--fixed", help="A URDF or MJCF model: a floating base (--floating: a free "
                              "joint at a URDF's root; an MJCF file must have its free joint) or a fixed one (--fixed: "
                              "an MJCF free joint welded); neither: the file decides (a model file says floating: "
                              "true). q has the base's position and unit quaternion (x, y, z, w) first, qd its "
                              "body-frame twist; count and codegen build its tau, M, h, G, bias, forward, derivatives, "
                              "centroidal outputs and frames' kinematics, other symbolic work refuses it so far (the "
                              "numeric engine, robodyn.numeric, handles the rest).")
]
RootOption = Annotated[
    str | None, typer.Option("--root", metavar="LINK", help="A URDF or MJCF model: read the subtree of this link "
                             "(URDF) or body (MJCF) only.")
]
FrictionOption = Annotated[
    Friction | None, typer.Option("--friction", help="A URDF model's <dynamics friction>: coulomb (the joint's "
                                  "Coulomb friction, the default) or ignore.")
]
FrictionlossOption = Annotated[
    Frictionloss | None, typer.Option("--frictionloss", help="An MJCF model's joint frictionloss: coulomb (as "
                                      "Coulomb friction), ignore or refuse.")
]
FluidOption = Annotated[
    Fluid | None, typer.Option("--fluid", help="An MJCF model's fluid forces (density, viscosity): auto, drop or "
                               "refuse.")
]
XacroArgOption = Annotated[
    list[str] | None,
    typer.Option("--xacro-arg", metavar="NAME=VALUE", help="A xacro model: the value of its <xacro:arg> NAME; "
                 "repeatable."),
]
PackagePathOption = Annotated[
    list[Path] | None,
    typer.Option("--package-path", metavar="DIR", help="A xacro model: where the packages its includes name "
                 "($(find NAME), package://NAME) are: a package's directory or a directory of packages; repeatable."),
]


def _deprecated(old: str, new: str, why: str) -> None:
    """The warning line of an option spelling that was renamed (accepted for one release)."""
    err.print(f"warning: {old} is now {new} ({why}); {old} goes in the next release", markup=False)


@app.command("list")
def list_robots() -> None:
    """List the built-in robots with a one-line description and their source."""

    def body() -> None:
        table = Table(show_lines=False, box=None, pad_edge=False)
        table.add_column("name", style="bold", no_wrap=True)
        table.add_column("description / source")
        for entry in library.entries():
            table.add_row(_shown(entry.name), f"{_shown(entry.description)}\n[dim]{_shown(entry.source)}[/dim]")
        out.print(table)

    _guarded(body)


@app.command()
def show(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Show a robot's DH table and inertial data, with the conventions they follow."""

    from robodyn.model import tables

    def body() -> None:
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        out.print(f"[bold]{_shown(robot.name)}[/bold]: {_shown(robot.description)}")
        if robot.source:
            out.print(f"[dim]source: {_shown(robot.source)}[/dim]")
        out.print(f"{robot.n} joints ({robot.joint_types}), {tables.CONVENTION_TEXT[robot.convention]}")
        if robot.is_tree or robot.loops or robot.couplings or robot.floating:  # the tree, its loops, its roles
            out.print("structure:")
            for line in tables.structure(robot):
                out.print(f"  {line}", markup=False)
        for c in robot.couplings:  # q and tau at every command are the independent coordinates
            if c.closure is not None:
                out.print(f"coupled: {c.describe()}", markup=False)
                continue
            terms = " + ".join(f"{tables.text(r)} x joint {int(k) + 1}" for k, r in c.leaders)
            out.print(f"coupled: joint {int(c.joint) + 1} = {terms} + {tables.text(c.offset)}"
                      f"{f' (loop {c.loop})' if c.loop else ''}", markup=False)
        if robot.couplings:
            out.print(f"independent coordinates (q, qd, tau of every command): joints "
                      f"{', '.join(str(j + 1) for j in robot.independent)}", markup=False)
        out.print("gravity: (" + ", ".join(tables.text(x) for x in robot.gravity) + ")")
        dh = Table(title="Denavit-Hartenberg parameters")
        extra = tables.topology(robot)  # names, parents (a tree), placements
        for header in [*tables.dh_headers(robot), *(header for header, _ in extra)]:
            dh.add_column(header)
        for i, row in enumerate(tables.dh_rows(robot)):
            dh.add_row(*(_shown(cell) for cell in [*row, *(values[i] for _, values in extra)]))
        out.print(dh)
        inertial = Table(title="Inertial parameters")
        for header in tables.INERTIA_HEADERS:
            inertial.add_column(header)
        for row in tables.inertia_rows(robot):
            inertial.add_row(*row)
        out.print(inertial)
        notes = tables.inertia_notes(robot)  # published inertia kept as given (no triangle-inequality warning)
        if notes:
            out.print("inertia notes (published data that break the triangle inequality, kept as given):")
            for note in notes:
                out.print(f"  {_shown(note)}")
        if any(x != 0 for x in robot.tip_force + robot.tip_moment):
            out.print(f"tip load: force {robot.tip_force}, moment {robot.tip_moment} (frame n, about its origin)")
        out.print(f"[dim]{tables.INERTIA_TEXT}[/dim]")
        params = robot.parameters()
        out.print("parameters: " + (", ".join(s.name for s in params) if params else "none (numeric)"))

    _guarded(body)


def _render(eqs: Equations, form: str, fmt: Format) -> str:
    if fmt is Format.json:
        return json.dumps(eqs.to_dict(form), indent=2)
    if fmt is Format.latex:
        return eqs.to_latex(form)
    text = eqs.to_text(form)  # first: the header's time includes the expansion and the shared parts it computes
    header = f"# {eqs.robot.name}: {eqs.method}, form {form}, derived in {eqs.total_seconds:.3f} s"
    return header + "\n" + text


@app.command()
def derive(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    method: Annotated[Method, typer.Option("--method", "-m", help="Formulation.")] = NEWTON_EULER,
    form: Annotated[Form, typer.Option("--form", help="Which form of the equations to print.")] = TAU_FORM,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.text,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    expand: Annotated[bool | None, typer.Option(
        "--expand/--nested",
        help="Expanded canonical form (float coefficients below 1e-12 of a part's largest dropped), or nested with "
             "shared parts x1, x2, ... (default: expanded where it stays small: up to 3 joints or right-angled "
             "geometry, and an estimate made before expanding under 50,000 terms).")] = None,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Derive the equations of motion and print them in one of the community forms."""

    def body() -> None:
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        if method == "emdeg" and fmt is Format.text and form == "tau":
            from robodyn.program import emdeg_text

            with delayed_progress(f"EMDEG's elements of {robot.name}"):
                text = emdeg_text(robot)
            _write(text, output)
            return
        with delayed_progress(f"deriving {robot.name}") as step:
            eqs = rd.derive(robot, method.value, progress=step, expand=expand)
            step("estimating the expanded size" if expand is None else "expanding" if expand else "sharing")
            step("expanding" if eqs.expanded else "sharing subexpressions")  # eqs.expanded: the estimate, if any
            text = _render(eqs, form.value, fmt)
        if expand is None and not eqs.expanded:
            err.print(f"note: {eqs.form_note('--expand')}", markup=False)
        _write(text, output)

    _guarded(body)


@app.command()
def check(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    samples: Annotated[int, typer.Option(min=1, help="Random states for the numeric comparison.")] = 50,
    rtol: Annotated[float, typer.Option(help="Relative tolerance of the numeric comparison, in (0, 1).")] = 1e-10,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Derive with every available method and compare them; exit 1 if any disagree."""

    from robodyn.analysis.check import check as run_check

    def body() -> int:
        if not 0 < rtol < 1:
            raise UserError(f"--rtol must be in (0, 1), got {rtol}")
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        with delayed_progress(f"checking {robot.name}"):
            result = run_check(robot, samples=samples, rtol=rtol)
        table = Table(title=_shown(f"{robot.name}: every method against {result.reference}"))
        for header in result.COLUMNS:
            table.add_column(header)
        for method, part, mode, diff, agree in result.rows():
            table.add_row(method, part, mode, _shown(diff), "[red]NO[/red]" if agree == "NO" else agree)
        out.print(table)
        times = ", ".join(f"{m} {s:.3f} s" for m, s in result.seconds.items())
        out.print(f"derivation times: {times}")
        out.print(result.verdict() if result.agree else f"[red]{result.verdict()}[/red]")
        return 0 if result.agree else 1

    _guarded(body)


class CountFormat(StrEnum):
    """``count`` prints text or JSON (no LaTeX: there are no equations to typeset)."""

    text = "text"
    json = "json"


@app.command()
def count(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    what: Annotated[
        list[str] | None, typer.Option(
            "--outputs", "-O", metavar="NAME[,NAME...]",
            help=f"What to count, each on its own (repeat the option, or comma-separated): {', '.join(CountOutput)} "
            "(all: every distinct M, c, b, g element; dtau: dtau/dq and dtau/dqd; dqdd: dqdd/dq, dqdd/dqd and M^-1); "
            "default tau. JSON: an object, a list of them for several.")
    ] = None,
    counting: Annotated[
        CountMethod, typer.Option("--counting", help="program: the cheapest straight-line program; kane: "
                                  "Angeles, Ma and Rojas' algorithm beside their table 1.")
    ] = CountMethod.program,
    old_method: Annotated[CountMethod | None, typer.Option("--method", "-m", hidden=True)] = None,
    route: Annotated[Route, typer.Option("--route", help="Route to the program (auto: the cheapest).")] = AUTO_ROUTE,
    base: Annotated[bool, typer.Option("--base", help="The model in base parameters (identification), each one an "
                                       "input.")] = False,
    fmt: Annotated[CountFormat, typer.Option("--format", "-f", help="text or json.")] = CountFormat.text,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Count the multiplications and additions per evaluation, beside the published figures."""

    def body() -> None:
        _check_directory("--output", output)
        method = counting
        if old_method is not None:
            _deprecated("count --method", "--counting", "--method names the formulation in derive and report")
            method = old_method
        counted = _listed("--outputs", what, [o.value for o in CountOutput]) or [TAU_OUTPUT.value]
        if method is CountMethod.kane:
            for flag, given, default in (("--base", base, False), ("--outputs", counted, ["tau"]),
                                         ("--route", route, vocabulary.AUTO)):
                if given != default:
                    raise UserError(f"{flag} is for the straight-line program: leave out --counting kane")
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        if method is CountMethod.kane:
            _write(_count_kane(robot, fmt), output)
            return
        from robodyn.identification import base_parameters
        from robodyn.program.targets import count_summary, format_summary

        with delayed_progress(f"building the program for {robot.name}"):
            names = {name: output for output, name in COUNT_NAMES.items()}
            base_model = base_parameters(robot) if base else None
            try:
                summaries = [count_summary(robot, names.get(name, name), route.value, base=base_model)
                             for name in counted]
            except ValueError as exc:
                raise _refusal(exc) from None
        if fmt is CountFormat.json:
            _write(json.dumps(summaries[0] if len(summaries) == 1 else summaries, indent=2), output)
        else:
            _write("\n\n".join(format_summary(summary) for summary in summaries), output)

    _guarded(body)


def _count_kane(robot: rd.Manipulator, fmt: CountFormat) -> str:
    from robodyn.model.couplings import refuse_coupled
    from robodyn.program import opcount

    refuse_coupled(robot, "Kane's operation count (Angeles, Ma and Rojas)", "use --counting program")
    measured = opcount.count_operations(robot)
    rows = opcount.comparison_table(robot)
    if fmt is CountFormat.json:
        data = {
            "robot": robot.name,
            "method": "kane",
            "multiplications": measured.multiplications,
            "additions": measured.additions,
            "by_stage": {k: list(v) for k, v in measured.by_stage.items()},
            "general_geometry_formula": {"ours": "105n - 110, 90n - 106", "paper": "105n - 109, 90n - 105"},
            "table1": [row.__dict__ for row in rows],
        }
        return json.dumps(data, indent=2)
    return "\n".join([
        f"Kane's algorithm on {robot.name} ({robot.n} joints): {measured.multiplications} multiplications, "
        f"{measured.additions} additions (this geometry's 0, 1, -1 folded; constants off line)",
        opcount.format_table(rows),
        opcount.stage_table(6),
        opcount.EXPLANATION,
    ])


@app.command("simplify-model")
def simplify_model(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    trajectory: Annotated[
        str,
        typer.Option("--trajectory", "-t", help=TRAJECTORY_HELP),
    ] = "angeles1",
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the plots and the report.")] = Path(
        "robodyn-out/simplified"
    ),
    threshold: Annotated[float, typer.Option(help="A part is negligible below this fraction of the other.")] = 0.1,
    param: Annotated[list[str] | None, typer.Option("--param", help="NAME=VALUE for a symbolic parameter.")] = None,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Fu's empirical simplified model: classify every D_ij and h_i along a trajectory, plot them,
    and report the simplified model's worst torque error."""
    from robodyn.analysis.simplified import simplify_model as run_simplify
    from robodyn.analysis.simplified import write_outputs

    def body() -> None:
        _check_output_directory(output)
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        params = _parse_params(param or [], robot)
        if not 0 <= threshold < 1:
            raise UserError(f"--threshold must be in [0, 1), got {threshold}")
        with delayed_progress(f"simplifying {robot.name}"):
            result = run_simplify(robot, trajectory, threshold=threshold, params=params)
        out.print(result.table(), markup=False)
        _write_set(output, lambda: write_outputs(result, output))

    _guarded(body)


@app.command()
def torques(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    trajectory: Annotated[
        str,
        typer.Option("--trajectory", "-t", help=TRAJECTORY_HELP),
    ] = "angeles1",
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the torque/force plot (PNG) here.")] = None,
    csv_out: Annotated[Path | None, typer.Option("--csv", help="Write t, tau1.. (f_i: forces) as CSV here.")] = None,
    joint_plot: Annotated[
        Path | None, typer.Option("--joint-plot", help="Write the joint trajectory plot (PNG) here.")
    ] = None,
    joint_csv: Annotated[
        Path | None, typer.Option("--joint-csv", help="Write the joint trajectory t, q.., qd.., qdd.. as CSV here.")
    ] = None,
    samples: Annotated[int, typer.Option(help="Samples of a built-in trajectory.")] = 101,
    param: Annotated[list[str] | None, typer.Option("--param", help="NAME=VALUE for a symbolic parameter.")] = None,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Joint torques and forces along a trajectory (Angeles, Ma and Rojas' example 1 and fig. 5):
    print the peak per joint, optionally write a CSV and a PNG."""
    from robodyn.analysis.torques import torque_history

    def body() -> None:
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        params = _parse_params(param or [], robot)
        if samples < 3:
            raise UserError(f"--samples must be at least 3, got {samples}")
        outputs = (("--plot", plot), ("--csv", csv_out), ("--joint-plot", joint_plot), ("--joint-csv", joint_csv))
        for option, path in outputs:
            _check_directory(option, path)
        with delayed_progress(f"torques of {robot.name}"):
            history = torque_history(robot, trajectory, params, samples=samples)
        out.print(history.summary(), markup=False)
        traj = history.trajectory
        writers = ((csv_out, history.write_csv), (plot, history.plot), (joint_csv, traj.to_csv),
                   (joint_plot, lambda path: _plot_joints(traj, robot, path)))
        _write_each(writers)

    _guarded(body)


def _check_directory(option: str, path: Path | None) -> None:
    """Refuse, before any work, an output file whose directory is missing or that names a directory;
    a plot (an option ending in ``plot``) must also have an image suffix that matplotlib writes."""
    from robodyn.model.files import path_exists

    if path is None:
        return

    parent = path.parent if str(path.parent) else Path(".")
    if not (path_exists(parent, f"{option} {path}") and parent.is_dir()):
        raise UserError(f"{option} {_path(path)}: directory {_path(path.parent)} does not exist")
    if path_exists(path, f"{option} {path}") and path.is_dir():
        raise UserError(f"{option} {_path(path)}: is a directory, not a file")
    if option.endswith("plot"):
        from robodyn.analysis.plots import IMAGE_FORMATS

        if path.suffix.lower().lstrip(".") not in IMAGE_FORMATS:
            raise UserError(f"{option} {_path(path)}: unknown image format {_path(path.suffix)!r}; use one of "
                            f"{', '.join('.' + f for f in IMAGE_FORMATS)}")


def _plot_joints(trajectory: Any, robot: rd.Manipulator, path: Path) -> None:
    from robodyn.analysis.ik import plot_joint_trajectory

    plot_joint_trajectory(trajectory, robot, path)


def _parse_vector(option: str, text: str | None, n: int, per: str = "one per joint") -> list[float] | None:
    """``--q0 0.1,0.2,...``: n numbers separated by commas or spaces (None if not given); ``per`` says what they
    are in a refusal."""
    if text is None:
        return None
    items = [x for x in text.replace(",", " ").split() if x]
    try:
        values = [float(x) for x in items]
    except ValueError:
        raise UserError(f"{option} {text!r}: expected {n} numbers separated by commas") from None
    if len(values) != n:
        raise UserError(f"{option} {text!r}: expected {n} numbers ({per}), got {len(values)}")
    return values


def _parse_q(text: str | None, robot: rd.Manipulator) -> list[float] | None:
    """``--q0``: the robot's ``nq`` coordinates (a floating base's 7 and a spherical joint's 4 where it has them;
    its velocities and torques stay ``nv``)."""
    per = "one per joint" if robot.nq == robot.nv else ("the robot's nq coordinates: a floating base's position "
                                                        "and unit quaternion x, y, z, w, 4 per spherical joint")
    return _parse_vector("--q0", text, robot.nq, per)


class TorqueLaw(StrEnum):
    zero = "zero"
    gravity = "gravity"


#: ``simulate --integrator``: solve_ivp's methods (robodyn.analysis.simulation.METHODS, tested equal; the module
#: imports scipy, which ``robodyn --help`` does not wait for).
Integrator = StrEnum("Integrator", {m: m for m in ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")})  # type: ignore[misc]
RK45 = Integrator("RK45")


class Engine(StrEnum):
    lambdify = "lambdify"
    numpy = "numpy"
    compiled = "compiled"


@app.command()
def simulate(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    t_end: Annotated[float, typer.Option("--t-end", help="Simulated time (s).")] = 5.0,
    torque: Annotated[TorqueLaw, typer.Option(help="zero: free motion; gravity: tau = G(q) holds the arm.")] = (
        TorqueLaw.zero
    ),
    q0: Annotated[str | None, typer.Option("--q0", help="Initial joint values, comma-separated (rad, m).")] = None,
    qd0: Annotated[str | None, typer.Option("--qd0", help="Initial joint rates, comma-separated.")] = None,
    integrator: Annotated[Integrator, typer.Option("--integrator", help="solve_ivp's method.")] = RK45,
    old_method: Annotated[str | None, typer.Option("--method", hidden=True)] = None,
    rtol: Annotated[float, typer.Option(help="Relative tolerance of the integrator.")] = 1e-8,
    atol: Annotated[float, typer.Option(help="Absolute tolerance of the integrator.")] = 1e-10,
    samples: Annotated[int, typer.Option(help="Output samples.")] = 501,
    engine: Annotated[Engine, typer.Option(help="Forward-dynamics engine.")] = Engine.lambdify,
    max_evaluations: Annotated[int | None, typer.Option(
        "--max-evaluations", help="Give up after this many evaluations of the dynamics (default: a bound that "
        "stops a runaway integration within about a minute).")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the motion and energy plot (PNG) here.")] = None,
    csv_out: Annotated[Path | None, typer.Option("--csv", help="Write t, q, qd, qdd, tau, energies (CSV).")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", help="NAME=VALUE for a symbolic parameter.")] = None,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Simulate the arm (forward dynamics integrated by scipy's solve_ivp): print the energy drift and the
    final state, optionally write a plot and a CSV."""
    from robodyn.analysis.simulation import simulate as run_simulation

    def body() -> None:
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        params = _parse_params(param or [], robot)
        if not 0 < t_end < math.inf:
            raise UserError(f"--t-end must be a positive, finite number of seconds, got {t_end}")
        if samples < 2:
            raise UserError(f"--samples must be at least 2, got {samples}")
        for option, path in (("--plot", plot), ("--csv", csv_out)):
            _check_directory(option, path)
        start = _parse_q(q0, robot)
        rates = _parse_vector("--qd0", qd0, robot.nv)
        limit: dict[str, Any] = {} if max_evaluations is None else {"max_evaluations": max_evaluations}
        method = integrator.value
        if old_method is not None:
            _deprecated("simulate --method", "--integrator", "--method names the formulation in derive and report")
            method = old_method
        with delayed_progress(f"simulating {robot.name}"):
            result = run_simulation(robot, t_end, start, rates, torque.value, method=method, rtol=rtol, atol=atol,
                                    params=params, samples=samples, engine=engine.value, **limit)
        out.print(result.summary(), markup=False)
        _write_each(((csv_out, result.write_csv), (plot, result.plot)))

    _guarded(body)


class LinearOutput(StrEnum):
    state = "state"
    q = "q"
    qd = "qd"
    tool = "tool"


class Discrete(StrEnum):
    zoh = "zoh"
    euler = "euler"


def _symbol_names(robot: rd.Manipulator) -> dict[str, list[str]]:
    """The names of a symbolic linearisation's symbols, for JSON read back by :func:`robodyn.equations.read_dict`."""
    from robodyn.analysis.simulation import tau_symbols
    from robodyn.symbols import joint_symbols

    s = joint_symbols(robot.nv)
    return {"q": [x.name for x in s.q], "qd": [x.name for x in s.qd],
            "inputs": [x.name for x in tau_symbols(robot.nv)], "parameters": [x.name for x in robot.parameters()]}


def _matrix_latex(name: str, matrix: Any, symbolic: bool) -> str:
    """``NAME = \\left[\\begin{matrix} ... \\end{matrix}\\right]``: symbolic entries as sympy writes them, numbers
    to 6 significant digits."""
    import sympy

    entries = sympy.Matrix(matrix) if symbolic else sympy.Matrix(
        [[sympy.Float(float(x), 6) if x else sympy.Integer(0) for x in row] for row in matrix.tolist()])
    subscripted = {"Ad": "A_d", "Bd": "B_d"}.get(name, name)
    return f"{subscripted} = {sympy.latex(entries)}"


def _matrix_text(name: str, matrix: Any) -> str:
    import numpy as np

    if hasattr(matrix, "free_symbols"):
        return f"{name} =\n{matrix}"
    with np.printoptions(precision=6, suppress=False, linewidth=160):
        return f"{name} =\n{np.asarray(matrix)}"


@app.command()
def linearize(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    q0: Annotated[str | None, typer.Option("--q0", help="Operating point q0, comma-separated (default 0).")] = None,
    qd0: Annotated[str | None, typer.Option("--qd0", help="Operating point qd0 (default 0).")] = None,
    tau0: Annotated[str | None, typer.Option("--tau0", help="Operating torque (default G(q0): equilibrium).")] = None,
    measure: Annotated[LinearOutput, typer.Option("--measure", help="What y is (C and D): the state x, q, qd or "
                                                  "the tool's position.")] = LinearOutput.state,
    old_output: Annotated[str | None, typer.Option("--output", hidden=True)] = None,
    dt: Annotated[float | None, typer.Option("--dt", help="Also give the discrete model for this step (s).")] = None,
    discrete: Annotated[Discrete, typer.Option("--discrete", help="Discretisation.")] = Discrete.zoh,
    symbolic: Annotated[bool, typer.Option("--symbolic", help="Symbolic A, B (arms of up to 3 joints).")] = False,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="text, latex or json.")] = Format.text,
    param: Annotated[list[str] | None, typer.Option("--param", help="NAME=VALUE for a symbolic parameter.")] = None,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """The linearised state-space model x = (q, qd), u = tau: A, B, C, D (and the discrete-time Ad, Bd)."""
    from robodyn.analysis.linear import discretize
    from robodyn.analysis.linear import linearize as run_linearize

    def body() -> None:
        if old_output is not None:
            raise UserError(f"linearize --output {old_output!r}: y is chosen with --measure now (state, q, qd or "
                            "tool); --output names a file or directory in every command")
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        params = _parse_params(param or [], robot)
        if dt is not None and not 0 < dt < math.inf:
            raise UserError(f"--dt must be a positive, finite number of seconds, got {dt}")
        point = [_parse_q(q0, robot), _parse_vector("--qd0", qd0, robot.nv), _parse_vector("--tau0", tau0, robot.nv)]
        if symbolic and dt is not None:
            raise UserError("--dt needs a numeric model: leave out --symbolic")
        with delayed_progress(f"linearising {robot.name}"):
            lin = run_linearize(robot, *point, output=measure.value, symbolic=symbolic, params=params)
            disc = discretize(lin, dt=dt, method=discrete.value) if dt is not None else None
        matrices = {"A": lin.A, "B": lin.B, "C": lin.C, "D": lin.D}
        if disc is not None:
            matrices.update({"Ad": disc.Ad, "Bd": disc.Bd})
        if fmt is Format.json:
            from robodyn.model.expr import expression_text

            def plain(m: Any) -> Any:
                return [[expression_text(x) for x in row] for row in m.tolist()] if symbolic else m.tolist()

            data = {"robot": robot.name, "output": lin.output, "dt": dt,
                    "discretisation": discrete.value if dt is not None else None,
                    **(_symbol_names(robot) if symbolic else {}),
                    **{k: plain(v) for k, v in matrices.items()}}
            out.print(json.dumps(data, indent=2), markup=False)
            return
        if fmt is Format.latex:
            out.print(f"% {robot.name}: x = (q, qd), u = tau, y = {lin.output}", markup=False)
            for name, matrix in matrices.items():
                out.print(_matrix_latex(name, matrix, symbolic), markup=False)
            return
        out.print(f"{robot.name}: x = (q, qd), u = tau, y = {lin.output}", markup=False)
        for name, matrix in matrices.items():
            out.print(_matrix_text(name, matrix), markup=False)

    _guarded(body)


@app.command()
def report(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path("report.html"),
    method: Annotated[Method, typer.Option("--method", "-m", help="Formulation for the equations.")] = NEWTON_EULER,
    cross_check: Annotated[bool, typer.Option("--check/--no-check", help="Include the cross-check table.")] = True,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Include simulation and torque plots.")] = True,
    param: Annotated[list[str] | None, typer.Option("--param", help="NAME=VALUE for the plots.")] = None,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Write one self-contained HTML page: DH and inertia tables, the equations (MathML, rendered offline),
    operation counts, the cross-check of the formulations and plots."""
    from robodyn.report import page as reporting

    def body() -> None:
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        params = _parse_params(param or [], robot)
        _check_directory("--output", output)
        with delayed_progress(f"report on {robot.name}") as step:
            page = reporting.build(robot, params=params, method=method.value, cross_check=cross_check, plots=plots,
                                   progress=step)
        _write(page, output)

    _guarded(body)


def _parse_params(items: list[str], robot: rd.Manipulator) -> dict[str, float]:
    """``--param NAME=VALUE`` options: each NAME one of ``robot``'s parameters, each VALUE a finite number
    (:mod:`robodyn.model.params`; its one-line error is prefixed with the option)."""
    from robodyn.model.params import bind_parameters

    params: dict[str, object] = {}
    for item in items:
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name:
            raise UserError(f"--param {item!r}: expected NAME=VALUE with a number")
        if name in params:
            raise UserError(f"--param {item!r}: {name} is given twice")
        params[name] = value
    try:
        return bind_parameters(robot, params, {})
    except ModelError as exc:
        raise UserError(f"--param: {exc.problem}") from None


#: ``codegen --lang``: the languages of the code generator.
Language = StrEnum("Language", {lang: lang for lang in vocabulary.LANGUAGES})  # type: ignore[misc]
C_LANGUAGE = Language("c")


@app.command()
def codegen(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)],
    lang: Annotated[Language, typer.Option("--lang", "-l", help="Language of the generated code.")] = C_LANGUAGE,
    outputs: Annotated[
        list[str] | None, typer.Option(
            "--outputs", "-O", metavar="NAME[,NAME...]",
            help=f"Routines (repeat the option, or comma-separated): {', '.join(vocabulary.KEYS)} "
            "(dtau: dtau/dq, dtau/dqd; dqdd: dqdd/dq, dqdd/dqd, M^-1); default "
            f"{', '.join(vocabulary.DEFAULT_KEYS)}.")
    ] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the generated files.")] = Path(
        "robodyn-out/codegen"
    ),
    base: Annotated[bool, typer.Option("--base", help="The model in base parameters (identification): the "
                                       "parameter vector is the base parameters, for identified values.")] = False,
    strict: StrictOption = False,
    lock: LockOption = None,
    mimic: MimicOption = Mimic.couple,
    actuated: ActuatedOption = None,
    floating: FloatingOption = None,
    root: RootOption = None,
    friction: FrictionOption = None,
    frictionloss: FrictionlossOption = None,
    fluid: FluidOption = None,
    xacro_arg: XacroArgOption = None,
    package_path: PackagePathOption = None,
) -> None:
    """Generate C99, Fortran, NumPy or JAX code: a constants routine, then inverse dynamics, M, h, the
    bias, G and forward dynamics, each with its operation count (the documentation's guide: "Efficient equations
    and generated code")."""
    from robodyn import codegen as generator
    from robodyn.model.files import write_all

    def body() -> None:
        keys = _listed("--outputs", outputs, vocabulary.KEYS) or list(vocabulary.DEFAULT_KEYS)
        _check_output_directory(output)
        robot = _load(model, strict, lock, mimic, floating, actuated, root, friction, frictionloss, fluid, xacro_arg,
                      package_path)
        with delayed_progress(f"generating {lang.value} for {robot.name}"):
            try:
                files = generator.generate(robot, lang.value, keys, base=base)
            except ValueError as exc:
                raise _refusal(exc, robot.name) from None
        _write_set(output, lambda: write_all(output, files))

    _guarded(body)


_DEMO_OUTPUTS = {"tau": "inverse dynamics tau", "elements": "all distinct M, c, b, g"}


@app.command()
def demo(
    model: Annotated[str, typer.Argument(help=MODEL_HELP)] = "puma560_symbolic",
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the results.")] = Path("robodyn-out"),
) -> None:
    """The main job: derive a robot by every method, check they agree, build the cheapest programs with
    their operation counts, write the equations and the generated C (compiled and checked where a C
    compiler is found)."""
    from robodyn.report.demo import run as run_demo

    def body() -> int:
        start = time.perf_counter()
        with delayed_progress("demo") as step:
            summary = run_demo(model, output, progress=step)
        out.print(f"[bold]{_shown(summary.robot)}[/bold]: {summary.n} joints, {summary.parameters} symbolic parameters")
        table = Table(title="Symbolic derivation: seconds, and terms in expanded form")
        table.add_column("method", no_wrap=True)
        for header in ("derive s", "expand s", "tau", "M", "h", "G", "ops tau"):
            table.add_column(header, justify="right", no_wrap=True)
        for m in summary.methods:
            table.add_row(m.method, f"{m.derive_seconds:.3f}", f"{m.canonical_seconds:.2f}",
                          *(str(m.terms[p]) for p in ("tau", "M", "h", "G")), str(m.operations))
        out.print(table)
        out.print(f"M is {summary.n}x{summary.n}, h and G are {summary.n}x1.")
        verdict = "agree" if summary.agree else "[red]DISAGREE[/red]"
        out.print(f"methods {verdict} ({summary.mode} comparison of tau, M, h, G, {summary.check_seconds:.1f} s)")
        out.print("ops tau: operations of the expanded torques, before common subexpressions are shared")
        programs = Table(title="The cheapest straight-line programs: operations per evaluation (constants apart)")
        for header in ("output", "mult", "add", "sin/cos", "route", "build s"):
            programs.add_column(header, justify="left" if header in ("output", "route") else "right", no_wrap=True)
        for p in summary.programs:
            programs.add_row(_DEMO_OUTPUTS.get(p.output, p.output), str(p.multiplications), str(p.additions),
                             str(p.trig), p.route, f"{p.seconds:.1f}")
        out.print(programs)
        for p in summary.programs:
            for f in p.published:
                out.print(f"  {_DEMO_OUTPUTS.get(p.output, p.output)}, {f['source']}: "
                          f"{f['multiplications']} mult, {f['additions']} add", markup=False)
        for path in [*summary.outputs, *summary.code.files]:
            out.print(f"wrote {_path(path)}", markup=False)
        if summary.code.compiled:
            out.print(f"compiled the C and checked it against robodyn.numeric at 100 random states: max relative "
                      f"difference {summary.code.max_relative_difference:.1e}")
        else:
            out.print(f"the C was not compiled: {summary.code.note}", markup=False)
        out.print(f"total {time.perf_counter() - start:.1f} s")
        return 0 if summary.ok else 1

    _guarded(body)


def usage_message(message: str) -> str:
    """click's message of a usage error, in one line, without the ``Value error, `` that pydantic (typer's
    coercion of enum choices) puts before the reason."""
    return " ".join(message.replace("Value error, ", "").split())


def main() -> None:
    """Entry point: usage errors (unknown option, bad choice) are one ``error:`` line and exit 2; Ctrl-C at any
    moment is the one line "interrupted" and exit 130.

    Typer bundles its own click; its exceptions are recognised by their interface (``exit_code``,
    ``format_message``, ``ctx``) rather than imported from a private module.
    """
    with _interruptible():
        try:
            _main()
        except KeyboardInterrupt:  # outside a command's own handling (option parsing, imports)
            raise SystemExit(_interrupted().exit_code) from None
        except SystemExit:
            if _Interrupt.seen:  # caught inside typer (which exits 130 without a word) or inside a library
                raise SystemExit(_interrupted().exit_code) from None
            raise


def _main() -> None:
    _robust_streams()
    if sys.argv[1:] == ["--version"]:  # here, not a typer option: parsing one costs ``robodyn list`` 60 ms
        out.print(f"robodyn {__version__}", markup=False)
        raise SystemExit(0)
    if sys.argv[1:] == ["list"]:  # nothing to parse: typer would import pydantic to coerce the --help flag (50 ms)
        list_robots()
        raise SystemExit(0)
    try:
        code = app(standalone_mode=False)
    except Exception as exc:
        name = type(exc).__name__
        ctx = getattr(exc, "ctx", None)
        if name == "NoArgsIsHelpError" and ctx is not None:
            out.print(ctx.get_help(), markup=False)
            raise SystemExit(0) from None
        if getattr(exc, "exit_code", None) == 2 and hasattr(exc, "format_message"):
            where = f"{ctx.command_path}: " if ctx is not None else ""
            err.print(f"error: {bounded(where + usage_message(exc.format_message()))}", markup=False)
            raise SystemExit(2) from None
        if name == "Abort":
            raise SystemExit(_interrupted().exit_code) from None
        raise
    raise SystemExit(code if isinstance(code, int) else 0)


def _listed(option: str, items: list[str] | None, allowed: Iterable[str]) -> list[str] | None:
    """Repeated or comma-separated choices (``-O tau -O M``, ``-O tau,M``), each one of ``allowed``; None if none."""
    if not items:
        return None
    chosen = [part.strip() for item in items for part in item.split(",") if part.strip()]
    known = list(allowed)
    unknown = [item for item in chosen if item not in known]
    if unknown or not chosen:
        raise UserError(f"{option} {unknown[0] if unknown else ''!r}: choose from {', '.join(known)}")
    return chosen


@app.command()
def batch(
    models: Annotated[list[str], typer.Argument(help="Built-in robot names, model files or URDFs: one task each.")],
    outputs: Annotated[list[str] | None, typer.Option(
        "--outputs", "-O", metavar="NAME[,NAME...]",
        help=f"Routines (repeat the option, or comma-separated): {', '.join(vocabulary.KEYS)}; "
        f"default {', '.join(vocabulary.DEFAULT_KEYS)}.")] = None,
    lang: Annotated[list[str] | None, typer.Option(
        "--lang", "-l", help=f"Languages (repeat, or comma-separated): {', '.join(vocabulary.LANGUAGES)}, cuda; "
        f"default {', '.join(vocabulary.LANGUAGES)}.")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="The catalogue's directory: one folder per robot, "
                                         "and catalogue.json.")] = Path("robodyn-out/catalogue"),
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", help="A running Dask scheduler's address (tcp://HOST:8786); default: an embedded "
        "LocalCluster sized to this machine.")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, help="Worker processes of the embedded LocalCluster (default: one per core).")] = None,
) -> None:
    """Generate the code of many robots on Dask, one robot per task (the dask extra): every language's files and a
    summary table. Resumable: an entry already there for the same request is not built again; a robot that fails is
    reported by name and the rest go on (exit status 1 if any failed)."""

    def body() -> int:
        try:
            from robodyn.distributed.catalogue import CATALOGUE_LANGUAGES, catalogue
        except ImportError:
            raise UserError("robodyn batch needs Dask: pip install 'robodyn[dask]'") from None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        keys = _listed("--outputs", outputs, vocabulary.KEYS)
        languages = _listed("--lang", lang, CATALOGUE_LANGUAGES) or list(vocabulary.LANGUAGES)
        _check_output_directory(output)
        # Ctrl-C tears the cluster down under its event loop's feet: the futures it leaves are logged by asyncio as
        # tracebacks ("Future exception was never retrieved") the user can do nothing about
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
            task = bar.add_task("batch", total=len(models))

            def step(entry: Any, done: int, total: int) -> None:
                bar.update(task, completed=done, description=_shown(f"{entry.model}: {entry.status}"))

            try:
                report = catalogue(models, keys, languages, output, scheduler=scheduler, workers=workers,
                                   progress=step)
            except ValueError as exc:  # a malformed --scheduler address, an unknown scheme
                raise _refusal(exc) from None
        table = Table(title=f"Catalogue {_shown(_path(report.directory))}")
        for header in ("robot", "outputs", "operations (mult/add/sin-cos)", "languages", "status"):
            table.add_column(header, overflow="fold")
        for row in report.rows():
            table.add_row(*(_shown(cell) for cell in row))
        out.print(table)
        out.print(f"{report.built} built, {report.skipped} already there, {report.failed} failed", markup=False)
        for entry in report.entries:
            if entry.status == "failed":
                where = "" if entry.model in entry.message else f"{_path(entry.model)}: "
                err.print(bounded(f"error: {where}{entry.message}"), markup=False)
        return 1 if report.failed else 0

    _guarded(body)


if __name__ == "__main__":  # pragma: no cover
    main()
