"""Robot (and parameter) names that clash with the generated code or its surroundings (issue 28, item 5).

A module name equal to a name the generated Fortran uses (a routine, ``num_joints``, ``c_double``...) made
gfortran reject the module; ``numpy``, ``math`` or ``os`` wrote a ``numpy.py`` that shadowed the real module in
its directory; names sharing their first 40 characters wrote the same files; a parameter ``tau1`` became the
input torque ``tau1`` of the closed-form forward dynamics.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn import codegen, numeric
from robodyn.analysis import simulation
from robodyn.codegen.spec import RESERVED_NAMES, RESERVED_SUFFIX, ModuleSpec, sanitize
from robodyn.program.outputs import CENTROIDAL_OUTPUTS
from tests.conftest import load_quiet

LIBRARY = Path(rd.__file__).parent / "library"
#: Names of identifiers that the generated Fortran, C or Python itself uses, or that a module must not shadow.
HOSTILE = ["constants", "inverse_dynamics", "num_joints", "c_double", "iso_c_binding", "gravity_batch",
           "forward_dynamics_derivatives", "n_states", "params", "sin", "double", "math", "stddef", "class", "print",
           "M", "q1", "Tau3", "k0", "numpy", "os", "jax", "scipy", "sympy", "robodyn", "json", "typing"]


def robot_named(tmp_path: Path, name: str, body: str | None = None) -> rd.Manipulator:
    """The double pendulum under another name (a model file: the name is the robot's own)."""
    text = (LIBRARY / "double_pendulum.yaml").read_text() if body is None else body
    lines = [f"name: {name}" if line.startswith("name:") else line for line in text.splitlines()]
    path = tmp_path / "model.yaml"
    path.write_text("\n".join(lines) + "\n")
    return rd.load(path)


@pytest.fixture(scope="module")
def spec() -> ModuleSpec:
    """Every output a fixed base has (the centroidal ones are a floating base's: their names are checked apart)."""
    return codegen.module_spec(load_quiet("double_pendulum"),
                               [key for key in codegen.KEYS if key not in CENTROIDAL_OUTPUTS])


def test_built_in_names_are_unchanged() -> None:
    """The generated code of the built-in robots keeps its names (and bytes: benchmarks/checksums.py)."""
    for path in LIBRARY.glob("*.yaml"):
        name = path.stem
        assert sanitize(name) == name and sanitize(f"{name}_base") == f"{name}_base"


@pytest.mark.parametrize("name", HOSTILE)
def test_a_reserved_name_gets_a_suffix(name: str) -> None:
    module = sanitize(name)
    assert module == f"{name.lower()}{RESERVED_SUFFIX}"
    assert module not in RESERVED_NAMES and sanitize(module) == module


def test_the_reserved_names_cover_the_generated_code(spec: ModuleSpec) -> None:
    """Every routine, batch twin, argument and module-level name of the generated code is reserved."""
    names = {r.name for r in spec.routines} | {f"{r.name}_batch" for r in spec.routines}
    names |= {a.name.lower() for r in spec.routines for a in r.arrays}
    names |= {"num_joints", "num_parameters", "num_constants", "iso_c_binding", "c_double", "c_size_t", "n_states"}
    assert names <= RESERVED_NAMES
    centroidal = [codegen.KEYS[key] for key in CENTROIDAL_OUTPUTS]  # a floating base's routines
    assert {k.name for k in centroidal} | {f"{k.name}_batch" for k in centroidal} <= RESERVED_NAMES
    assert {k.output for k in centroidal} <= RESERVED_NAMES
    assert {"numpy", "jax", "scipy", "sympy", "math", "os", "sys", "double", "int", "sin", "class"} <= RESERVED_NAMES
    assert {name for name in sys.stdlib_module_names if name.islower()} <= RESERVED_NAMES


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="no gfortran")
def test_gfortran_compiles_the_module_of_every_hostile_name(spec: ModuleSpec, tmp_path: Path) -> None:
    for name in HOSTILE:
        renamed = dataclasses.replace(spec, name=sanitize(name))
        (filename, text), = codegen.generate(None, "fortran", spec=renamed).items()
        assert filename == f"{sanitize(name)}.f90"
        work = tmp_path / name
        work.mkdir()
        (work / filename).write_text(text)
        result = subprocess.run(["gfortran", "-c", "-Wall", "-Werror", filename], cwd=work, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, (name, result.stderr)


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="no gfortran")
def test_a_robot_named_constants_compiles_in_fortran(tmp_path: Path) -> None:
    """End to end: the robot's own name, through module_spec."""
    robot = robot_named(tmp_path, "constants")
    (filename, text), = codegen.generate(robot, "fortran", ["G"]).items()
    assert filename == "constants_robot.f90" and "module constants_robot" in text
    (tmp_path / filename).write_text(text)
    result = subprocess.run(["gfortran", "-c", "-Wall", "-Werror", filename], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_a_robot_named_math_compiles_in_c(tmp_path: Path) -> None:
    """``math.h`` beside the source would be included for ``<math.h>`` (with -I.)."""
    robot = robot_named(tmp_path, "math")
    files = codegen.generate(robot, "c", ["G"])
    assert sorted(files) == ["math_robot.c", "math_robot.h"]
    for filename, text in files.items():
        (tmp_path / filename).write_text(text)
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None
    result = subprocess.run([cc, "-std=c99", "-I.", "-c", "math_robot.c"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", ["numpy", "math", "os"])
def test_a_generated_python_module_shadows_no_module(tmp_path: Path, name: str) -> None:
    """The NumPy module of a robot named ``numpy`` is ``numpy_robot.py``: importing it (and numpy, math, os) from
    its directory works."""
    robot = robot_named(tmp_path, name)
    out = tmp_path / "out"
    out.mkdir()
    for language in ("numpy", "jax"):
        (filename, text), = codegen.generate(robot, language, ["G"]).items()
        assert filename == codegen.python_file(f"{name}_robot", language)
        (out / filename).write_text(text)
    module = f"{name}_robot"
    assert module not in sys.stdlib_module_names
    script = (f"import {module}, numpy, math, os; assert numpy.__file__ != {module}.__file__; "
              f"print({module}.gravity({module}.constants([1.0, 0.5, 9.81, 2.0, 1.0]), [[0.3, -0.2]]))")
    result = subprocess.run([sys.executable, "-c", script], cwd=out, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_names_sharing_their_first_40_characters_give_distinct_files(spec: ModuleSpec) -> None:
    head = "a_very_long_robot_name_" + "x" * 17  # 40 characters
    names = [head + "_left_arm", head + "_right_arm", head + "-left-arm", head + "_base", head]
    modules = [sanitize(name) for name in names]
    assert len(set(modules)) == len(names)
    assert modules[-1] == head  # not truncated: unchanged
    for module in modules:
        assert len(module) <= 40 and sanitize(module) == module
        assert module.startswith(head[:31])
    assert sanitize(names[0]) == modules[0]  # stable
    files = [set(codegen.generate(None, "c", spec=dataclasses.replace(spec, name=m))) for m in modules]
    assert all(a.isdisjoint(b) for i, a in enumerate(files) for b in files[i + 1:])


@pytest.mark.parametrize("name", ["", "1abc", "__x__", "x" * 200, "numpy" + "_" * 60 + "z", "Ünïcödé", "q" * 41])
def test_a_sanitised_name_is_its_own_sanitised_name(name: str) -> None:
    module = sanitize(name)
    assert sanitize(module) == module and len(module) <= 40
    assert module[0].isalpha() and module == module.lower()


def test_a_parameter_named_tau1_is_not_the_input_torque(tmp_path: Path) -> None:
    """forward_dynamics_symbolic: the torques are tau_1, tau_2 where the masses are named tau1, tau2."""
    body = (LIBRARY / "double_pendulum.yaml").read_text().replace("m1", "tau1").replace("m2", "tau2")
    robot = robot_named(tmp_path, "taus", body)
    assert {s.name for s in robot.parameters()} == {"L1", "L2", "g", "tau1", "tau2"}
    fd = simulation.forward_dynamics_symbolic(robot)
    assert [t.name for t in fd.tau] == ["tau_1", "tau_2"]
    assert {"tau1", "tau2", "tau_1", "tau_2"} <= {s.name for s in fd.qdd.free_symbols}
    params = {"L1": 1.0, "L2": 0.5, "g": 9.81, "tau1": 2.0, "tau2": 1.0}
    q1, q2, qd1, qd2 = sympy.symbols("q1 q2 qd1 qd2")
    f = sympy.lambdify([q1, q2, qd1, qd2, *fd.tau, *(sympy.Symbol(k) for k in params)], list(fd.qdd))
    q, qd, tau = np.array([0.3, -0.7]), np.array([0.5, 1.1]), np.array([4.0, -2.0])
    expected = numeric.forward_dynamics(robot, q, qd, tau, params=params)
    np.testing.assert_allclose(np.array(f(*q, *qd, *tau, *params.values()), dtype=float), expected, rtol=1e-11)
    assert [t.name for t in simulation.tau_symbols(2)] == ["tau1", "tau2"]  # (unchanged otherwise)
    assert [t.name for t in simulation.tau_symbols(2, {"tau2", "tau_1"})] == ["tau__1", "tau__2"]
