"""Forward dynamics and simulation (robodyn.analysis.simulation): the closed form for n <= 3 (seed 000 sec. 4.4,
seed 004's Macsyma solve), and seed 004's validation run on double_pendulum, two_link_payload,
stanford_modified and puma560: energy conserved in a free undamped swing, small-oscillation periods
against theory, static equilibrium under the gravity-compensating torque."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy
from typer.testing import CliRunner

import robodyn as rd
from robodyn import numeric
from robodyn.algebra import canonical, to_se
from robodyn.analysis import simulation
from robodyn.analysis.simulation import SimulationError, simulate
from robodyn.cli import app
from robodyn.errors import DerivationError
from tests.conftest import load_quiet, random_robot
from tests.helpers import assert_close

runner = CliRunner()

DOUBLE = {"L1": 1.0, "L2": 0.5, "m1": 2.0, "m2": 1.0, "g": 9.81}
PAYLOAD = {"l1": 1.0, "l2": 0.8, "m1": 3.0, "m2": 2.0, "I1": 0.25, "I2": 0.1, "mp": 0.5, "g": 9.81}
STANFORD = {"m1": 5.0, "m2": 3.0, "m3": 2.0, "y1": 0.05, "z1": 0.1, "d2": 0.15, "y2": 0.1, "z3": -0.2,
            **{f"I{axis}{i}": 0.1 for axis in ("xx", "yy", "zz") for i in (1, 2, 3)}, "g": 9.81}
#: (model, params, a generic start) of the four arms of the acceptance criteria.
ARMS = {
    "double_pendulum": (DOUBLE, [0.6, -0.4]),
    "two_link_payload": (PAYLOAD, [-1.0, 0.7]),
    "stanford_modified": (STANFORD, [0.3, 2.5, 0.4]),
    "puma560": (None, [0.1, -0.5, 0.3, 0.2, 0.4, 0.1]),
}
TIGHT = {"method": "DOP853", "rtol": 1e-12, "atol": 1e-12}


def arm(name: str) -> rd.Manipulator:
    return load_quiet(name)


# -- closed-form forward dynamics ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_payload", "two_link_fu"])
def test_closed_form_solves_the_equations_exactly(name):
    """M (adj(M) (tau - bias)) = det M (tau - bias), exactly in canonical form."""
    robot = arm(name)
    fd = simulation.forward_dynamics_symbolic(robot)
    eqs = rd.derive(robot)
    tau = sympy.Matrix(fd.tau)
    bias = eqs.h + eqs.G + eqs.damping + eqs.load
    defect = eqs.M * fd.numerator - fd.denominator * (tau - bias)
    q = eqs.symbols.q
    assert all(canonical(to_se(sympy.expand(x)), q) == 0 for x in defect)


def test_closed_form_double_pendulum_determinant_is_textbook():
    """det M = L1^2 L2^2 m2 (m1 + m2 sin^2 q2) for point masses (written with cos^2 = 1 - sin^2)."""
    fd = simulation.forward_dynamics_symbolic(arm("double_pendulum"))
    L1, L2, m1, m2, q2 = sympy.symbols("L1 L2 m1 m2 q2")
    assert sympy.simplify(fd.denominator - L1**2 * L2**2 * m2 * (m1 + m2 * sympy.sin(q2) ** 2)) == 0


def test_closed_form_matches_the_numeric_engine_on_stanford_modified():
    robot = arm("stanford_modified")
    fd = simulation.forward_dynamics_symbolic(robot)
    n = robot.n
    s = rd.derive(robot).symbols
    f = sympy.lambdify([*s.q, *s.qd, *fd.tau, *(sympy.Symbol(k) for k in STANFORD)], list(fd.qdd))
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, tau = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n) * 5
        expected = numeric.forward_dynamics(robot, q, qd, tau, params=STANFORD)
        got = np.array(f(*q, *qd, *tau, *STANFORD.values()), dtype=float)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12)


def test_closed_form_refuses_large_arms_and_names_the_numeric_route():
    with pytest.raises(DerivationError, match=r"numeric\.forward_dynamics"):
        simulation.forward_dynamics_symbolic(arm("puma560"))


# -- energy -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ARMS))
def test_free_undamped_swing_conserves_energy(name):
    """Relative energy drift below 1e-8 over 10 s (seed 004: 'the simulation was seen to conserve energy')."""
    robot = arm(name)
    params, q0 = ARMS[name]
    result = simulate(robot, 10.0, q0, params=params, samples=201, **TIGHT)
    assert result.t[-1] == pytest.approx(10.0)
    assert np.ptp(result.kinetic) > 0.1 * abs(result.energy[0]) or np.ptp(result.kinetic) > 1.0  # it really moves
    assert result.energy_drift() < 1e-8
    # the energies are those of the arm: V changes by exactly the work of gravity, T from M
    # T is 0 at the start (from rest) and near 0 at turning points: compared to its largest value in the swing
    assert_close(result.kinetic, 0.5 * np.einsum(
        "ni,nij,nj->n", result.qd, numeric.mass_matrix(robot, result.q, params=params), result.qd))


def test_energy_is_lost_to_damping_and_gained_from_torque():
    robot = random_robot(11, 3, "standard", extras=False)
    damped = robot.replace(links=tuple(link.replace(damping=0.5) for link in robot.links))
    result = simulate(damped, 3.0, [0.5, -0.5, 0.2], **TIGHT)
    assert np.all(np.diff(result.energy) <= 1e-9)  # dE/dt = -b qd^2 <= 0
    assert result.energy[-1] < result.energy[0] - 1e-3


def test_potential_gradient_is_the_gravity_torque():
    """dV/dq = G(q): the potential energy includes every body, the payload too."""
    for seed, convention in ((1, "standard"), (2, "modified"), (5, "standard")):
        robot = random_robot(seed, 4, convention)
        q = np.random.default_rng(seed).normal(size=4)
        h = 1e-6
        grad = [(simulation.gravity_energy(robot, q + h * e) - simulation.gravity_energy(robot, q - h * e)) / (2 * h)
                for e in np.eye(4)]
        np.testing.assert_allclose(grad, numeric.gravity(robot, q), rtol=1e-7, atol=1e-7)
    payload = arm("two_link_payload")
    q = np.array([0.3, 0.4])
    grad = [(simulation.gravity_energy(payload, q + 1e-6 * e, PAYLOAD)
             - simulation.gravity_energy(payload, q - 1e-6 * e, PAYLOAD)) / 2e-6 for e in np.eye(2)]
    assert_close(grad, numeric.gravity(payload, q, params=PAYLOAD), rtol=1e-7)


# -- small oscillations --------------------------------------------------------------------------


def _theory_2x2(M: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Periods from det(K - w^2 M) = 0 by the quadratic formula, ascending."""
    a = np.linalg.det(M)
    b = -(K[0, 0] * M[1, 1] + K[1, 1] * M[0, 0] - 2 * K[0, 1] * M[0, 1])
    c = np.linalg.det(K)
    root = math.sqrt(b * b - 4 * a * c)
    w2 = np.array([(-b + root) / (2 * a), (-b - root) / (2 * a)])
    return 2 * np.pi / np.sqrt(w2)


def test_double_pendulum_periods_match_the_textbook():
    """Point masses, gravity along +x, hanging at q = 0; in absolute angles (phi1 = q1, phi2 = q1 + q2; the
    periods do not depend on the coordinates) M0 = [[(m1+m2) L1^2, m2 L1 L2], [m2 L1 L2, m2 L2^2]] and
    K = g diag((m1+m2) L1, m2 L2)."""
    L1, L2, m1, m2, g = (DOUBLE[k] for k in ("L1", "L2", "m1", "m2", "g"))
    M = np.array([[(m1 + m2) * L1**2, m2 * L1 * L2], [m2 * L1 * L2, m2 * L2**2]])
    K = g * np.diag([(m1 + m2) * L1, m2 * L2])
    theory = _theory_2x2(M, K)
    robot = arm("double_pendulum")
    osc = simulation.small_oscillations(robot, [0.0, 0.0], DOUBLE)
    np.testing.assert_allclose(np.sort(osc.periods), np.sort(theory), rtol=1e-12)
    for k in range(2):
        measured = simulation.free_swing_period(robot, osc, k, params=DOUBLE)
        assert measured == pytest.approx(osc.periods[k], rel=1e-6)


def test_two_link_payload_periods_match_theory():
    """Hanging at q = (-pi/2, 0) (gravity along -y): V = g (a sin q1 + b sin(q1 + q2)) with
    a = (m1/2 + m2 + mp) l1, b = (m2/2 + mp) l2, rods' inertias I about their centres, payload a point."""
    l1, l2, m1, m2, I1, I2, mp, g = (PAYLOAD[k] for k in ("l1", "l2", "m1", "m2", "I1", "I2", "mp", "g"))
    a, b = (m1 / 2 + m2 + mp) * l1, (m2 / 2 + mp) * l2
    K = g * np.array([[a + b, b], [b, b]])
    M22 = I2 + m2 * l2**2 / 4 + mp * l2**2
    M12 = M22 + m2 * l1 * l2 / 2 + mp * l1 * l2
    M11 = I1 + m1 * l1**2 / 4 + m2 * l1**2 + mp * l1**2 + 2 * M12 - M22
    theory = _theory_2x2(np.array([[M11, M12], [M12, M22]]), K)
    robot = arm("two_link_payload")
    q_eq = simulation.stable_equilibrium(robot, [-1.4, 0.1], PAYLOAD)
    np.testing.assert_allclose(q_eq, [-math.pi / 2, 0.0], atol=1e-7)
    osc = simulation.small_oscillations(robot, [-math.pi / 2, 0.0], PAYLOAD)
    np.testing.assert_allclose(np.sort(osc.periods), np.sort(theory), rtol=1e-12)
    for k in range(2):
        assert simulation.free_swing_period(robot, osc, k, params=PAYLOAD) == pytest.approx(theory[1 - k], rel=1e-6)


def test_stanford_modified_boom_pendulum_against_lagrange_euler():
    """Boom hanging straight down (q2 = pi) and held along its axis by the constant force tau0_3 = G_3:
    only joint 2 has stiffness, so the one oscillating mode has lambda = K22 (M^-1)_22, K22 = dG2/dq2
    from the symbolic Lagrange-Euler equations (an independent route from the numeric engine)."""
    robot = arm("stanford_modified")
    q0 = [0.2, math.pi, 0.5]
    osc = simulation.small_oscillations(robot, q0, STANFORD)
    assert np.count_nonzero(np.abs(osc.K) > 1e-9) == 1 and osc.K[1, 1] > 0
    eqs = rd.derive(robot, "lagrange-euler")
    s = eqs.symbols
    values = {**{sympy.Symbol(k): v for k, v in STANFORD.items()}, **dict(zip(s.q, q0, strict=True))}
    K22 = float(eqs.G[1].diff(s.q[1]).subs(values))
    M = np.array(eqs.M.subs(values).evalf(), dtype=float)
    theory = 2 * math.pi / math.sqrt(K22 * np.linalg.inv(M)[1, 1])
    finite = osc.periods[np.isfinite(osc.periods)]
    assert finite.tolist() == pytest.approx([theory], rel=1e-10)
    k = int(np.flatnonzero(np.isfinite(osc.periods))[0])
    assert simulation.free_swing_period(robot, osc, k, params=STANFORD) == pytest.approx(theory, rel=1e-6)


def test_puma560_hanging_periods_against_symbolic_stiffness():
    robot = arm("puma560")
    q_eq = simulation.stable_equilibrium(robot, [0, -1.5, -1.5, 0, 0, 0])
    assert np.max(np.abs(numeric.gravity(robot, q_eq))) < 1e-6
    osc = simulation.small_oscillations(robot, q_eq)
    eqs = rd.derive(robot)
    s = eqs.symbols
    point = dict(zip(s.q, q_eq, strict=True))
    K = np.array(eqs.G.jacobian(s.q).subs(point).evalf(), dtype=float)
    np.testing.assert_allclose(osc.K, K, atol=1e-9)
    finite = np.flatnonzero(np.isfinite(osc.periods))
    assert len(finite) == 4  # joint 1 (vertical axis) and joint 6 (roll of a balanced flange) are neutral
    for k in finite:
        assert simulation.free_swing_period(robot, osc, k) == pytest.approx(osc.periods[k], rel=1e-6)


def test_unstable_equilibrium_is_refused():
    with pytest.raises(SimulationError, match="not a stable equilibrium"):
        simulation.small_oscillations(arm("double_pendulum"), [math.pi, 0.0], DOUBLE)


# -- static equilibrium -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ARMS))
def test_gravity_compensation_holds_the_arm_still(name):
    """torque='gravity' (tau = G(q), fed back) and the constant tau = G(q0) from the symbolic equations
    both hold the arm at rest where it starts (seed 004's static check)."""
    robot = arm(name)
    params, q0 = ARMS[name]
    held = simulate(robot, 2.0, q0, params=params, torque="gravity", samples=21, **TIGHT)
    assert np.max(np.abs(held.q - q0)) < 1e-10 and np.max(np.abs(held.qd)) < 1e-10
    bound = simulation.bind_parameters(robot, params)
    assert_close(held.tau[0], numeric.gravity(robot, q0, params=bound))  # G1 = 0 on the PUMA (vertical axis)
    eqs = rd.derive(robot)
    values = {**{sympy.Symbol(k): v for k, v in (params or {}).items()}, **dict(zip(eqs.symbols.q, q0, strict=True))}
    G = np.array(eqs.G.subs(values).evalf(), dtype=float).ravel()
    assert np.max(np.abs(G)) > 0.1  # gravity does pull on this arm here
    constant = simulate(robot, 2.0, q0, params=params, torque=G, samples=21, **TIGHT)
    assert np.max(np.abs(constant.q - q0)) < 1e-9
    free = simulate(robot, 0.2, q0, params=params, samples=3, **TIGHT)
    assert np.max(np.abs(free.q[-1] - q0)) > 1e-3  # without it the arm falls


# -- the API ------------------------------------------------------------------------------------------


def test_engines_agree():
    robot = arm("puma560")
    q0 = ARMS["puma560"][1]
    a = simulate(robot, 1.0, q0, engine="lambdify", samples=11, **TIGHT)
    b = simulate(robot, 1.0, q0, engine="numpy", samples=11, **TIGHT)
    np.testing.assert_allclose(a.q, b.q, atol=1e-9)
    assert (a.engine, b.engine) == ("lambdify", "numpy")


def test_computed_torque_controller_as_a_torque_function():
    """tau = M(q) (Kp e - Kd qd) + bias(q, qd) with e = q* - q makes the error obey e'' + Kd e' + Kp e = 0:
    critically damped for Kp = 25, Kd = 10, so e(t) = e(0) (1 + 5 t) exp(-5 t) on the PUMA."""
    robot = arm("puma560")
    target = np.array([0.3, -0.8, 0.5, 0.0, 0.2, 0.0])
    model = numeric.compile_model(robot)

    def law(t, q, qd):
        return numeric.inverse_dynamics(model, q, qd, 25.0 * (target - q) - 10.0 * qd)

    result = simulate(robot, 2.0, np.zeros(6), torque=law, samples=21, **TIGHT)
    expected = target * (1 - (1 + 5 * result.t[:, None]) * np.exp(-5 * result.t[:, None]))
    np.testing.assert_allclose(result.q, expected, atol=1e-8)
    # settled: tau is the gravity torque (tau1 = 0 on the vertical axis) and qdd nearly 0, with joints 4 and 6
    # at rounding-level zeros whose last bits depend on the machine's BLAS kernels (OpenBLAS picks them per
    # CPU) and on the batch size (the result's qdd is one batched solve): compared to the size of the vector
    assert_close(result.tau[-1], law(0, result.q[-1], result.qd[-1]))
    assert_close(result.qdd[-1], numeric.forward_dynamics(robot, result.q[-1], result.qd[-1], result.tau[-1]))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"torque": [1.0, 2.0, 3.0]}, "torque must be 2"),
        ({"torque": "wobble"}, "unknown torque"),
        ({"method": "Euler"}, "unknown method"),
        ({"q0": [0.1]}, "q0 must be 2"),
        ({"t_span": (1.0, 0.5)}, "end after it starts"),
        ({"t_span": float("inf")}, "must be finite"),
        ({"atol": -1.0}, "atol must be positive"),
        ({"engine": "gpu"}, "unknown engine"),
    ],
)
def test_bad_input_is_one_clear_error(kwargs, message):
    args = {"t_span": 1.0, "q0": [0.1, 0.2], "params": DOUBLE, **kwargs}
    with pytest.raises(SimulationError, match=message):
        simulate(arm("double_pendulum"), **args)


def test_unbound_parameters_are_named():
    with pytest.raises(rd.ModelError, match="L1"):
        simulate(arm("double_pendulum"), 1.0, [0.1, 0.2])


def test_result_csv_and_plot(tmp_path):
    result = simulate(arm("double_pendulum"), 1.0, [0.3, 0.1], params=DOUBLE, samples=11)
    csv = result.write_csv(tmp_path / "sim.csv").read_text().splitlines()
    assert csv[0] == "t,q1,q2,qd1,qd2,qdd1,qdd2,tau1,tau2,kinetic,potential,energy"
    assert len(csv) == 12
    assert np.allclose([float(x) for x in csv[-1].split(",")[1:3]], result.q[-1])
    fig = result.plot(tmp_path / "sim.png")
    assert (tmp_path / "sim.png").read_bytes()[:4] == b"\x89PNG"
    labels = [ax.get_xlabel() for ax in fig.axes] + [ax.get_ylabel() for ax in fig.axes]
    assert "t (s)" in labels and "energy (J)" in labels
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # atomic: no temporary left


def test_cli_simulate(tmp_path):
    args = ["simulate", "double_pendulum", "--t-end", "2", "--q0", "0.5,0.2", "--method", "DOP853",
            "--rtol", "1e-12", "--atol", "1e-12", "--plot", str(tmp_path / "s.png"), "--csv", str(tmp_path / "s.csv")]
    args += [f"--param={k}={v}" for k, v in DOUBLE.items()]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "relative drift" in result.output
    drift = float(result.output.split("relative drift")[1].split()[0])
    assert drift < 1e-8
    assert (tmp_path / "s.png").exists() and (tmp_path / "s.csv").exists()
    held = runner.invoke(app, ["simulate", "puma560", "--torque", "gravity", "--t-end", "1", "--q0", "0,1,2,0,1,0"])
    assert held.exit_code == 0, held.output
    q_end = held.output.split("q(end) = (")[1].split(")")[0]
    np.testing.assert_allclose([float(x) for x in q_end.split(",")], [0, 1, 2, 0, 1, 0], atol=1e-12)


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "puma560", "--q0", "1,2"],
        ["simulate", "puma560", "--q0", "a,b,c,d,e,f"],
        ["simulate", "double_pendulum"],
        ["simulate", "puma560", "--method", "Euler"],
        ["simulate", "puma560", "--t-end", "-1"],
        ["simulate", "puma560", "--plot", "/nonexistent/dir/x.png"],
        ["simulate", "puma560", "--t-end", "inf"],
        ["simulate", "puma560", "--plot", "swing.xyz"],
        ["simulate", "puma560", "--plot", "."],
    ],
)
def test_cli_simulate_bad_input_is_one_line(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output


def test_small_oscillations_name_an_unbound_parameter() -> None:
    """The derivative module is shared by every binding; a binding that leaves a parameter out is the one
    ModelError of the other engines (it was a KeyError), and another binding reuses the module."""
    robot = load_quiet("double_pendulum")
    with pytest.raises(rd.ModelError, match="free symbols m2") as info:
        simulation.small_oscillations(robot, [0, 0], params={"L1": 1, "L2": 1, "m1": 1})
    assert info.value.unbound == ("m2",)
    short, long = (simulation.small_oscillations(robot, [0, 0], params={"L1": L, "L2": L, "m1": 1, "m2": 1})
                   for L in (1.0, 4.0))
    assert np.allclose(np.sort(long.periods), 2 * np.sort(short.periods), rtol=1e-9)  # M ~ L^2, K ~ L
    assert simulation.derivatives(robot, {"L1": 1, "L2": 1, "m1": 1, "m2": 1})._compiled is \
        simulation.derivatives(robot, {"L1": 2, "L2": 1, "m1": 1, "m2": 1})._compiled
