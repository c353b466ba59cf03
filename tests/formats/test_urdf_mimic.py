"""URDF mimic joints as coupled coordinates (the default, mimic="couple"), against Pinocchio's mimic model
(``buildModelFromUrdf(path, mimic=True)``): inverse dynamics, M and forward dynamics, joints matched by name."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.formats.frames import distinct_names
from robodyn.formats.urdf import write_urdf
from robodyn.model.couplings import Coupling
from tests.helpers import has_c_compiler

pin = pytest.importorskip("pinocchio")
survey = pytest.importorskip("benchmarks.urdf_survey")
ROBOTS = survey.robots_directory()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

#: example-robot-data's URDFs with a mimic joint that robodyn refused before coupled coordinates. Pinocchio 4.1
#: refuses romeo and the two talos_full_v2 with mimic=True (a joint mimics one listed after it in its tree:
#: "The parent joint of the mimic joint is not in the kinematic tree"): those are compared with its model of
#: independent joints, projected (REORDERED); alex_psyonic_hands mimics a joint that is not in the file, refused
#: by both.
MIMIC = {
    "panda": "panda_description/urdf/panda.urdf",
    "panda_collision": "panda_description/urdf/panda_collision.urdf",
    "baxter": "baxter_description/urdf/baxter.urdf",
    "pr2": "pr2_description/urdf/pr2.urdf",
    "tiago_pro": "tiago_pro_description/robots/tiago_pro.urdf",
    "romeo": "romeo_description/urdf/romeo.urdf",
    "talos_full_v2": "talos_data/robots/talos_full_v2.urdf",
    "talos_full_v2_box": "talos_data/robots/talos_full_v2_box.urdf",
}
REORDERED = {"romeo", "talos_full_v2", "talos_full_v2_box"}
TOLERANCE = 1e-9


def load(path: Path, **kwargs: Any) -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load(path, **kwargs)


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), np.finfo(float).tiny))


class Reference:
    """Pinocchio's model of a URDF (mimic=True, or False with our G applied to its tree), in robodyn's order of
    independent joints: tau, M and the bias of a state."""

    def __init__(self, robot: rd.Manipulator, path: Path, mimic: bool) -> None:
        self.model = pin.buildModelFromUrdf(str(path), mimic=mimic)
        self.data = self.model.createData()
        names = list(self.model.names)[1:]
        ids = dict(zip(distinct_names(names, ("base",)), range(1, len(names) + 1), strict=True))
        self.mimic = mimic
        keep = robot.independent if mimic else range(robot.n)
        self.joints = [self.model.joints[ids[robot.links[k].name]] for k in keep]
        self.v = np.array([joint.idx_v for joint in self.joints])
        assert len(set(self.v)) == self.model.nv  # every coordinate of Pinocchio's matched, once
        G, c = robot.coupling_map()
        self.G, self.c = np.array(G, dtype=float), np.array(c, dtype=float).ravel()

    def __call__(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> tuple[np.ndarray, ...]:
        if not self.mimic:  # the tree's state, and G^T on the way back
            q, qd, qdd = self.G @ q + self.c, self.G @ qd, self.G @ qdd
        model, data = self.model, self.data
        q_ref = pin.neutral(model)
        for joint, value in zip(self.joints, q, strict=True):
            q_ref[joint.idx_q:joint.idx_q + joint.nq] = [np.cos(value), np.sin(value)] if joint.nq == 2 else value
        v, a = np.zeros(model.nv), np.zeros(model.nv)
        v[self.v], a[self.v] = qd, qdd
        tau = pin.rnea(model, data, q_ref, v, a)[self.v].copy()
        bias = pin.rnea(model, data, q_ref, v, np.zeros(model.nv))[self.v].copy()
        M = pin.crba(model, data, q_ref)
        M = (np.triu(M) + np.triu(M, 1).T)[np.ix_(self.v, self.v)]
        if not self.mimic:
            tau, bias, M = self.G.T @ tau, self.G.T @ bias, self.G.T @ M @ self.G
        return tau, M, bias


def differences(robot: rd.Manipulator, engine: Any, reference: Reference, samples: int = 3) -> list[float]:
    """Largest relative differences of ID, M and FD (FD weighted by M, as benchmarks/urdf_survey.py) at random
    states; Pinocchio applies no damping: robodyn's friction is taken off, and added to FD's tau."""
    rng = np.random.default_rng(0)
    worst = [0.0, 0.0, 0.0]
    for _ in range(samples):
        q, qd, qdd = rng.uniform(-1, 1, (3, robot.nv))
        tau_ref, M_ref, bias_ref = reference(q, qd, qdd)
        friction = numeric.friction(robot, qd)
        found = [relative(engine.inverse_dynamics(q, qd, qdd) - friction, tau_ref),
                 relative(engine.mass_matrix(q), M_ref), 0.0]
        if np.linalg.eigvalsh(M_ref)[0] > 1e-12 * np.abs(M_ref).max():  # else a massless hand: no FD (romeo)
            qdd_ref = np.linalg.solve(M_ref, tau_ref - bias_ref)
            found[2] = relative(M_ref @ engine.forward_dynamics(q, qd, tau_ref + friction), M_ref @ qdd_ref)
        worst = [max(w, f) for w, f in zip(worst, found, strict=True)]
    return worst


@pytest.mark.parametrize("name", list(MIMIC))
def test_mimic_robots_agree_with_pinocchio(name: str) -> None:
    path = ROBOTS / MIMIC[name]
    robot = load(path)
    assert robot.couplings and robot.nv < robot.n
    reference = Reference(robot, path, mimic=name not in REORDERED)
    worst = differences(robot, survey.numeric_engine(robot), reference)
    assert max(worst) < TOLERANCE, (name, worst)
    M = numeric.mass_matrix(robot, np.random.default_rng(2).uniform(-1, 1, robot.nv))
    assert np.allclose(M, M.T, rtol=0, atol=1e-14 * np.abs(M).max())
    # positive definite but for romeo, whose hands (LHand, RHand, each leading massless fingers) have no mass
    assert np.linalg.eigvalsh(M)[0] > 0 or name == "romeo"


def test_panda_loads_by_default_with_eight_coordinates() -> None:
    path = ROBOTS / MIMIC["panda"]
    robot = load(path)
    assert (robot.n, robot.nv) == (9, 8)
    (coupling,) = robot.couplings
    assert (robot.links[coupling.joint].name, robot.links[coupling.leader].name) == ("panda_finger_joint2",
                                                                                   "panda_finger_joint1")
    assert (coupling.ratio, coupling.offset) == (1, 0)
    assert pin.buildModelFromUrdf(str(path), mimic=True).nv == robot.nv


def test_projection_of_the_robot_read_independent() -> None:
    """tau_a = G^T tau_tree, M_a = G^T M G: the coupled Panda against the Panda read with mimic="independent"."""
    path = ROBOTS / MIMIC["baxter"]
    coupled, tree = load(path), load(path, mimic="independent")
    assert tree.n == coupled.n and not tree.couplings
    G = np.array(coupled.coupling_map()[0], dtype=float)
    q, qd, qdd = np.random.default_rng(1).uniform(-1, 1, (3, 4, coupled.nv))
    tau = numeric.inverse_dynamics(coupled, q, qd, qdd)
    np.testing.assert_allclose(tau, numeric.inverse_dynamics(tree, q @ G.T, qd @ G.T, qdd @ G.T) @ G,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numeric.mass_matrix(coupled, q), G.T @ numeric.mass_matrix(tree, q @ G.T) @ G,
                               rtol=1e-12, atol=1e-14)


def test_mimic_options() -> None:
    path = ROBOTS / MIMIC["panda"]
    with pytest.warns(rd.ModelWarning, match="mimic relations dropped"):
        assert rd.load(path, mimic="independent").nv == 9
    with pytest.raises(ModelError, match=r"refused \(mimic='refuse'\): lock it") as info:
        rd.load(path, mimic="refuse")
    assert "\n" not in str(info.value)
    with pytest.raises(ModelError, match="expected one of 'couple', 'independent', 'refuse'"):
        rd.load(path, mimic="gears")
    with pytest.warns(rd.ModelWarning, match="mimic joints of a joint the file does not define, read as "
                                              "independent joints: 'Left_index_q2' \\(follows 'index_q1'\\)"):
        alex = rd.load(ROBOTS / "alex_description/urdf/alex_psyonic_hands.urdf")  # (Pinocchio's reader, too)
    assert alex.nv == alex.n and not alex.couplings


def test_a_mimic_of_a_fixed_joint_is_refused(tmp_path: Path) -> None:
    """A joint that mimics a joint the file has but that does not move (fixed, or locked) is refused in one line:
    lock the follower too."""
    path = tmp_path / "fixed_leader.urdf"
    inertial = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'
    path.write_text(f"""<robot name="r"><link name="base"/>
  <joint name="a" type="fixed"><parent link="base"/><child link="l1"/></joint><link name="l1">{inertial}</link>
  <joint name="b" type="revolute"><parent link="l1"/><child link="l2"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="a"/></joint><link name="l2">{inertial}</link>
</robot>""")
    with pytest.raises(ModelError, match="mimics joint 'a', which is not a moving joint") as info:
        rd.load(path)
    assert "\n" not in str(info.value)


@pytest.mark.skipif(not has_c_compiler(), reason="no C compiler")
@pytest.mark.parametrize("name", ["panda", "baxter"])  # (tiago_pro too, 8e-14, but its build takes a minute)
def test_compiled_robots_agree_with_pinocchio(tmp_path: Path, name: str) -> None:
    """The same through rd.compile (the generated C takes the independent coordinates: 8 of the Panda's 9)."""
    path = ROBOTS / MIMIC[name]
    robot = load(path)
    dyn = rd.compile(robot, cache=tmp_path)
    assert max(differences(robot, dyn, Reference(robot, path, mimic=True))) < TOLERANCE


def test_to_urdf_writes_couplings_as_mimic_joints(tmp_path: Path) -> None:
    """write_urdf of a geared robot: the coupled joint gets <mimic>, read back as the same coupling."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load("puma560").replace(couplings=(Coupling(4, 3, -2, 0.3),))
        back = rd.load(write_urdf(robot, tmp_path / "geared.urdf"))
    assert back.nv == 5 and [(c.joint, c.leader, float(c.ratio), float(c.offset)) for c in back.couplings] == [
        (4, 3, -2.0, 0.3)]
    q, qd, qdd = np.random.default_rng(3).uniform(-1, 1, (3, 4, 5))
    np.testing.assert_allclose(numeric.inverse_dynamics(back, q, qd, qdd), numeric.inverse_dynamics(robot, q, qd, qdd),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("mimic", "message"), [('<mimic joint="j2"/>', "joint 'j2' cannot follow itself"),
                                               ('<mimic joint="j1" multiplier="0"/>', "joint 'j2': a ratio of 0")])
def test_bad_mimic_relations_name_the_urdf_joint(tmp_path: Path, mimic: str, message: str) -> None:
    inertial = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'
    limit = '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
    path = tmp_path / "bad_mimic.urdf"
    path.write_text(f"""<robot name="r"><link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>{limit}</joint>
  <link name="l1">{inertial}</link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>{limit}{mimic}</joint>
  <link name="l2">{inertial}</link>
</robot>""")
    with pytest.raises(ModelError, match=message) as info:
        rd.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
