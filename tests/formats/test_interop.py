"""robodyn.formats.pinocchio.to_pinocchio and the Robotics Toolbox aliases (robodyn.analysis.toolbox:
toolbox.rne(robot, ...)
etc.)."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.analysis import toolbox
from robodyn.model.params import bound_robot
from tests.conftest import load_quiet, random_robot

pin = pytest.importorskip("pinocchio")
from robodyn.formats.pinocchio import from_pinocchio, to_pinocchio  # noqa: E402  (after the skip)


def _states(n: int, N: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-4, 4, (N, n))


@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_to_pinocchio_with_armature_damping_and_payload(convention: str) -> None:
    robot = random_robot(11, 5, convention).replace(tip_force=(0, 0, 0), tip_moment=(0, 0, 0))
    model = to_pinocchio(robot)
    data = model.createData()
    damping = np.array([float(link.damping) for link in robot.links])
    assert np.allclose(model.armature, [float(link.armature) for link in robot.links])
    assert np.allclose(model.damping, damping)
    q, qd, qdd = _states(robot.n, 10, 0)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    for k in range(10):  # Pinocchio applies the armature but not the damping
        assert np.allclose(pin.rnea(model, data, q[k], qd[k], qdd[k]) + damping * qd[k], tau[k], atol=1e-10)


def test_to_pinocchio_binds_symbols_and_refuses_free_ones() -> None:
    robot = load_quiet("double_pendulum")
    with pytest.raises(rd.ModelError, match="params"):
        to_pinocchio(robot)
    params = {"L1": 1.0, "L2": 0.7, "m1": 2.0, "m2": 1.5, "g": 9.81}
    model = to_pinocchio(robot, params)
    data = model.createData()
    q, qd, qdd = _states(2, 1, 3)
    assert np.allclose(pin.rnea(model, data, q[0], qd[0], qdd[0]),
                       numeric.inverse_dynamics(robot, q[0], qd[0], qdd[0], params=params), atol=1e-12)


def test_to_pinocchio_with_placements() -> None:
    robot = random_robot(2, 3, "modified", extras=False)
    c, s = np.cos(0.4), np.sin(0.4)
    placement = [[c, -s, 0, 0.1], [s, c, 0, 0.2], [0, 0, 1, -0.1], [0, 0, 0, 1]]
    robot = robot.replace(links=(robot.links[0], robot.links[1].replace(placement=placement), robot.links[2]))
    model = to_pinocchio(robot)
    data = model.createData()
    q, qd, qdd = _states(3, 5, 1)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    for k in range(5):
        assert np.allclose(pin.rnea(model, data, q[k], qd[k], qdd[k]), tau[k], atol=1e-10)


# -- the Robotics Toolbox names -----------------------------------------------------------------------


def test_rne_inertia_gravload_accel_are_the_numeric_engine() -> None:
    robot = random_robot(5, 4, "standard")
    q, qd, qdd = _states(4, 6, 2)
    assert np.array_equal(toolbox.rne(robot, q, qd, qdd), numeric.inverse_dynamics(robot, q, qd, qdd))
    assert np.array_equal(toolbox.rne(robot, q[0]), numeric.inverse_dynamics(robot, q[0], 0 * q[0], 0 * q[0]))
    assert np.array_equal(toolbox.inertia(robot, q), numeric.mass_matrix(robot, q))
    assert np.array_equal(toolbox.gravload(robot, q), numeric.gravity(robot, q))
    tau = toolbox.rne(robot, q, qd, qdd)
    assert np.allclose(toolbox.accel(robot, q, qd, tau), qdd, atol=1e-9)
    flipped = toolbox.gravload(robot, q, gravity=[0, 0, 0])
    assert np.allclose(flipped, 0)
    opposite = toolbox.gravload(robot, q, gravity=[-float(x) for x in robot.gravity])
    assert np.allclose(opposite, -toolbox.gravload(robot, q))


def test_coriolis_matrix_times_qd_is_h() -> None:
    robot = load_quiet("puma560")
    q, qd, _ = _states(6, 5, 4)
    C = toolbox.coriolis(robot, q, qd)
    assert C.shape == (5, 6, 6)
    assert np.allclose(np.einsum("Nij,Nj->Ni", C, qd), numeric.coriolis(robot, q, qd), atol=1e-10)
    single = toolbox.coriolis(robot, q[0], qd[0])
    assert single.shape == (6, 6) and np.allclose(single, C[0])
    # RTB's property of its construction: Mdot - 2C is skew-symmetric, checked by finite differences of M
    eps = 1e-6
    Mdot = (toolbox.inertia(robot, q[0] + eps * qd[0]) - toolbox.inertia(robot, q[0] - eps * qd[0])) / (2 * eps)
    S = Mdot - 2 * single
    assert np.allclose(S, -S.T, atol=1e-6)


def test_fdyn_integrates_with_rtb_signature() -> None:
    robot = load_quiet("two_link_fu")
    robot = robot.subs({s: 1.0 for s in robot.parameters()} | {"g": 9.81})

    def hold(r: rd.Manipulator, t: float, q: np.ndarray, qd: np.ndarray, gain: float) -> np.ndarray:
        return toolbox.gravload(r, q) - gain * qd

    result = toolbox.fdyn(robot, 1.0, [0.3, -0.2], hold, Q_args={"gain": 0.0}, dt=0.1)
    assert result.t.shape == (10,) and result.q.shape == (10, 2) and result.qd.shape == (10, 2)
    assert np.allclose(result.q, [0.3, -0.2], atol=1e-6)  # gravity compensation holds the arm still
    free = toolbox.fdyn(robot, 0.5, [0.3, -0.2])
    assert free.q[-1, 0] != pytest.approx(0.3)


def test_coriolis_matrix_against_the_toolbox_reference() -> None:
    """toolbox.coriolis is RTB's C matrix: shared/reference/puma560_reference.json (RTB 1.5.0 ``coriolis``,
    agreeing with Pinocchio 4.1.0 to 1e-14; copied verbatim to tests/data), for the built-in puma560."""
    import json
    from pathlib import Path

    ref = json.loads((Path(__file__).resolve().parents[1] / "data" / "puma560_reference.json").read_text())
    robot = load_quiet("puma560")
    assert ref["gravity"] == [float(x) for x in robot.gravity]
    q = np.array([s["q"] for s in ref["states"]])
    qd = np.array([s["qd"] for s in ref["states"]])
    C = toolbox.coriolis(robot, q, qd)
    for k, state in enumerate(ref["states"]):
        expected = np.array(state["C"])
        assert np.max(np.abs(C[k] - expected)) < 1e-10 * max(1.0, np.max(np.abs(expected))), k
        assert np.allclose(C[k] @ qd[k], state["Cqd"], rtol=0, atol=1e-10)


def test_rne_includes_the_tip_load_and_gravload_does_not() -> None:
    """Unlike RTB (where rne(q, 0, 0) == gravload(q)), a robodyn robot's tip load is in rne, not in gravload."""
    robot = random_robot(5, 4, "standard")
    assert any(float(x) != 0 for x in (*robot.tip_force, *robot.tip_moment))
    q, _, _ = _states(4, 3, 5)
    load = toolbox.rne(robot, q, gravity=[0, 0, 0])  # J^T w alone (no velocity, no gravity)
    assert np.max(np.abs(load)) > 1e-3
    assert np.allclose(toolbox.rne(robot, q), toolbox.gravload(robot, q) + load, atol=1e-12)
    bare = robot.replace(tip_force=(0, 0, 0), tip_moment=(0, 0, 0))
    assert np.allclose(toolbox.rne(bare, q), toolbox.gravload(robot, q), atol=1e-12)


# -- from_pinocchio -----------------------------------------------------------------------------------


def _agree_with_pinocchio(robot: rd.Manipulator, model: object, seed: int) -> None:
    """Inverse dynamics (Pinocchio's plus the damping it leaves out), M and forward dynamics, to 1e-9."""
    data = model.createData()  # type: ignore[attr-defined]
    damping = np.array(model.damping)  # type: ignore[attr-defined]
    q, qd, qdd = _states(robot.n, 5, seed)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    M = numeric.mass_matrix(robot, q)
    for k in range(5):
        expected = pin.rnea(model, data, q[k], qd[k], qdd[k]) + damping * qd[k]
        assert np.max(np.abs(tau[k] - expected)) <= 1e-9 * max(1.0, np.max(np.abs(expected)))
        crba = pin.crba(model, data, q[k])
        assert np.allclose(M[k], np.triu(crba) + np.triu(crba, 1).T, rtol=1e-9, atol=1e-12)
        qdd_pin = pin.aba(model, data, q[k], qd[k], tau[k] - damping * qd[k])
        assert np.allclose(numeric.forward_dynamics(robot, q[k], qd[k], tau[k]), qdd_pin, rtol=1e-9, atol=1e-9)


def test_from_pinocchio_reads_the_panda_that_pinocchio_read() -> None:
    """Pinocchio's own URDF reader (its RZ, PY and PrismaticUnaligned joints, damping) to a robodyn tree."""
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None:
        pytest.skip("example-robot-data not installed")
    model = pin.buildModelFromUrdf(str(directory / "panda_description" / "urdf" / "panda.urdf"))
    robot = rd.from_pinocchio(model)
    assert robot.n == 9 and robot.parents == (-1, 0, 1, 2, 3, 4, 5, 6, 6) and robot.name == "panda"
    assert robot.links[8].name == "panda_finger_joint2" and robot.links[8].joint == "P"
    assert [float(link.damping) for link in robot.links] == list(model.damping)
    _agree_with_pinocchio(robot, model, seed=1)
    with pytest.raises(rd.ModelError, match=r"joint 'root_joint'.*JointModelFreeFlyer joint: robodyn reads fixed"):
        from_pinocchio(pin.buildModelFromUrdf(str(directory / "panda_description" / "urdf" / "panda.urdf"),
                                              pin.JointModelFreeFlyer()))


@pytest.mark.filterwarnings("ignore::robodyn.ModelWarning")  # the PUMA's published inertias, re-checked on the way
@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "tree"])
def test_from_pinocchio_round_trip(name: str) -> None:
    """robodyn -> Pinocchio -> robodyn: the same dynamics, armature and damping kept (standard DH, a prismatic
    joint, and a tree)."""
    from pathlib import Path

    if name == "tree":
        robot = bound_robot(rd.load(Path(__file__).parents[1] / "data" / "torso_two_arms.yaml"), {"g": 9.81})
    else:
        robot = load_quiet(name)
    robot = robot.replace(tip_force=(0, 0, 0), tip_moment=(0, 0, 0))
    model = to_pinocchio(robot)
    back = from_pinocchio(model)
    assert back.parents == robot.parents and back.n == robot.n
    q, qd, qdd = _states(robot.n, 4, 2)
    for got, expected in ((numeric.inverse_dynamics(back, q, qd, qdd), numeric.inverse_dynamics(robot, q, qd, qdd)),
                          (numeric.mass_matrix(back, q), numeric.mass_matrix(robot, q))):
        assert np.max(np.abs(got - expected)) <= 1e-9 * max(1.0, np.max(np.abs(expected)))
    _agree_with_pinocchio(back, model, seed=3)
    with pytest.raises(TypeError, match=r"expects a pinocchio\.Model"):
        from_pinocchio(robot)


# -- from_toolbox -------------------------------------------------------------------------------------


def _dhrobot(data: dict, *, motors: bool, mdh: bool = False, base: np.ndarray | None = None) -> object:
    """A stand-in for the Toolbox's DHRobot with the attributes from_toolbox reads (the Toolbox is not installed
    here), built from tests/data/puma560_rtb.json (RTB 1.5.0's Puma 560)."""
    from types import SimpleNamespace

    links = [SimpleNamespace(
        a=ref["a"], alpha=ref["alpha"], d=ref["d"], theta=ref["theta"], offset=ref["offset"], sigma=ref["sigma"],
        isprismatic=ref["sigma"] == 1, m=ref["m"], r=np.array(ref["r"]), I=np.array(ref["I"]), flip=False,
        Jm=ref["Jm"] if motors else 0.0, G=ref["G"], B=ref["B"] if motors else 0.0,
        Tc=np.array(ref["Tc"]) if motors else np.zeros(2), name="") for ref in data["links"]]
    return SimpleNamespace(name=data["name"], links=links, mdh=mdh, gravity=np.array(data["gravity_default"]),
                           base=SimpleNamespace(A=np.eye(4) if base is None else base))


def test_from_toolbox_gives_the_toolboxs_own_numbers() -> None:
    """RTB's rne, inertia, gravload and accel of its Puma 560 (tests/data/puma560_reference.json, RTB 1.5.0), and
    with its motors: M with G^2 Jm and tau with the viscous and Coulomb friction (|G| Tc+ for qd > 0, |G| Tc- for
    qd < 0) exactly as RTB's."""
    import json
    from pathlib import Path

    data = json.loads((Path(__file__).parents[1] / "data" / "puma560_rtb.json").read_text())
    reference = json.loads((Path(__file__).parents[1] / "data" / "puma560_reference.json").read_text())
    with pytest.warns(rd.ModelWarning, match="inertia"):  # the consensus data's tensors (as the built-in's)
        robot = rd.from_toolbox(_dhrobot(data, motors=False))
    assert robot.convention == "standard" and robot.n == 6 and robot.name == "Puma_560"
    for state in reference["states"]:
        q, qd, qdd = (np.array(state[k]) for k in ("q", "qd", "qdd"))
        assert np.allclose(numeric.inverse_dynamics(robot, q, qd, qdd), state["tau"], rtol=1e-10, atol=1e-10)
        assert np.allclose(numeric.mass_matrix(robot, q), state["M"], rtol=1e-10, atol=1e-12)
        assert np.allclose(numeric.gravity(robot, q), state["g"], rtol=1e-10, atol=1e-10)
        assert np.allclose(numeric.forward_dynamics(robot, q, qd, np.array(state["tau_fd"])), state["qdd_fd"],
                           rtol=1e-9, atol=1e-9)
    with pytest.warns(rd.ModelWarning, match="inertia"):
        motors = rd.from_toolbox(_dhrobot(data, motors=True))
    for state in reference["states"]:
        q, qd, qdd = (np.array(state[k]) for k in ("q", "qd", "qdd"))
        full = state["variant_full_model_with_friction_and_Jm"]
        assert np.allclose(numeric.mass_matrix(motors, q), full["M"], rtol=1e-10, atol=1e-12)
        assert np.allclose(numeric.inverse_dynamics(motors, q, qd, qdd), full["tau"], rtol=1e-9, atol=1e-9)
        friction = numeric.bias_forces(motors, q, qd) - numeric.bias_forces(robot, q, qd)  # RTB's friction() opposes
        assert np.allclose(friction, -np.array(full["friction_tau"]), rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore::robodyn.ModelWarning")
def test_from_toolbox_modified_dh_prismatic_offsets_base_and_refusals() -> None:
    """A random modified-DH arm with prismatic joints, as a Toolbox robot (its offsets as RTB holds them), reads
    back to the same dynamics; a base rotated about x turns gravity into the base frame; flip and ERobots refused."""
    from types import SimpleNamespace

    robot = random_robot(5, 5, "modified").replace(tip_force=(0, 0, 0), tip_moment=(0, 0, 0))
    links = [SimpleNamespace(
        a=float(link.a), alpha=float(link.alpha), d=0.0 if link.joint == "P" else float(link.d),
        theta=float(link.theta) if link.joint == "P" else 0.0,
        offset=float(link.d) if link.joint == "P" else float(link.theta), isprismatic=link.joint == "P",
        m=float(link.mass), r=np.array(link.com, dtype=float), I=np.array(link.inertia, dtype=float), flip=False,
        Jm=float(link.armature), G=1.0, B=float(link.damping), Tc=np.zeros(2), name="") for link in robot.links]
    toolbox_robot = SimpleNamespace(name="arm", links=links, mdh=True, base=SimpleNamespace(A=np.eye(4)),
                                    gravity=np.array([float(g) for g in robot.gravity]))
    back = rd.from_toolbox(toolbox_robot)
    assert back.convention == "modified" and [link.joint for link in back.links] == [row.joint for row in robot.links]
    q, qd, qdd = _states(robot.n, 3, 5)
    assert np.allclose(numeric.inverse_dynamics(back, q, qd, qdd), numeric.inverse_dynamics(robot, q, qd, qdd),
                       rtol=1e-12, atol=1e-12)
    tilted = np.eye(4)
    tilted[1:3, 1:3] = [[0.0, -1.0], [1.0, 0.0]]  # base Rot(x, pi/2): world z is the base's -y
    toolbox_robot.base = SimpleNamespace(A=tilted)
    toolbox_robot.gravity = np.array([0.0, 0.0, -9.81])
    assert np.allclose([float(g) for g in rd.from_toolbox(toolbox_robot).gravity], [0.0, -9.81, 0.0])
    links[2].flip = True
    with pytest.raises(rd.ModelError, match="link 3: field 'flip'"):
        rd.from_toolbox(toolbox_robot)
    with pytest.raises(TypeError, match="expects a Robotics Toolbox DHRobot"):
        rd.from_toolbox(SimpleNamespace(name="erobot", links=[]))
