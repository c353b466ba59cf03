"""MJCF in and out (robodyn.formats.mjcf) against MuJoCo itself: inverse dynamics against ``mj_rne`` with the
accelerations plus MuJoCo's armature and passive (damping) force, M against ``mj_fullM``, forward dynamics against
``mj_forward`` with constraints, contacts and actuators off, to 1e-9 relative, at random states; on hand-written
MJCF (Gymnasium's reacher and pusher, robosuite's UR5e: tests/data/mjcf, LICENSES.md) and on the MJCF MuJoCo saves
from example-robot-data's URDFs. The same robot read from its URDF and through MuJoCo's compiler gives the same
numbers and the same program structure. One-line refusals for what is not read."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("lxml")

from robodyn.formats.mjcf import read_mjcf, to_mjcf, write_mjcf  # noqa: E402
from robodyn.model.couplings import Coupling  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data" / "mjcf"
ROOT = Path(__file__).resolve().parents[2]
VENDORED = {"reacher.xml": {}, "pusher.xml": {}, "ur5e.xml": {}}
#: example-robot-data URDFs that MuJoCo compiles with a fixed base (chains, trees, a mimic joint, dry friction).
URDFS = ("ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
         "double_pendulum_description/urdf/double_pendulum.urdf", "kinova_description/robots/kinova.urdf",
         "solo_description/robots/solo12.urdf", "z1_description/urdf/z1.urdf", "go2_description/urdf/go2.urdf")
TOL = 1e-9


def _read(path: Path, **options: Any) -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return read_mjcf(path, **options)


def _robots_directory() -> Path | None:
    from benchmarks.urdf_survey import robots_directory

    return robots_directory()


def _stripped(relative: str, directory: Path) -> Path:
    """example-robot-data's URDF without <visual>/<collision> (MuJoCo would load their meshes)."""
    from lxml import etree

    robots = _robots_directory()
    if robots is None or not (robots / relative).is_file():
        pytest.skip("example-robot-data is not installed")
    tree = etree.parse(str(robots / relative))
    for element in tree.getroot().xpath("//visual | //collision"):
        element.getparent().remove(element)
    out = directory / Path(relative).name
    tree.write(str(out))
    return out


def _saved(urdf: Path) -> Path:
    """The MJCF MuJoCo writes (mj_saveLastXML) after compiling ``urdf``."""
    model = mujoco.MjModel.from_xml_path(str(urdf))
    out = urdf.with_suffix(".xml")
    mujoco.mj_saveLastXML(str(out), model)
    return out


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def _against_mujoco(robot: rd.Manipulator, path: Path, seed: int = 0) -> float:
    """The largest relative difference of ID, M and FD between the robot (its tree, couplings off) and MuJoCo's
    model of ``path`` at 3 random states: the rows and columns of the robot's joints (matched by name: a scene's
    props are MuJoCo's too, and apart from the robot with constraints off), robodyn's Coulomb friction MuJoCo's
    frictionloss as a force, f sign(qd) (MuJoCo's constraint is off)."""
    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
                               | mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    data = mujoco.MjData(model)
    tree = robot.replace(couplings=()) if robot.couplings else robot
    joints = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) for name in tree.joint_names]
    dofs, at = (np.array([getattr(model, field)[j] for j in joints], dtype=int)
                for field in ("jnt_dofadr", "jnt_qposadr"))
    armature, damping = model.dof_armature[dofs], model.dof_damping[dofs]
    friction = np.array([float(link.coulomb[0]) for link in tree.links])
    assert np.array_equal(friction, np.where(friction != 0, model.dof_frictionloss[dofs], 0))  # read, or dropped
    assert len(set(dofs)) == tree.n and tree.nq == tree.n
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(3):
        qpos = rng.uniform(-1, 1, model.nq)
        for j in np.flatnonzero(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE):  # a prop's quaternion: unit
            qpos[model.jnt_qposadr[j] + 3:model.jnt_qposadr[j] + 7] /= np.linalg.norm(
                qpos[model.jnt_qposadr[j] + 3:model.jnt_qposadr[j] + 7])
        qvel, qacc, qfrc = rng.uniform(-1, 1, (3, model.nv))
        q, qd, qdd, tau = qpos[at], qvel[dofs], qacc[dofs], qfrc[dofs]
        data.qpos[:], data.qvel[:], data.qfrc_applied[:] = qpos, qvel, 0.0
        mujoco.mj_forward(model, data)
        data.qacc[:] = qacc
        rne = np.zeros(model.nv)
        mujoco.mj_rne(model, data, 1, rne)
        assert np.allclose(-data.qfrc_damper[dofs], damping * qd, rtol=0, atol=1e-15)  # the sign: robodyn's + b qd
        # no gravcomp or fluid on the robot (refused; a prop's left out): springs and dampers only
        assert np.array_equal(data.qfrc_passive[dofs], data.qfrc_damper[dofs] + data.qfrc_spring[dofs])
        coulomb = friction * np.sign(qd)
        tau_mj = rne[dofs] + armature * qdd - data.qfrc_passive[dofs] + coulomb
        M_mj = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, M_mj)  # MuJoCo 4: (m, d, dst); armature on the diagonal
        data.qfrc_applied[dofs] = tau - coulomb
        mujoco.mj_forward(model, data)
        worst = max(worst, _relative(numeric.inverse_dynamics(tree, q, qd, qdd), tau_mj),
                    _relative(numeric.mass_matrix(tree, q), M_mj[np.ix_(dofs, dofs)]),
                    _relative(numeric.forward_dynamics(tree, q, qd, tau), data.qacc[dofs]))
    return worst


# -- hand-written MJCF ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(VENDORED))
def test_hand_written_mjcf_agrees_with_mujoco(name: str) -> None:
    path = DATA / name
    robot = _read(path, **VENDORED[name])
    assert _against_mujoco(robot, path) < TOL


def test_reacher_reads_refs_multi_joint_bodies_armature_and_damping() -> None:
    robot = rd.load(DATA / "reacher.xml")
    model = mujoco.MjModel.from_xml_path(str(DATA / "reacher.xml"))
    assert robot.joint_names == ("joint0", "joint1", "target_x", "target_y")
    assert robot.parents == (-1, 0, -1, 2)  # the target's two slides: a chain, the first link massless
    assert float(robot.links[2].mass) == 0.0 and float(robot.links[3].mass) > 0
    assert [float(link.armature) for link in robot.links] == [1.0, 1.0, 0.0, 0.0]
    assert [float(link.damping) for link in robot.links] == [1.0, 1.0, 0.0, 0.0]
    assert [float(g) for g in robot.gravity] == [0.0, 0.0, -9.81]
    assert model.qpos0.tolist() == [0.0, 0.0, 0.1, -0.1]  # ref: robodyn's q is qpos, at the modelled pose here


def test_ur5e_frictionloss_is_coulomb_friction_or_ignored_or_refused_in_one_line() -> None:
    model = mujoco.MjModel.from_xml_path(str(DATA / "ur5e.xml"))
    robot = rd.load(DATA / "ur5e.xml")  # frictionloss="coulomb", the default
    assert [link.coulomb for link in robot.links] == [(f, -f) for f in model.dof_frictionloss.tolist()]
    assert robot.n == 6 and float(robot.links[0].damping) == 0.001 and float(robot.links[0].coulomb[0]) > 0
    message = _refused(DATA / "ur5e.xml", "joint frictionloss 'shoulder_pan_joint', 'shoulder_lift_joint' and 4 more"
                       " (frictionloss='coulomb')", frictionloss="refuse")
    assert message.count("frictionloss") == 2  # one group, the option that reads it named
    with pytest.warns(rd.ModelWarning, match="frictionloss") as caught:
        ignored = read_mjcf(DATA / "ur5e.xml", frictionloss="ignore")
    assert len(caught) == 1 and "shoulder_pan_joint" in str(caught[0].message)
    assert all(not link.has_coulomb for link in ignored.links)
    with pytest.raises(rd.ModelError, match="frictionloss='drop': expected 'coulomb', 'ignore', 'refuse'"):
        read_mjcf(DATA / "ur5e.xml", frictionloss="drop")


# -- example-robot-data through MuJoCo ------------------------------------------------------------------------------
@pytest.mark.parametrize("relative", URDFS)
def test_mjcf_mujoco_saves_from_urdf_agrees_with_mujoco(relative: str, tmp_path: Path) -> None:
    saved = _saved(_stripped(relative, tmp_path))
    robot = _read(saved, frictionloss="ignore")
    assert _against_mujoco(robot, saved, seed=1) < TOL


def _permutation(a: rd.Manipulator, b: rd.Manipulator) -> list[int]:
    return [list(b.joint_names).index(name) for name in a.joint_names]


def _tau_difference(urdf_robot: rd.Manipulator, other: rd.Manipulator) -> float:
    """Relative difference of the trees' tau at 3 random states, joints matched by name."""
    a = urdf_robot.replace(couplings=()) if urdf_robot.couplings else urdf_robot
    b = other.replace(couplings=()) if other.couplings else other
    order = _permutation(a, b)
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(3):
        x = rng.uniform(-1, 1, (3, a.n))
        y = np.empty_like(x)
        y[:, order] = x
        worst = max(worst, _relative(numeric.inverse_dynamics(b, *y)[order], numeric.inverse_dynamics(a, *x)))
    return worst


#: Robots whose program from MuJoCo's reading equals the URDF's but for the last digits of constants (kinova's
#: URDF reading keeps a product of inertia of -6.8e-21, the residue of merging its rotated fixed links, where
#: MuJoCo's reading has 0: 3 multiplications fewer).
SAME_PROGRAM = (*URDFS[:3], "z1_description/urdf/z1.urdf")
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?:e[-+]?\d+)?")


@pytest.mark.parametrize("relative", URDFS)
def test_urdf_and_mujocos_reading_give_the_same_robot_and_program(relative: str, tmp_path: Path) -> None:
    from robodyn import codegen

    urdf = _stripped(relative, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        from_urdf = rd.load(urdf, friction="ignore")  # (z1's dry friction: dropped on both sides)
    through_mujoco = _read(urdf, frictionloss="ignore")  # MuJoCo's compiler reads URDF too, in full precision
    assert through_mujoco.joint_names == from_urdf.joint_names  # the same order (Pinocchio's, MuJoCo's)
    assert [(c.joint, c.leader, c.ratio, c.offset) for c in through_mujoco.couplings] == \
        [(c.joint, c.leader, c.ratio, c.offset) for c in from_urdf.couplings]
    assert _tau_difference(from_urdf, through_mujoco) < 1e-12
    assert _tau_difference(from_urdf, _read(_saved(urdf), frictionloss="ignore")) < 1e-5  # 6 digits written
    if relative in SAME_PROGRAM:  # the same program up to the last digits of its constants (principal axes)
        a, b = (codegen.generate(robot, "c", ("tau",)) for robot in (from_urdf, through_mujoco))
        assert a.keys() == b.keys()
        for filename in a:
            assert NUMBER.sub("#", a[filename]) == NUMBER.sub("#", b[filename]), filename
            x, y = (np.array([float(v) for v in NUMBER.findall(text[filename])]) for text in (a, b))
            assert np.allclose(x, y, rtol=1e-12, atol=1e-15)


# -- writing ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(VENDORED))
def test_to_mjcf_round_trip_gives_the_same_numbers(name: str, tmp_path: Path) -> None:
    robot = _read(DATA / name, **VENDORED[name])
    path = write_mjcf(robot, tmp_path / "out.xml")
    back = rd.load(path)
    assert sorted(back.joint_names) == sorted(robot.joint_names)
    assert _tau_difference(robot, back) < 1e-12
    assert _against_mujoco(back, path) < TOL
    order = _permutation(robot, back)
    q = np.linspace(-1, 1, robot.n)
    y = np.empty_like(q)
    y[order] = q
    M = numeric.mass_matrix(back, y)[np.ix_(order, order)]
    assert _relative(M, numeric.mass_matrix(robot, q)) < 1e-12


def test_to_mjcf_refuses_what_mujoco_refuses_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(rd.ModelError) as info:  # the PUMA's tabulated link 3 breaks the triangle inequality
        to_mjcf(rd.load("puma560"))
    assert "\n" not in str(info.value) and "A + B >= C" in str(info.value) and "link3" in str(info.value)


def test_to_mjcf_writes_couplings_as_joint_equalities(tmp_path: Path) -> None:
    robot = _read(DATA / "ur5e.xml", frictionloss="ignore")
    coupled = robot.replace(couplings=[Coupling(5, 4, -2, 0.3)])
    back = rd.load(write_mjcf(coupled, tmp_path / "coupled.xml"))
    assert [(c.joint, c.leader, float(c.ratio), float(c.offset)) for c in back.couplings] == [(5, 4, -2.0, 0.3)]
    q = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    assert np.allclose(numeric.inverse_dynamics(back, q, q, q), numeric.inverse_dynamics(coupled, q, q, q),
                       rtol=1e-12, atol=1e-12)


# -- refusals -------------------------------------------------------------------------------------------------------
def _mjcf(tmp_path: Path, body: str, extra: str = "", name: str = "m.xml") -> Path:
    path = tmp_path / name
    path.write_text(f'<mujoco model="m">{extra}<worldbody>{body}</worldbody></mujoco>', encoding="utf-8")
    return path


LINK = '<geom type="sphere" size="0.1" mass="1"/>'


def _refused(path: Path, *words: str, **options: Any) -> str:
    with pytest.raises(rd.ModelError) as info:
        read_mjcf(path, **options) if options else rd.load(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message, message
    for word in words:
        assert word in message, message
    return message


#: A floating torso (its orientation not the identity, a body welded to it) with a two-joint arm (a hinge off its
#: body's origin, armature and damping) and a slide leg, under a gravity off the axes.
FLOATING = (f'<body name="torso" pos="0.1 0.2 1" quat="0.9 0.1 0.2 0.3"><freejoint name="root"/>'
            f'<geom type="box" size="0.2 0.1 0.05" mass="5"/>'
            f'<body name="welded" pos="0 0.1 0"><geom type="sphere" size="0.05" mass="0.7" pos="0.02 0 0.01"/></body>'
            f'<body name="arm" pos="0.2 0 0" euler="0.3 0.2 0.1"><joint name="j1" axis="0 1 0" damping="0.3" '
            f'armature="0.02"/>{LINK}<body name="fore" pos="0.3 0 0"><joint name="j2" axis="1 0 1" pos="0.01 0 0"/>'
            f'{LINK}</body></body><body name="leg" pos="-0.2 0 0"><joint name="j3" type="slide" axis="0 0 1"/>{LINK}'
            f'</body></body>')


def _floating_against_mujoco(robot: rd.Manipulator, path: Path, seed: int = 0, engine: Any = numeric) -> float:
    """As :func:`_against_mujoco`, for a floating base or ball joints: MuJoCo's states and forces converted by
    from_mujoco (its quaternions (w, x, y, z) to robodyn's (x, y, z, w)), its M by T^T M_mj T (T = diag(R, I) with
    a free joint: its linear velocity is in the world frame). ``engine``: what computes robodyn's side (its
    ``inverse_dynamics``, ``mass_matrix`` and ``forward_dynamics`` of (robot, ...)), the numeric engine by default."""
    from robodyn.formats.mjcf import from_mujoco, to_mujoco

    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    data = mujoco.MjData(model)
    assert (model.nq, model.nv) == (robot.nq, robot.nv)
    rng = np.random.default_rng(seed)
    worst = 0.0
    free = robot.floating
    for _ in range(3):
        qpos = rng.uniform(-1, 1, model.nq)
        for j in range(model.njnt):  # MuJoCo's quaternions: unit
            kind = int(model.jnt_type[j])
            if kind in (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)):
                at = model.jnt_qposadr[j] + (3 if kind == int(mujoco.mjtJoint.mjJNT_FREE) else 0)
                qpos[at:at + 4] /= np.linalg.norm(qpos[at:at + 4])
        qvel, qacc, qfrc = rng.uniform(-1, 1, (3, model.nv))
        data.qpos[:], data.qvel[:], data.qfrc_applied[:] = qpos, qvel, 0.0
        mujoco.mj_forward(model, data)
        data.qacc[:] = qacc
        rne = np.zeros(model.nv)
        mujoco.mj_rne(model, data, 1, rne)
        state = from_mujoco(robot, qpos, qvel, qacc, rne + model.dof_armature * qacc - data.qfrc_passive)
        M_mj = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, M_mj)
        T = np.eye(model.nv)
        if free:
            T[:3, :3] = data.xmat[model.jnt_bodyid[0]].reshape(3, 3)  # the base's orientation
        data.qfrc_applied[:] = qfrc
        mujoco.mj_forward(model, data)
        moved = from_mujoco(robot, qpos, qvel, data.qacc.copy(), qfrc)
        worst = max(worst, _relative(engine.inverse_dynamics(robot, state.q, state.v, state.a), state.tau),
                    _relative(engine.mass_matrix(robot, state.q), T.T @ M_mj @ T),
                    _relative(engine.forward_dynamics(robot, moved.q, moved.v, moved.tau), moved.a))
        back = to_mujoco(robot, *moved)  # the inverse conversion
        for x, y in zip(back, (qpos, qvel, data.qacc, qfrc), strict=True):
            assert np.abs(x - y).max() < 1e-14
    return worst


def test_a_free_joint_is_a_floating_base(tmp_path: Path) -> None:
    path = _mjcf(tmp_path, FLOATING, '<option gravity="0.3 -0.2 -9.81"/>')
    robot = rd.load(path)
    assert robot.floating and (robot.nq, robot.nv) == (10, 9) and robot.joint_names == ("j1", "j2", "j3")
    assert robot.base is not None and float(robot.base.mass) == pytest.approx(5.7)  # the torso and its welded body
    assert _floating_against_mujoco(robot, path) < TOL
    assert read_mjcf(path, floating=True) == robot
    written = write_mjcf(robot, tmp_path / "out.xml")  # a <freejoint/> in the base's body
    assert "<freejoint" in written.read_text()
    assert _floating_against_mujoco(rd.load(written), written, seed=1) < TOL


def test_floating_false_fixes_the_free_body_where_the_file_places_it(tmp_path: Path) -> None:
    path = _mjcf(tmp_path, f'<body name="torso" pos="0 0 1"><freejoint name="root"/>{LINK}'
                           f'<body name="arm"><joint name="j1" axis="0 1 0"/>{LINK}</body></body>')
    robot = read_mjcf(path, floating=False)
    assert not robot.floating and robot.joint_names == ("j1",)
    assert _against_mujoco(robot, _mjcf(tmp_path, f'<body name="torso" pos="0 0 1">{LINK}<body name="arm">'
                                                  f'<joint name="j1" axis="0 1 0"/>{LINK}</body></body>',
                                        name="fixed.xml")) < TOL


def test_what_a_floating_base_cannot_be_is_refused_in_one_line(tmp_path: Path) -> None:
    arm = f'<body name="arm" pos="0 0 1"><joint name="j1"/>{LINK}</body>'
    _refused(_mjcf(tmp_path, arm, name="fixed.xml"), "floating=True", "no free joint", floating=True)
    free = f'<body name="{{0}}"><freejoint name="{{0}}_root"/>{LINK}</body>'
    _refused(_mjcf(tmp_path, free.format("a") + free.format("b"), name="two.xml"), "2 free bodies",
             "root='a'")
    damped = f'<body name="a"><joint name="root" type="free" damping="0.1"/>{LINK}</body>'
    _refused(_mjcf(tmp_path, damped, name="damped.xml"), "free joint damping 'root'")
    with pytest.raises(rd.ModelError, match="floating must be None, True or False"):
        read_mjcf(_mjcf(tmp_path, arm, name="arm.xml"), floating="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("relative", ["solo_description/robots/solo12.urdf", "go2_description/urdf/go2.urdf"])
def test_a_legged_robot_with_a_free_joint_is_its_urdf_on_a_floating_base(relative: str, tmp_path: Path) -> None:
    """example-robot-data's URDF compiled by MuJoCo, a free joint added to its root body (MjSpec) and saved as
    MJCF: against MuJoCo to 1e-9, and against the URDF read with floating=True to the 6 digits MuJoCo writes."""
    urdf = _stripped(relative, tmp_path)
    spec = mujoco.MjSpec.from_file(str(urdf))
    spec.worldbody.first_body().add_freejoint()
    spec.compile()
    path = tmp_path / "free.xml"
    path.write_text(spec.to_xml())
    robot = _read(path, frictionloss="ignore")
    assert _floating_against_mujoco(robot, path, seed=2) < TOL
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        from_urdf = rd.load(urdf, floating=True)
    assert robot.joint_names == from_urdf.joint_names
    rng = np.random.default_rng(3)
    q = rng.uniform(-1, 1, robot.nq)
    q[3:7] /= np.linalg.norm(q[3:7])
    v, a = rng.uniform(-1, 1, (2, robot.nv))
    assert _relative(numeric.inverse_dynamics(robot, q, v, a), numeric.inverse_dynamics(from_urdf, q, v, a)) < 1e-5


def test_hinge_and_slide_springs_are_read_ball_springs_and_connect_refused(tmp_path: Path) -> None:
    """A hinge's and a slide's stiffness and springref are the links' springs (MuJoCo's passive force, springref
    in degrees as the file's angles, ref offsets), agreeing with MuJoCo; a ball joint's spring is refused."""
    _refused(_mjcf(tmp_path, f'<body><joint name="b" type="ball" stiffness="1"/>{LINK}</body>'),
             "ball joint stiffness 'b'")  # (a ball joint reads: tests/numeric/test_spherical.py)
    springs = (f'<body pos="0 0 1"><joint name="s" axis="0 1 1" stiffness="3" springref="20" ref="5"/>{LINK}'
               f'<body pos="0.5 0 0"><joint name="p" type="slide" axis="1 0 0" stiffness="40" springref="0.1" '
               f'damping="0.2"/>{LINK}</body></body>')
    path = _mjcf(tmp_path, springs, name="s.xml")
    robot = _read(path)
    assert [float(link.stiffness) for link in robot.links] == [3.0, 40.0]
    assert abs(float(robot.links[0].springref) - np.radians(20)) < 1e-15
    assert _against_mujoco(robot, path) < TOL
    two = f'<body name="a"><joint name="j1"/>{LINK}<body name="b" pos="1 0 0"><joint name="j2"/>{LINK}</body></body>'
    _refused(_mjcf(tmp_path, two, '<equality><connect name="loop" body1="a" body2="b" anchor="0 0 0"/></equality>',
                   name="c.xml"), "connect equality 'loop' (not read yet)")


def test_joint_equalities_linear_are_couplings_nonlinear_refused(tmp_path: Path) -> None:
    two = f'<body><joint name="j1" ref="0.2"/>{LINK}<body pos="1 0 0"><joint name="j2" ref="0.1"/>{LINK}</body></body>'
    equality = '<equality><joint joint1="j2" joint2="j1" polycoef="0.5 -2 0 0 0"/></equality>'
    for compiler, r1, r2 in (("radian", 0.2, 0.1), ("degree", np.radians(0.2), np.radians(0.1))):
        robot = rd.load(_mjcf(tmp_path, two, f'<compiler angle="{compiler}"/>{equality}', name=f"{compiler}.xml"))
        (coupling,) = robot.couplings
        # q2 - r2 = 0.5 - 2 (q1 - r1) (refs in the compiler's angle unit, MJCF's default degrees)
        assert (coupling.joint, coupling.leader, float(coupling.ratio)) == (1, 0, -2.0)
        assert abs(float(coupling.offset) - (r2 + 0.5 + 2 * r1)) < 1e-15
    nonlinear = _mjcf(tmp_path, two, '<equality><joint name="e" joint1="j2" joint2="j1" polycoef="0 1 0.5 0 0"/>'
                                     '</equality>', name="n.xml")
    _refused(nonlinear, "equality 'e'", "polycoef", "linear")


def test_malformed_unknown_and_missing_files_are_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_text('<mujoco model="m"><worldbody><body></worldbody></mujoco>', encoding="utf-8")
    _refused(broken, "not valid XML", "mismatched tag")
    other = tmp_path / "other.xml"
    other.write_text('<?xml version="1.0"?>\n<!-- c -->\n<robot name="r"/>', encoding="utf-8")
    _refused(other, "not MJCF", "<robot>", ".urdf")
    _refused(_mjcf(tmp_path, "", name="empty.mjcf"), "no moving joint")
    with pytest.raises(rd.ModelError, match="no such file"):
        rd.load(tmp_path / "gone.xml")


def test_missing_mujoco_says_how_to_install_it(tmp_path: Path) -> None:
    path = _mjcf(tmp_path, f'<body><joint name="j"/>{LINK}</body>')
    code = ("import sys; sys.modules['mujoco'] = None\nimport robodyn as rd\n"
            f"try:\n    rd.load({str(path)!r})\nexcept rd.ModelError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "reading MJCF needs the 'mujoco' package: pip install 'robodyn[mjcf]'" in out.stdout


def test_the_guide_example_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "guide" / "trees.md").read_text(encoding="utf-8")
    section = text[text.index("## MuJoCo's MJCF"):]
    code = section[section.index("```python") + len("```python"):]
    code = code[:code.index("```")]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "('shoulder', 'elbow') [0.01, 0.01]" in out.stdout
