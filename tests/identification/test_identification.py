"""The regressor tau = Y p, the base parameters (Khalil and Kleinfinger's rules) and the grouped links."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy

import robodyn as rd
from robodyn import identification as ident
from robodyn import numeric
from robodyn.algebra import canonical
from robodyn.identification.base import fixed_transform
from robodyn.identification.regressor import symbolic_regressor
from robodyn.model.params import geometry_symbols
from robodyn.recursions import parameters as params_
from robodyn.symbols import joint_symbols
from tests.conftest import load_quiet, random_inertia, random_params, random_robot, without_coulomb, without_loops

# puma560_rtb's asymmetric Coulomb friction: tests/analysis/test_friction.py
LIBRARY = without_coulomb(without_loops(rd.library.names()))


def _binding(robot: rd.Manipulator, seed: int) -> dict[sympy.Symbol, float]:
    values = random_params(robot, np.random.default_rng(seed), 0.5, 1.5)  # physical inertia
    return {s: values[s.name] for s in robot.parameters()}


def _states(n: int, N: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-3, 3, (N, n))


def _tau(robot: rd.Manipulator, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, params: dict) -> np.ndarray:
    """Numeric inverse dynamics without the tip load (which is not linear in any parameter)."""
    return numeric.inverse_dynamics(robot, q, qd, qdd, params=params) - numeric.tip_load(robot, q, params=params)


@pytest.mark.parametrize("name", LIBRARY)
def test_symbolic_regressor_times_p_is_tau_for_every_library_robot(name: str) -> None:
    robot = load_quiet(name)
    binding = _binding(robot, 1)
    Y = symbolic_regressor(robot, tidy=False)
    js = joint_symbols(robot.n)
    args = [se.Symbol(s.name) for s in (*js.all(), *binding)]
    f = se.Lambdify(args, Y)
    p = ident.numeric_values(robot, binding)
    q, qd, qdd = _states(robot.n, 4, 2)
    for k in range(4):
        Yk = np.asarray(f([*q[k], *qd[k], *qdd[k], *binding.values()]), dtype=float).reshape(robot.n, -1)
        tau = _tau(robot, q[k], qd[k], qdd[k], binding)
        assert np.allclose(Yk @ p, tau, rtol=1e-10, atol=1e-10), name


@pytest.mark.parametrize("name", ["puma560_symbolic", "stanford_modified", "two_link_payload"])
def test_regressor_is_exact_for_symbolic_robots(name: str) -> None:
    """Y p - (tau - load) is exactly zero in the canonical form (symbolic lengths, masses, inertias)."""
    robot = load_quiet(name)
    reg = ident.regressor(robot)
    eqs = rd.derive(robot, "newton-euler")
    q = joint_symbols(robot.n).q
    Yp = se.DenseMatrix(reg.Y.tolist()) * se.DenseMatrix(reg.p.tolist())
    tau = eqs.canonical("tau")
    for i in range(robot.n):
        assert canonical(Yp[i, 0] + se.sympify(reg.load[i]) - tau[i, 0], q) == 0
    Y, p = reg
    assert Y.shape == (robot.n, 12 * robot.n) and p.shape == (12 * robot.n, 1)
    assert reg.names[:12] == ("XX1", "XY1", "XZ1", "YY1", "YZ1", "ZZ1", "MX1", "MY1", "MZ1", "M1", "IA1", "FV1")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_numeric_regressor_matches_inverse_dynamics_on_random_arms(seed: int, convention: str) -> None:
    robot = random_robot(seed, 1 + seed % 6, convention)  # damping, armature, payload, tip load
    q, qd, qdd = _states(robot.n, 30, seed)
    Y = ident.numeric_regressor(robot, q, qd, qdd, coulomb=True)
    p = ident.numeric_values(robot, coulomb=True)
    assert Y.shape == (30, robot.n, 13 * robot.n)
    assert np.allclose(Y @ p, _tau(robot, q, qd, qdd, {}), rtol=1e-11, atol=1e-10)
    single = ident.numeric_regressor(robot, q[0], qd[0], qdd[0])
    assert single.shape == (robot.n, 12 * robot.n)


def test_numeric_and_symbolic_regressors_agree() -> None:
    robot = random_robot(3, 4, "standard")
    reg = ident.regressor(robot, coulomb=True)
    js = joint_symbols(robot.n)
    q, qd, qdd = _states(robot.n, 2, 5)
    Yn = ident.numeric_regressor(robot, q, qd, qdd, coulomb=True)
    for k in range(2):
        values = dict(zip(js.all(), [*q[k], *qd[k], *qdd[k]], strict=True))
        Ys = np.array(reg.Y.xreplace({s: sympy.Float(v) for s, v in values.items()}).evalf(), dtype=float)
        assert np.allclose(Ys, Yn[k], atol=1e-10)


def test_regressor_needs_geometry_numbers_only() -> None:
    robot = load_quiet("puma560_symbolic")
    q, qd, qdd = _states(6, 3, 0)
    with pytest.raises(rd.ModelError, match="geometry symbols a2, a3, d2, d3, d4, g"):
        ident.numeric_regressor(robot, q, qd, qdd)
    Y = ident.numeric_regressor(robot, q, qd, qdd, params={s: 0.3 for s in geometry_symbols(robot)})
    assert Y.shape == (3, 6, 72) and np.all(np.isfinite(Y))


# -- base parameters -------------------------------------------------------------------------------------

#: Base parameters of the built-in robots (inertial ones, then with IA and FV) as found by the rules.
EXPECTED = {"puma560": 46, "puma560_symbolic": 46, "industrial_6r": 46, "stanford_arm": 43,
            "stanford_modified": 16, "double_pendulum": 9, "two_link_fu": 9, "two_link_payload": 9}


@pytest.mark.parametrize("name", LIBRARY)
def test_base_parameters_equal_the_numerical_rank_for_library_robots(name: str) -> None:
    robot = load_quiet(name)
    b = ident.base_parameters(robot)
    check = b.numerical_rank()
    assert check.ok, (name, len(b), check)
    assert len(b) == EXPECTED[name]
    assert len(set(b.names)) == len(b)


def test_puma_has_the_published_36_inertial_base_parameters() -> None:
    """Khalil and Dombre: the PUMA-like 6R arm with a vertical first axis has 36 base inertial parameters;
    with the armatures and viscous friction: 36 + 6 FV + 4 IA (IA1, IA2 regroup with ZZ1, ZZ2)."""
    b = ident.base_parameters(load_quiet("puma560_symbolic"))
    inertial = [name for name in b.names if not name.startswith(("IA", "FV"))]
    assert len(inertial) == 36
    assert "ZZR1" in b.names and "MX1" not in b.names and "XXR1" not in b.names
    assert b.parameters[b.names.index("ZZR1")].has(sympy.Symbol("IA1"))


def _check_random_arm(seed: int, convention: str) -> None:
    robot = random_robot(seed, 1 + seed % 6, convention, right_angled=seed % 2 == 1)
    b = ident.base_parameters(robot)
    check = b.numerical_rank()
    assert check.ok, (robot.joint_types, len(b), check)
    q, qd, qdd = _states(robot.n, 10, seed)
    Yb = b.numeric_regressor(q, qd, qdd)
    assert np.allclose(Yb @ b.numeric_values(), _tau(robot, q, qd, qdd, {}), rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_base_parameters_equal_the_numerical_rank_for_random_arms(seed: int, convention: str) -> None:
    """1 to 6 joints, R/P mixes, general and right-angled twists, random gravity directions."""
    _check_random_arm(seed, convention)


# (seeds 12 to 79, both conventions: benchmarks/identification_sweep.py)


def special_arm(rows: list[tuple], gravity: list, convention: str = "modified",
                parents: list[int] | None = None) -> rd.Manipulator:
    """An arm of the given (joint, alpha, a, d[, theta]) rows with random inertial data (seeded), armature and
    damping; ``parents``: a tree (None: a chain)."""
    rng = np.random.default_rng(4)
    links = []
    for joint, alpha, a, d, *theta in rows:
        mass = float(rng.uniform(0.5, 3))
        links.append({"joint": joint, "alpha": alpha, "a": a, "d": d, "theta": theta[0] if theta else 0, "mass": mass,
                      "com": rng.uniform(-0.2, 0.2, 3).tolist(), "inertia": random_inertia(rng, mass),
                      "armature": 0.1, "damping": 0.2})
    return rd.Manipulator.from_dh(links, convention=convention, gravity=gravity, parent=parents)


@pytest.mark.parametrize(
    ("rows", "gravity"),
    [
        ([("P", "0", 0, 0), ("P", "-pi/2", 0, 0, "pi/2"), ("P", "-pi/2", 0, 0)], [0, 0, -9.81]),  # Cartesian
        ([("P", "0", 0, 0), ("P", "pi/2", 0, 0), ("P", "pi/2", 0, 0)], [0, -9.81, 0]),
        ([("R", "0", 0, 0), ("R", "0", 0.4, 0), ("P", "0", 0.3, 0), ("R", "0", 0, 0)], [0, 0, -9.81]),  # SCARA
        ([("R", "0", 0, 0), ("P", "0", 0, 0.2), ("R", "0", 0, 0)], [0, 0, -9.81]),  # coaxial, slide along the axis
        ([("R", "-pi/2", 0.7, 0.1), ("R", "pi/2", 0, 0.1)], [0, 0, 0]),  # no gravity
        ([("R", "0", 0, 0), ("P", "pi", 0, 0.3)], [0, -9.81, 0]),  # prismatic along the axis, on it
        ([("P", "0", 0, 0), ("R", "pi/2", 0.2, 0), ("P", "0", 0.1, 0), ("R", "-pi/2", 0, 0.3)], [0, 0, -9.81]),
    ],
)
def test_special_geometries_match_the_numerical_rank(rows: list, gravity: list) -> None:
    for convention in ("modified", "standard"):
        robot = special_arm(rows, gravity, convention)
        b = ident.base_parameters(robot)
        assert b.numerical_rank().ok, (rows, convention, b.rules)
        q, qd, qdd = _states(robot.n, 10, 1)
        assert np.allclose(b.numeric_regressor(q, qd, qdd) @ b.numeric_values(), _tau(robot, q, qd, qdd, {}),
                           rtol=1e-10, atol=1e-9)


def test_cartesian_robot_regroups_masses_with_armatures() -> None:
    robot = special_arm([("P", "0", 0, 0), ("P", "-pi/2", 0, 0, "pi/2"), ("P", "-pi/2", 0, 0)], [0, 0, -9.81])
    b = ident.base_parameters(robot)  # joint 1 vertical, joints 2 and 3 horizontal and orthogonal
    M1, M2, M3, IA2, IA3 = sympy.symbols("M1 M2 M3 IA2 IA3")
    assert b.names == ("MR1", "IA1", "FV1", "IAR2", "FV2", "IAR3", "FV3")
    assert b.parameters[0] == M1 + M2 + M3
    assert b.parameters[3] == IA2 + M2 + M3 and b.parameters[5] == IA3 + M3
    assert b.numerical_rank().ok


def test_khalil_revolute_grouping_rules_hold_symbolically() -> None:
    """The brief's table of Khalil's rules (d_j, alpha_j, r_j = robodyn's a, alpha, d) equals the general
    frame move of K_j = (XX = YY = YY_j, MZ_j, M_j) by T_j, for a symbolic modified-DH row."""
    a, alpha, d, theta = sympy.symbols("a alpha d theta")
    YY, MZ, M = sympy.symbols("YY MZ M")
    robot = rd.Manipulator.from_dh([{"joint": "R"}, {"joint": "R", "a": a, "alpha": alpha, "d": d, "theta": theta}],
                                   convention="modified")
    R, t = fixed_transform(robot, 1)
    moved = params_.move([YY, 0, 0, YY, 0, 0, 0, 0, MZ, M], R, list(t))
    C, S = sympy.cos(alpha), sympy.sin(alpha)
    khalil = [
        YY + 2 * d * MZ + d**2 * M,  # XX
        a * S * (MZ + d * M),  # XY
        -a * C * (MZ + d * M),  # XZ
        C**2 * YY + 2 * d * C**2 * MZ + (d**2 * C**2 + a**2) * M,  # YY
        C * S * (YY + 2 * d * MZ + d**2 * M),  # YZ
        S**2 * YY + 2 * d * S**2 * MZ + (d**2 * S**2 + a**2) * M,  # ZZ
        a * M,  # MX
        -S * (MZ + d * M),  # MY
        C * (MZ + d * M),  # MZ
        M,  # M
    ]
    for mine, theirs in zip(moved, khalil, strict=True):
        assert sympy.simplify(mine - theirs) == 0
    # prismatic: the tensor moves by the rotation alone, J_{j-1} += R J R^T
    J = sympy.Matrix(3, 3, lambda i, j: sympy.Symbol(f"J{min(i, j)}{max(i, j)}"))
    tensor = [J[r, s] for r, s in params_.TENSOR_INDEX]
    moved = params_.move([*tensor, 0, 0, 0, 0], R, list(t))
    RJR = R * J * R.T
    assert all(sympy.simplify(moved[k] - RJR[r, s]) == 0 for k, (r, s) in enumerate(params_.TENSOR_INDEX))


def _exact(robot: rd.Manipulator) -> rd.Manipulator:
    """The same arm with every float made an exact rational (so that exact zero tests are meaningful)."""

    def rational(x: sympy.Expr) -> str:  # a string: the model parser keeps p/q exact (a Rational object is a Real)
        return str(x.xreplace({f: sympy.Rational(round(float(f) * 10**6), 10**6) for f in x.atoms(sympy.Float)}))

    rows = []
    for link in robot.links:
        rows.append({"joint": link.joint, **{k: rational(getattr(link, k)) for k in ("a", "alpha", "d", "theta",
                                                                                       "mass", "damping", "armature")},
                     "com": [rational(x) for x in link.com],
                     "inertia": [[rational(link.inertia[i, j]) for j in range(3)] for i in range(3)]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # rounding may touch the triangle inequality
        out = rd.Manipulator.from_dh(rows, convention=robot.convention, gravity=[rational(x) for x in robot.gravity])
    assert not out.has_floats
    return out


def _assert_grouped_tau_exact(robot: rd.Manipulator) -> None:
    grouped = ident.grouped_links(robot)
    tau = grouped.tau()
    eqs = rd.derive(robot, "newton-euler")
    q = joint_symbols(robot.n).q
    original = eqs.canonical("tau")
    for i in range(robot.n):
        diff = se.sympify(tau[i]) - original[i, 0] + se.sympify(eqs.load[i])
        assert canonical(diff, q) == 0, (robot.name, i)


def test_grouped_links_give_the_same_tau_exactly_on_the_symbolic_puma() -> None:
    robot = load_quiet("puma560_symbolic")
    grouped = ident.grouped_links(robot)
    assert grouped.robot is robot  # already modified DH: the values are about its own link frames
    assert grouped.links[0][:5] == (0, 0, 0, 0, 0) and grouped.links[0][6:] == (0, 0, 0, 0)  # only ZZR1
    assert grouped.armature[0] == 0 and grouped.armature[1] == 0
    _assert_grouped_tau_exact(robot)


@pytest.mark.parametrize(("seed", "n", "convention"), [(2, 3, "standard"), (5, 4, "modified"), (9, 3, "modified")])
def test_grouped_links_give_the_same_tau_exactly_on_random_arms(seed: int, n: int, convention: str) -> None:
    robot = _exact(random_robot(seed, n, convention, extras=False, right_angled=True))
    _assert_grouped_tau_exact(robot)


def test_base_parameters_with_symbolic_geometry() -> None:
    """puma560_symbolic: expressions in its symbols d2, a2, ..., exact; the numeric rank at random geometry."""
    robot = load_quiet("puma560_symbolic")
    b = ident.base_parameters(robot)
    a2, d3 = sympy.symbols("a2 d3")
    xx2 = b.parameters[b.names.index("XXR2")]
    assert xx2.has(a2) and not xx2.has(sympy.Float)
    values = b.values  # in the robot's own symbols (m1, Ixx1, ...)
    assert values[b.names.index("ZZR1")].has(sympy.Symbol("Izz1"))
    assert b.regressor.shape == (6, len(b))
    assert b.regressor.has(d3)


@pytest.mark.parametrize("gravity", [[-9.81, 0, 0], ["-g", 0, 0]])
def test_symbolic_geometry_with_numeric_gravity_stays_exact(gravity: list) -> None:
    """A special geometry (prismatic joint along the first axis, gravity across it) needs a relation beyond the
    rules; with symbolic lengths it must come out in L1, not with L1 frozen at a random value (g = 9.81 as a
    float once made the relation floating point and gave ZZR1 = ... + 0.395*M2)."""
    robot = rd.Manipulator.from_dh([
        {"joint": "R", "a": 0, "alpha": 0, "mass": "m1", "com": ["c1", 0, 0]},
        {"joint": "P", "a": "L1", "alpha": "pi", "d": "D1", "mass": "m2", "com": [0, "c2", 0]},
    ], convention="modified", gravity=gravity)
    b = ident.base_parameters(robot)
    L1, M2, MX1, MX2, ZZ1, ZZ2, IA1, IA2 = sympy.symbols("L1 M2 MX1 MX2 ZZ1 ZZ2 IA1 IA2")
    assert dict(zip(b.names, b.parameters, strict=True)) == {
        "ZZR1": IA1 + L1**2 * M2 + 2 * L1 * MX2 + ZZ1 + ZZ2, "MXR1": L1 * M2 + MX1 + MX2,
        "MYR1": sympy.Symbol("MY1") - sympy.Symbol("MY2"), "FV1": sympy.Symbol("FV1"), "IAR2": IA2 + M2,
        "FV2": sympy.Symbol("FV2")}
    check = b.numerical_rank(params={"L1": 1.7, "D1": 0.3})
    assert check.ok and check.residual < 1e-12


def test_numerical_rank_checks_the_expressions_not_only_their_number() -> None:
    b = ident.base_parameters(load_quiet("stanford_modified"))
    assert b.numerical_rank().ok
    k = b.names.index(next(name for name in b.names if name.endswith("R2")))
    wrong = b.parameters.as_mutable()
    wrong[k] = wrong[k] * sympy.Rational(101, 100)  # one grouping coefficient 1 % off
    tampered = dataclasses.replace(b, parameters=sympy.ImmutableMatrix(wrong))
    check = tampered.numerical_rank()
    assert check.rank == check.expected and not check.ok and check.residual > 1e-4


def test_standard_dh_robot_is_described_in_modified_frames() -> None:
    robot = load_quiet("puma560")  # standard DH
    b = ident.base_parameters(robot)
    assert b.frames.convention == "modified"
    symbols = set(ident.standard_symbols(6))
    assert all(e.free_symbols <= symbols for e in b.parameters)


def test_coulomb_columns() -> None:
    robot = random_robot(1, 2, "modified")
    b = ident.base_parameters(robot, coulomb=True)
    assert "FC1" in b.names and "FC2" in b.names
    assert b.numerical_rank().ok


def test_names_reserved_for_parameters_are_refused() -> None:
    robot = rd.Manipulator.from_dh([{"joint": "R", "a": "M1", "mass": 1}], convention="modified")
    with pytest.raises(rd.ModelError, match="M1"):
        ident.regressor(robot)


def test_placement_robot_base_parameters() -> None:
    """A fixed placement before a joint (as URDF imports give) goes through the same rules."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = random_robot(4, 4, "modified", extras=False)
    c, s = np.cos(0.3), np.sin(0.3)
    placement = [[c, 0, s, 0.1], [0, 1, 0, -0.2], [-s, 0, c, 0.05], [0, 0, 0, 1]]
    robot = robot.replace(links=(robot.links[0], robot.links[1].replace(placement=placement), *robot.links[2:]))
    b = ident.base_parameters(robot)
    assert b.numerical_rank().ok
    q, qd, qdd = _states(robot.n, 10, 3)
    assert np.allclose(b.numeric_regressor(q, qd, qdd) @ b.numeric_values(), _tau(robot, q, qd, qdd, {}),
                       rtol=1e-10, atol=1e-9)


def test_identification_example_recovers_the_puma_base_parameters() -> None:
    """The core of examples/identify_puma.py on a shorter trajectory."""
    path = Path(__file__).resolve().parents[2] / "examples" / "identify_puma.py"
    spec = importlib.util.spec_from_file_location("identify_puma", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example  # dataclasses look their module up there
    spec.loader.exec_module(example)
    robot = load_quiet("puma560")
    trajectory = example.fourier_trajectory(robot.n, 4.0, 50.0, seed=3)
    exact = example.identify(robot, trajectory)
    assert len(exact.names) == 46 and exact.relative_error.max() < 1e-6
    noisy = example.identify(robot, trajectory, noise=0.02, seed=4)
    assert np.abs(noisy.z).max() < example.Z_BOUND
    assert 0.5 < np.mean(noisy.z**2) < 1.5
    assert np.all(noisy.stderr > 0)
