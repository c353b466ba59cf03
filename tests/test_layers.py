"""The import graph of robodyn has layers and no cycles (issue 13, item 4: "No back edges").

Every module of ``src/robodyn`` is parsed with :mod:`ast`; every import counts, at module level and inside
functions (an import under ``if TYPE_CHECKING:`` never runs and is left out). ``from robodyn.x import name``
is an edge to ``robodyn.x.name`` where that is a module, else to ``robodyn.x``; the implicit import of parent
packages is not an edge (``robodyn/__init__`` imports nearly everything, and every submodule would otherwise
sit in one cycle with it).

The layers, lowest first (shared/ARCHITECTURE.md's data path, as the imports really run: the Equations type is
what formulations build, so it sits below them; the numeric engine needs only the model; identification (the
regressor and base parameters) and the straight-line program both run the recursions, formulations and numeric
engine, and neither imports the other: the program builds in base parameters handed to it, and Khalil's
parameter layout both use is in ``recursions``):

0. foundations: ``_version``, ``errors``, ``symbols``, ``algebra``, ``_fastcall`` (a C extension,
   ``_fastcall.c``: it imports nothing)
1. ``model/`` (Manipulator: data and conversions only; its tables, which its LaTeX repr uses; the model-file
   writer ``Manipulator.save`` uses) and ``library`` (the built-in model files)
2. written once over the model: ``recursions/`` (Newton-Euler, composite bodies, Kane's three stages, the
   articulated-body algorithm, Khalil's parameter layout, over one scalar interface) and ``equations`` (the result
   type)
3. ``formulations/`` (symbolic, with the symbolic kinematics) and ``numeric/`` (NumPy batches): both run
   ``recursions``, neither imports the other
4. ``identification/`` (regressor, base parameters) and ``program/`` (straight-line programs, routes, counts):
   neither imports the other
5. ``codegen/`` (one emitter per language) and ``runtime/`` (compile, the compiled object, toolchain, cache,
   backends)
6. ``analysis/`` (simulation < linearisation, torques, the simplified model, check, IK, trajectories, the toolbox
   names, plots) and ``formats/`` (every reader and writer of a robot)
7. the package face: ``robodyn`` (``__init__``) and ``_moved`` (the old module names, for one release)
8. over the face: ``report/`` (the report page, the demo) and ``distributed/`` (sweeps, catalogues and
   identification on Dask: the optional ``dask`` extra)
9. ``cli``, which runs ``distributed`` (``robodyn batch``) and ``report``
10. ``__main__`` (``python -m robodyn``), which runs the command line

A module may import from its own layer or any lower one, never from a higher one; within a layer the graph is
still acyclic (checked below over all modules).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

#: Module (or package prefix) -> layer; the longest matching prefix wins. See the module docstring.
LAYERS: dict[str, int] = {
    "robodyn._version": 0, "robodyn._fastcall": 0,
    "robodyn.errors": 0, "robodyn.symbols": 0, "robodyn.algebra": 0,
    "robodyn.model": 1, "robodyn.library": 1,
    "robodyn.recursions": 2, "robodyn.equations": 2,
    "robodyn.formulations": 3, "robodyn.numeric": 3,
    "robodyn.identification": 4, "robodyn.program": 4,
    "robodyn.codegen": 5, "robodyn.runtime": 5,
    "robodyn.analysis": 6, "robodyn.formats": 6,
    "robodyn": 7, "robodyn._moved": 7,
    "robodyn.report": 8, "robodyn.distributed": 8, "robodyn.cli": 9, "robodyn.__main__": 10,
}

#: Groups of one layer that must not import each other in either direction.
APART = [("robodyn.formulations", "robodyn.numeric"), ("robodyn.identification", "robodyn.program")]

#: Third-party packages that may be imported inside a function: optional dependencies (pinocchio, lxml,
#: matplotlib, jax, casadi, cupy, mujoco, xacro, Dask's distributed), and scipy's submodules and rich's progress bars
#: (robodyn.program.progress.on_terminal: 70 ms, drawn only on a terminal during a long build), which take long to
#: import and serve one function each.
LAZY_THIRD_PARTY = {"pinocchio", "lxml", "matplotlib", "jax", "casadi", "cupy", "scipy", "mujoco", "xacro", "rich",
                    "distributed"}

#: Modules allowed to import robodyn modules inside functions, and why. Nothing imports ``robodyn.cli`` (it is
#: the top of the graph), so its imports on use cannot dodge a cycle: they load a subcommand's modules (scipy for
#: simulate and linearize, matplotlib for plots) only when it runs, which keeps ``robodyn --help`` quick.
LAZY_ROBODYN_ALLOWED = {"robodyn.__main__": "Ctrl-C while the command line is being imported is caught there: the same "
                                            "one line and exit status 130 as later",
                        "robodyn.cli": "the command line loads each subcommand's modules (robodyn's, NumPy, rich's "
                                       "progress bars) when it runs, so that --help and list start fast",
                        "robodyn.formats.load": "a robot with implicit loops is checked to assemble by the numeric "
                                                "engine when read; loading any other robot imports none of it "
                                                "(tests/formats/test_load_imports.py)"}

#: The one lazy import of a higher layer, (module, imported module) -> why. It is made inside a function only (checked
#: below), and left out of the graph the layer and cycle tests read; every other edge is held to them.
LAZY_UPWARD_ALLOWED = {
    ("robodyn.numeric.hotpath", "robodyn.runtime.entry"):
        "the numeric engine's hot path (layer 3) hands hot one-state calls to the compiled routines of runtime "
        "(layer 5), which builds on the engine; it imports runtime's hot_routines when its background build starts, "
        "so that a plain `import robodyn` process engages it (a registration by runtime at import never ran there: "
        "nothing imports runtime before rd.compile)",
}


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted((SRC / "robodyn").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, package)
    for path in sorted((SRC / "robodyn").rglob("*.c")):  # C extensions (built by setuptools): they import nothing
        out[".".join(path.relative_to(SRC).with_suffix("").parts)] = (path, False)
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imports(module: str) -> list[tuple[str, bool, int]]:
    """(imported name, inside a function, line) for every import of ``module`` (relative ones resolved)."""
    path, package = MODULES[module]
    if path.suffix == ".c":
        return []
    base_package = module if package else module.rpartition(".")[0]
    found: list[tuple[str, bool, int]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                found.extend((alias.name, in_function, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    anchor = base_package
                    for _ in range(child.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    source = anchor + ("." + child.module if child.module else "")
                else:
                    source = child.module or ""
                for alias in child.names:
                    full = f"{source}.{alias.name}"
                    found.append((full if full in MODULES else source, in_function, child.lineno))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


IMPORTS = {module: _imports(module) for module in MODULES}


def _graph() -> dict[str, set[str]]:
    """module -> the robodyn modules it imports, less the lazy edges of :data:`LAZY_UPWARD_ALLOWED`."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module, imports in IMPORTS.items():
        graph[module]  # every module is a node
        for name, in_function, _ in imports:
            if name == "robodyn" or name.startswith("robodyn."):
                target = _resolve(name)
                if target is not None and target != module and not (
                        in_function and (module, target) in LAZY_UPWARD_ALLOWED):
                    graph[module].add(target)
    return graph


def _layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def test_every_module_has_a_layer() -> None:
    assert len(MODULES) > 50
    for module in MODULES:
        assert any(module == p or module.startswith(p + ".") for p in LAYERS), module


def test_no_module_imports_a_higher_layer() -> None:
    """(a), for every module (model, formulations and program included): imports go down or sideways."""
    graph = _graph()
    upward = [f"{m} (layer {_layer(m)}) imports {t} (layer {_layer(t)})"
              for m in sorted(graph) for t in sorted(graph[m]) if _layer(t) > _layer(m)]
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize(("first", "second"), APART)
def test_siblings_stay_apart(first: str, second: str) -> None:
    graph = _graph()

    def inside(module: str, prefix: str) -> bool:
        return module == prefix or module.startswith(prefix + ".")

    crossing = [f"{m} imports {t}" for m in graph for t in graph[m]
                if (inside(m, first) and inside(t, second)) or (inside(m, second) and inside(t, first))]
    assert not crossing, "\n".join(sorted(crossing))


def test_the_import_graph_has_no_cycle() -> None:
    """(b): every strongly connected component is a single module, in-function imports included."""
    cycles = [c for c in _strongly_connected(_graph()) if len(c) > 1]
    assert not cycles, cycles


def test_named_back_edges_are_gone() -> None:
    """The edges issue 13 named, one by one (each would also fail the tests above)."""
    graph = _graph()

    def imports(module: str, prefix: str) -> bool:
        return any(t == prefix or t.startswith(prefix + ".") for t in graph[module])

    for target in ("robodyn.analysis", "robodyn.formats", "robodyn.numeric"):
        assert not imports("robodyn.model.manipulator", target)
    for module in [m for m in MODULES if m.startswith("robodyn.codegen")]:
        assert "robodyn" not in graph[module], module  # the version comes from robodyn._version
    for module in [m for m in MODULES if m.startswith("robodyn.numeric")]:
        assert not imports(module, "robodyn.formulations"), module
    assert not imports("robodyn.analysis.simulation", "robodyn.analysis.linear")


def test_in_function_imports_only_for_optional_or_slow_dependencies() -> None:
    """(c): a lazy import of a robodyn module would be a way to dodge a cycle; only the documented
    exceptions may have one. Third-party packages imported in a function must be on the whitelist."""
    problems = []
    for module, imports in sorted(IMPORTS.items()):
        for name, in_function, line in imports:
            if not in_function:
                continue
            top = name.split(".")[0]
            if top == "robodyn":
                if module not in LAZY_ROBODYN_ALLOWED and (module, _resolve(name)) not in LAZY_UPWARD_ALLOWED:
                    problems.append(f"{module}:{line} imports {name} inside a function")
            elif (top not in sys.stdlib_module_names and top not in LAZY_THIRD_PARTY
                  and module not in LAZY_ROBODYN_ALLOWED):
                problems.append(f"{module}:{line} imports {name} (third party, not optional) inside a function")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("module", "target"), sorted(LAZY_UPWARD_ALLOWED))
def test_the_allowed_upward_imports_are_lazy_upward_and_still_there(module: str, target: str) -> None:
    """Each listed exception is an import of a higher layer, made inside a function only (never at module level),
    and still in the source (a stale entry would allow a new edge unseen)."""
    assert _layer(target) > _layer(module), (module, target)
    found = [in_function for name, in_function, _ in IMPORTS[module] if _resolve(name) == target]
    assert found and all(found), f"{module} imports {target} {'at module level' if found else 'nowhere'}"
    assert LAZY_UPWARD_ALLOWED[(module, target)]  # (with its reason)


#: The words of a robot's variety (its base, joint types, closure): a door that branches on one of them to pick its
#: engine classifies the robot again, which robodyn.model.structure does once.
VARIETY = {"floating", "multi_dof", "spherical", "planar", "implicit", "couplings", "coupling", "bars", "loops",
           "passive"}
#: Each door's public functions and its one dispatch table (issue 44: one table per door, keyed by
#: robodyn.model.structure's kind).
DOORS = {"robodyn.numeric.api": (("inverse_dynamics", "bias_forces", "coriolis", "gravity", "mass_matrix",
                                  "forward_dynamics", "friction", "tip_load"), "ENGINES"),
         "robodyn.program.choice": (("build",), "BUILDERS"),
         "robodyn.analysis.simulation": (("dynamics",), "SIMULATORS")}


def _names(node: ast.AST) -> set[str]:
    return ({n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            | {n.id for n in ast.walk(node) if isinstance(n, ast.Name)})


@pytest.mark.parametrize("door", sorted(DOORS))
def test_each_door_dispatches_through_one_table(door: str) -> None:
    """The door's public functions neither branch on the robot's variety nor catch an exception to find its engine
    (the ladders of FloatingBaseError and ImplicitLoopError are gone): they take it from the one table, a dict
    assigned once at module level, keyed by the structure."""
    functions, table = DOORS[door]
    tree = ast.parse((SRC / (door.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
    defined = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    for name in functions:
        for node in ast.walk(defined[name]):
            assert not isinstance(node, ast.Try), f"{door}.{name} catches an exception (line {node.lineno})"
            if isinstance(node, ast.If | ast.IfExp | ast.While | ast.match_case):
                test = node.pattern if isinstance(node, ast.match_case) else node.test
                assert not _names(test) & VARIETY, f"{door}.{name} branches on {_names(test) & VARIETY}"
    tables = [node for node in tree.body if isinstance(node, ast.AnnAssign | ast.Assign)
              and table in _names(node.target if isinstance(node, ast.AnnAssign) else node.targets[0])]
    assert len(tables) == 1 and isinstance(tables[0].value, ast.Dict), f"{door}: one {table} table"
    assert "structure" in _names(tree), f"{door} keys its table by robodyn.model.structure"


def test_no_module_finds_an_engine_by_catching_an_error() -> None:
    caught = []
    for path in sorted((SRC / "robodyn").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                named = _names(node.type) & {"FloatingBaseError", "ImplicitLoopError"}
                caught += [f"{path.relative_to(SRC)}:{node.lineno} catches {name}" for name in named]
    assert not caught, "\n".join(caught)
