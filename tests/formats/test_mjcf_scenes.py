"""The MJCF reader on what real files hold beside a robot's tree (robodyn.formats.mjcf): MuJoCo's ``frictionloss`` as
robodyn's Coulomb friction (against a model file with the same coefficients, and against MuJoCo with f sign(qd) as a
force), fluid forces dropped or refused, props beside the robot left out (the robot's rows of MuJoCo's scene to
1e-9), ``root=`` and ``floating=False`` (the rows of MuJoCo's model with the rest held at rest at ``qpos0``), every
refused attribute in one line, and hostile files refused before MuJoCo opens them (special files, size bombs,
numbers that are not finite) with no MUJOCO_LOG.TXT left behind."""

from __future__ import annotations

import os
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

from robodyn.formats import mjcf  # noqa: E402
from robodyn.formats.mjcf import read_mjcf  # noqa: E402
from tests.formats.test_mjcf import (  # noqa: E402
    FLOATING,
    LINK,
    TOL,
    _against_mujoco,
    _floating_against_mujoco,
    _mjcf,
    _refused,
    _relative,
)

#: A fixed two-joint arm (a hinge and a slide), damping, armature and frictionloss on both.
ARM = (f'<body name="upper" pos="0 0 0.5" euler="0.2 0.1 0"><joint name="shoulder" axis="0 1 0" damping="0.2" '
       f'armature="0.01" frictionloss="0.3"/>{LINK}<body name="lower" pos="0.4 0 0"><joint name="slide" '
       f'type="slide" axis="1 0 0.2" frictionloss="0.7" damping="0.1"/>{LINK}<body name="hand" pos="0.3 0 0">'
       f'<joint name="wrist" axis="0 0 1"/>{LINK}</body></body></body>')
#: Props: a cube with damping and frictionloss on its free joint and gravity compensation, a target sphere.
PROPS = ('<body name="cube" pos="1 0 0.1" gravcomp="1"><joint name="cube_free" type="free" damping="0.5" '
         'frictionloss="0.1"/><geom type="box" size="0.05 0.05 0.05" mass="0.3"/></body>'
         '<body name="target" pos="0.5 0.5 0.1"><freejoint/><geom type="sphere" size="0.02" mass="0.01"/></body>')


def _quiet(path: Path, **options: Any) -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return read_mjcf(path, **options)


def _rows_at_rest(robot: rd.Manipulator, path: Path, seed: int = 0) -> float:
    """The robot (fixed base) against MuJoCo's whole model of ``path`` with every joint not the robot's at rest
    at ``qpos0`` (qvel and qacc 0): ID against the robot's rows of mj_rne (plus armature and passive force), M
    against its block of mj_fullM, at 3 random states of the robot's joints; robodyn's Coulomb friction MuJoCo's
    frictionloss as the force f sign(qd)."""
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    joints = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) for name in robot.joint_names]
    dofs, at = (np.array([getattr(model, field)[j] for j in joints], dtype=int)
                for field in ("jnt_dofadr", "jnt_qposadr"))
    friction = np.array([float(link.coulomb[0]) for link in robot.links])  # MuJoCo's frictionloss, as a force
    assert np.array_equal(friction, model.dof_frictionloss[dofs])
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1, 1, (3, robot.n))
        data.qpos[:], data.qvel[:] = model.qpos0, 0.0
        data.qpos[at], data.qvel[dofs] = q, qd
        mujoco.mj_forward(model, data)
        data.qacc[:] = 0.0
        data.qacc[dofs] = qdd
        rne = np.zeros(model.nv)
        mujoco.mj_rne(model, data, 1, rne)
        tau = rne[dofs] + model.dof_armature[dofs] * qdd - data.qfrc_passive[dofs] + friction * np.sign(qd)
        M = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, M)
        worst = max(worst, _relative(numeric.inverse_dynamics(robot, q, qd, qdd), tau),
                    _relative(numeric.mass_matrix(robot, q), M[np.ix_(dofs, dofs)]))
    return worst


# -- frictionloss: robodyn's Coulomb friction ------------------------------------------------------------------------
def test_frictionloss_is_the_coulomb_friction_of_a_model_file(tmp_path: Path) -> None:
    path = _mjcf(tmp_path, ARM)
    robot = read_mjcf(path)  # frictionloss="coulomb", the default
    assert [tuple(map(float, link.coulomb)) for link in robot.links] == [(0.3, -0.3), (0.7, -0.7), (0.0, 0.0)]
    assert _against_mujoco(robot, path) < TOL  # MuJoCo's frictionloss as the force f sign(qd), constraints off
    with pytest.warns(rd.ModelWarning, match="frictionloss.*'shoulder', 'slide'"):
        ignored = read_mjcf(path, frictionloss="ignore")
    data = ignored.to_dict()  # the same robot, written as a model file with the Coulomb coefficients
    for row, friction in zip(data["links"], (0.3, 0.7, 0.0), strict=True):
        if friction:
            row["coulomb"] = [friction, -friction]
    model_file = tmp_path / "arm.yaml"
    model_file.write_text(__import__("yaml").safe_dump(data), encoding="utf-8")
    written = rd.load(model_file)
    rng = np.random.default_rng(4)
    for _ in range(4):
        q, qd, qdd = rng.uniform(-1, 1, (3, robot.n))
        qd[np.abs(qd) < 0.1] = 0.5  # away from rest: the sign is the friction's
        tau = numeric.inverse_dynamics(robot, q, qd, qdd)
        assert np.abs(tau - numeric.inverse_dynamics(written, q, qd, qdd)).max() < 1e-12
        friction = tau - numeric.inverse_dynamics(ignored, q, qd, qdd)
        assert np.allclose(friction, [0.3 * np.sign(qd[0]), 0.7 * np.sign(qd[1]), 0.0], rtol=0, atol=1e-12)
    _refused(path, "joint frictionloss 'shoulder', 'slide' (frictionloss='coulomb')", frictionloss="refuse")
    back = read_mjcf(mjcf.write_mjcf(robot, tmp_path / "out.xml"))  # to_mjcf writes it as frictionloss
    assert [link.coulomb for link in back.links] == [link.coulomb for link in robot.links]


def test_frictionloss_on_a_ball_joint_is_refused_unless_ignored(tmp_path: Path) -> None:
    path = _mjcf(tmp_path, f'<body name="b"><joint name="ball" type="ball" frictionloss="0.2"/>{LINK}</body>')
    _refused(path, "ball joint frictionloss 'ball' (frictionloss='ignore')", frictionloss="coulomb")
    with pytest.warns(rd.ModelWarning, match="'ball'"):
        assert read_mjcf(path, frictionloss="ignore").nv == 3


# -- fluid forces ------------------------------------------------------------------------------------------------
AIR = '<option density="1.2" viscosity="0.00002"/>'
WATER = '<option density="1000" viscosity="0.0009"/>'


def test_an_air_like_medium_is_dropped_with_one_note_water_refused(tmp_path: Path) -> None:
    still = _quiet(_mjcf(tmp_path, ARM, name="still.xml"))
    with pytest.warns(rd.ModelWarning, match=r"fluid forces \(<option> density 1.2, viscosity 2e-05\) dropped"):
        air = read_mjcf(_mjcf(tmp_path, ARM, AIR, name="air.xml"))
    q = np.array([0.1, 0.2, 0.3])
    assert np.array_equal(numeric.inverse_dynamics(air, q, q, q), numeric.inverse_dynamics(still, q, q, q))
    water = _mjcf(tmp_path, ARM, WATER, name="water.xml")
    _refused(water, "fluid forces of density 1000, viscosity 0.0009 (fluid='drop')")
    with pytest.warns(rd.ModelWarning, match="density 1000"):
        assert read_mjcf(water, fluid="drop").n == 3
    _refused(_mjcf(tmp_path, ARM, AIR, name="air2.xml"), "fluid forces of density 1.2", fluid="refuse")
    with pytest.warns(rd.ModelWarning, match="density 0, viscosity 0.001"):  # water's viscosity alone: 1e-3 N
        assert read_mjcf(_mjcf(tmp_path, ARM, '<option viscosity="0.001"/>', name="viscous.xml")).n == 3
    _refused(_mjcf(tmp_path, ARM, '<option viscosity="0.1"/>', name="syrup.xml"), "viscosity 0.1 (fluid='drop')")
    with pytest.raises(rd.ModelError, match="fluid='none': expected 'auto', 'drop', 'refuse'"):
        read_mjcf(water, fluid="none")


def test_an_ellipsoid_fluid_shape_is_refused_in_air_but_not_on_a_prop(tmp_path: Path) -> None:
    shaped = ARM.replace(LINK, LINK.replace("/>", ' fluidshape="ellipsoid"/>'), 1)
    _refused(_mjcf(tmp_path, shaped, AIR), "body fluidshape='ellipsoid' 'upper' (fluid='drop')")
    prop = PROPS.replace('mass="0.3"/>', 'mass="0.3" fluidshape="ellipsoid"/>')
    assert _quiet(_mjcf(tmp_path, ARM + prop, AIR, name="prop.xml")).n == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", rd.ModelWarning)  # no fluid, no note
        assert read_mjcf(_mjcf(tmp_path, shaped, name="calm.xml"), frictionloss="coulomb").n == 3


# -- scenes: props, several robots, root=, floating=False ------------------------------------------------------------
def test_props_beside_a_fixed_robot_are_left_out_and_named(tmp_path: Path) -> None:
    path = _mjcf(tmp_path, ARM + PROPS)
    with pytest.warns(rd.ModelWarning, match=r"2 free bodies beside the robot left out \(props\): 'cube', 'target'"):
        robot = read_mjcf(path)  # the cube's damping, frictionloss and gravcomp: not refused
    assert robot.joint_names == ("shoulder", "slide", "wrist") and not robot.floating
    assert _against_mujoco(robot, path) < TOL  # the robot's rows and columns of MuJoCo's scene
    _refused(path, "floating=True, but the robot has no free joint", floating=True)  # (the props' are left out)


def test_a_weld_to_a_mocap_body_is_left_out_with_a_note_other_welds_refused(tmp_path: Path) -> None:
    """A mocap body (moved by the user, welded to the hand: a fetch-style scene) drives the robot as an actuator."""
    mocap = '<body name="handle" mocap="true" pos="0.7 0 0.5"><geom type="sphere" size="0.01" contype="0"/></body>'
    weld = '<equality><weld name="grab" body1="handle" body2="hand"/></equality>'
    path = _mjcf(tmp_path, ARM + mocap + PROPS, weld)
    with pytest.warns(rd.ModelWarning) as caught:
        robot = read_mjcf(path)
    assert {str(w.message).split(": ", 1)[1] for w in caught} == {
        "equalities to mocap bodies left out (they drive the robot): weld 'grab'",
        "2 free bodies beside the robot left out (props): 'cube', 'target'"}
    assert _against_mujoco(robot, path) < TOL  # (the weld is a constraint: off there)
    to_prop = '<equality><weld name="glue" body1="cube" body2="hand"/></equality>'
    _refused(_mjcf(tmp_path, ARM + PROPS, to_prop, name="glued.xml"), "weld equality 'glue' (not read yet)")
    between_props = '<equality><weld name="stack" body1="cube" body2="target"/></equality>'
    assert _quiet(_mjcf(tmp_path, ARM + PROPS, between_props, name="stack.xml")).n == 3  # the props' business


def test_props_beside_a_floating_robot_are_left_out(tmp_path: Path) -> None:
    path = _mjcf(tmp_path, FLOATING + PROPS)
    with pytest.warns(rd.ModelWarning, match="'cube', 'target'"):
        robot = read_mjcf(path)
    alone = rd.load(_mjcf(tmp_path, FLOATING, name="alone.xml"))
    assert robot == alone.replace(description=robot.description, source=robot.source)
    assert _floating_against_mujoco(alone, tmp_path / "alone.xml") < TOL


def test_several_robots_are_refused_and_root_picks_one(tmp_path: Path) -> None:
    second = FLOATING.replace('name="', 'name="b_').replace('pos="0.1 0.2 1"', 'pos="3 0 1"')
    path = _mjcf(tmp_path, FLOATING + second)
    _refused(path, "2 robots: 'torso', 'b_torso'", "root='torso'")
    _refused(_mjcf(tmp_path, FLOATING + ARM, name="beside.xml"), "2 robots: 'torso', 'upper' on the world",
             "root='torso'")
    picked = read_mjcf(path, root="b_torso")
    assert picked.floating and picked.joint_names == ("b_j1", "b_j2", "b_j3")
    tendon = '<tendon><fixed name="t" damping="2"><joint joint="b_j1" coef="1"/></fixed></tendon>'
    damped = _mjcf(tmp_path, FLOATING + second, tendon, name="tendon.xml")  # the other robot's tendon: not refused
    assert read_mjcf(damped, root="torso").joint_names == ("j1", "j2", "j3")
    _refused(damped, "tendon damping 't'", root="b_torso")
    _refused(path, "field 'root'", "no body named 'torsoo'; did you mean 'torso', 'b_torso'?", root="torsoo")
    welded = _quiet(_mjcf(tmp_path, FLOATING + ARM, name="welded.xml"), floating=False)  # one tree on the world
    assert welded.joint_names == ("j1", "j2", "j3", "shoulder", "slide", "wrist") and not welded.floating


def test_root_reads_a_subtree_placed_where_the_file_has_it_at_qpos0(tmp_path: Path) -> None:
    chain = ARM.replace('<joint name="shoulder"', '<joint name="shoulder" ref="0.4"')
    path = _mjcf(tmp_path, chain + PROPS.replace('<body name="cube"', '<body name="box"'))
    fore = _quiet(path, root="lower")
    assert fore.joint_names == ("slide", "wrist") and not fore.floating
    assert _rows_at_rest(fore, path) < TOL  # the shoulder held at its qpos0, the props apart
    assert [float(g) for g in fore.gravity] == [0.0, 0.0, -9.81]
    floating = _mjcf(tmp_path, FLOATING, '<option gravity="0.3 -0.2 -9.81"/>', name="floating.xml")
    arm = read_mjcf(floating, root="arm")  # below the free joint: the torso held where qpos0 puts it
    assert not arm.floating and arm.joint_names == ("j1", "j2")
    assert _rows_at_rest(arm, floating) < TOL
    target = read_mjcf(path, root="target")  # a lone free body: a floating base without joints
    assert target.floating and target.n == 0 and float(target.base.mass) == pytest.approx(0.01)
    _refused(path, "free joint damping 'cube_free'; body gravcomp 'box'", root="box")  # the prop read: refused


def test_floating_false_welds_the_free_body_at_qpos0(tmp_path: Path) -> None:
    """An ant: a torso with a free joint and four two-joint legs; nq 15 as the file says, 8 welded."""
    legs = "".join(f'<body name="leg{k}" pos="{np.cos(k):.3f} {np.sin(k):.3f} 0"><joint name="hip{k}" axis="0 0 1"/>'
                   f'{LINK}<body name="shin{k}" pos="0.3 0 0"><joint name="knee{k}" axis="0 1 0" damping="0.1"/>'
                   f'{LINK}</body></body>' for k in range(4))
    path = _mjcf(tmp_path, f'<body name="torso" pos="0 0 0.75" quat="0.9 0 0.1 0.2"><freejoint name="root"/>{LINK}'
                           f'{legs}</body>')
    free = read_mjcf(path)
    assert free.floating and (free.nq, free.nv) == (15, 14)
    assert _floating_against_mujoco(free, path) < TOL
    welded = read_mjcf(path, floating=False)
    assert not welded.floating and (welded.nq, welded.nv) == (8, 8)
    assert _rows_at_rest(welded, path) < TOL  # the torso where qpos0 puts it, at rest


# -- one line names every problem --------------------------------------------------------------------------------
def test_every_refused_attribute_is_named_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # (a line has at most 300 characters: the file named short)
    body = (f'<body name="torso" gravcomp="1"><joint name="a" stiffness="1"/>{LINK}<body name="b1" pos="0 0 1">'
            f'<joint name="b" stiffness="2" frictionloss="0.1"/>{LINK}<body name="c1" pos="0 0 1"><joint name="c" '
            f'type="ball" stiffness="3" frictionloss="0.2"/>{LINK}<body name="d1" pos="0 0 1"><joint name="d" '
            f'stiffness="3"/>{LINK}</body></body></body></body>')
    extra = (WATER + '<tendon><fixed name="t" damping="1"><joint joint="a" coef="1"/></fixed></tendon>'
             '<equality><connect name="loop" body1="torso" body2="d1" anchor="0 0 0"/></equality>')
    message = _refused(_mjcf(Path(), body, extra), "body gravcomp 'torso'", "tendon damping 't'",
                       "ball joint stiffness 'c'", "ball joint frictionloss 'c' (frictionloss='ignore')",
                       "fluid forces of density 1000", "connect equality 'loop' (not read yet)")
    assert len(message) <= 300 and not message.endswith("...")


# -- hostile files -------------------------------------------------------------------------------------------------
def _in_subprocess(code: str, cwd: Path) -> str:
    """``code`` run by a fresh interpreter in ``cwd`` (a FIFO opened by mistake would block it, not the tests)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(rd.__file__).parents[1]),
                                                         os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120,
                         env=env, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


REFUSE = ("import robodyn as rd\nfrom robodyn.formats.mjcf import read_mjcf\n"
          "for path in {paths!r}:\n    try:\n        read_mjcf(path)\n        print('LOADED', path)\n"
          "    except rd.ModelError as e:\n        print(e)\n")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_special_files_are_refused_before_anything_is_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "model.xml")
    os.mkfifo(tmp_path / "part.xml")
    os.mkfifo(tmp_path / "shape.stl")
    arm = f'<body><joint name="j"/>{LINK}</body>'
    _mjcf(tmp_path, arm, '<include file="part.xml"/>', name="includes.xml")
    _mjcf(tmp_path, '<body><joint name="j"/><geom type="mesh" mesh="m"/></body>',
          '<asset><mesh name="m" file="shape.stl"/></asset>', name="meshes.xml")
    os.symlink("/dev/zero", tmp_path / "zero.xml")
    lines = _in_subprocess(REFUSE.format(paths=["model.xml", "includes.xml", "meshes.xml", "zero.xml"]),
                           tmp_path).splitlines()
    assert lines[0] == "model.xml: is a FIFO, not a regular file"
    assert lines[1] == "includes.xml: <include file='part.xml'> is a FIFO, not a regular file (not opened)"
    assert lines[2] == "meshes.xml: <mesh file='shape.stl'> is a FIFO, not a regular file (not opened)"
    assert lines[3] == "zero.xml: is a character device, not a regular file"
    load = "import robodyn as rd\ntry:\n    rd.load('model.xml')\nexcept rd.ModelError as e:\n    print(e)\n"
    assert _in_subprocess(load, tmp_path) == "model.xml: is a FIFO, not a regular file\n"  # rd.load's sniffing too


def test_size_bombs_are_refused_before_mujoco_compiles(tmp_path: Path) -> None:
    replicated = _mjcf(tmp_path, f'<replicate count="1000" offset="0.1 0 0"><replicate count="1000" '
                                 f'offset="0 0.1 0"><body><joint/>{LINK}</body></replicate></replicate>')
    _refused(replicated, f"more than {mjcf.MAX_MJCF_BODIES} bodies", "<replicate>")
    big = tmp_path / "big.xml"
    with open(big, "wb") as handle:  # 30 MB, sparse
        handle.write(b'<mujoco model="m">')
        handle.truncate(30 * 2**20)
    _refused(big, f"larger than {mjcf.MAX_MJCF_BYTES} bytes")
    part = tmp_path / "part.xml"
    part.write_text("<mujoco>" + "<!--" + "x" * (mjcf.MAX_MJCF_BYTES // 2) + "--></mujoco>", encoding="utf-8")
    includes = "".join('<include file="part.xml"/>' for _ in range(3))  # each below the limit, together above
    _refused(_mjcf(tmp_path, f'<body><joint name="j"/>{LINK}</body>', includes, name="includes.xml"),
             f"the file and its includes are larger than {mjcf.MAX_MJCF_BYTES} bytes together")
    _refused(_mjcf(tmp_path, "", '<include file="self.xml"/>', name="self.xml"), "nested more than")
    _refused(_mjcf(tmp_path, "", '<!DOCTYPE m [<!ENTITY a "aaaa">]>', name="entity.xml"), "entity declaration")


def test_non_finite_numbers_are_refused_naming_each_element_and_attribute(tmp_path: Path) -> None:
    body = (f'<body name="inf" pos="0 nan 0"><joint name="nan" damping="inf" armature="-Infinity"/>{LINK}'
            f'<body name="b" pos="1e999 0 0"><joint name="j2"/>{LINK}</body></body>')
    _refused(_mjcf(tmp_path, body), "numbers that are not finite: <body name='inf'> pos='0 nan 0', "
             "<joint name='nan'> damping='inf', <joint name='nan'> armature='-Infinity' and 1 more")


def test_mujoco_leaves_no_log_file_and_its_warnings_are_one_note(tmp_path: Path) -> None:
    _mjcf(tmp_path, f'<body><joint name="j" damping="nan"/>{LINK}</body>', name="nan.xml")
    broken = tmp_path / "broken.xml"
    broken.write_text('<mujoco><worldbody><body><joint type="nonsense"/></body></worldbody></mujoco>')
    code = (REFUSE.format(paths=["nan.xml", "broken.xml"])
            + "import warnings\nfrom robodyn.formats.mjcf import _compile\nfrom pathlib import Path\n"
              "with warnings.catch_warnings(record=True) as caught:\n    warnings.simplefilter('always')\n"
              "    _compile(Path('nan.xml'), 'nan.xml')\nprint([str(w.message) for w in caught])\n")
    lines = _in_subprocess(code, tmp_path).splitlines()
    assert "numbers that are not finite" in lines[0] and "MuJoCo cannot compile it" in lines[1]
    assert lines[2] == "[\"nan.xml: MuJoCo warns: XML contains a 'NaN'. Please check it carefully.\"]"
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_coulomb_friction_is_mujocos_frictionloss_constraint_away_from_rest(tmp_path: Path) -> None:
    """MuJoCo's frictionloss, solved as a constraint (contacts off, the constraint on), saturates at f opposing the
    motion once a joint moves faster than its softness allows (here about 0.015 rad/s): there robodyn's forward
    dynamics with the Coulomb friction read from it is MuJoCo's mj_forward, to 1e-9."""
    path = _mjcf(tmp_path, ARM)
    robot = read_mjcf(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    data = mujoco.MjData(model)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, tau = rng.uniform(-1, 1, (2, robot.n))
        qd = rng.choice([-1, 1], robot.n) * rng.uniform(0.5, 1, robot.n)
        data.qpos[:], data.qvel[:], data.qfrc_applied[:] = q, qd, tau
        mujoco.mj_forward(model, data)
        assert np.allclose(data.qfrc_constraint, -model.dof_frictionloss * np.sign(qd), rtol=0, atol=1e-12)
        assert _relative(numeric.forward_dynamics(robot, q, qd, tau), data.qacc) < TOL


def test_deep_nesting_is_refused_in_one_line_not_a_recursion_error(tmp_path: Path) -> None:
    deep = "<body>" * 5000 + "</body>" * 5000
    _refused(_mjcf(tmp_path, deep), f"elements nested more than {mjcf.MAX_MJCF_NESTING} deep")
    part = tmp_path / "part.xml"  # nesting counted across includes: each file below the bound, together above
    part.write_text("<mujoco>" + "<default>" * 300 + '<include file="part.xml"/>' + "</default>" * 300 + "</mujoco>")
    _refused(_mjcf(tmp_path, "", '<include file="part.xml"/>', name="nested.xml"),
             f"elements nested more than {mjcf.MAX_MJCF_NESTING} deep")


def test_to_mjcf_writes_an_asymmetric_coulomb_frictions_odd_part_and_says_so(tmp_path: Path) -> None:
    import dataclasses

    robot = _quiet(_mjcf(tmp_path, ARM))
    links = list(robot.links)
    links[2] = dataclasses.replace(links[2], coulomb=(0.5, -0.3))
    asymmetric = robot.replace(links=tuple(links))
    with pytest.warns(rd.ModelWarning, match=r"link 3: Coulomb friction \[0.5, -0.3\] is not symmetric: MJCF's "
                                             r"frictionloss is its odd part 0.4; the even part 0.1 is not written"):
        back = read_mjcf(mjcf.write_mjcf(asymmetric, tmp_path / "out.xml"))
    assert [tuple(map(float, link.coulomb)) for link in back.links] == [(0.3, -0.3), (0.7, -0.7), (0.4, -0.4)]
    q, qd = np.array([0.1, 0.2, 0.3]), np.array([0.5, -0.4, -0.3])
    difference = numeric.inverse_dynamics(asymmetric, q, qd, q) - numeric.inverse_dynamics(back, q, qd, q)
    assert np.allclose(difference, [0, 0, 0.1], rtol=0, atol=1e-12)  # the even part, in either direction


#: A three-joint finger whose joints a chain of fixed tendons couples (robosuite's Robotiq three-finger gripper's
#: pattern: 0.5 j1 + 0.5 j2 and 0.5 j2 - j3 held at their lengths at qpos0), and a tendon between two tendons.
FINGER = (f'<body name="palm"><joint name="base" axis="0 0 1"/>{LINK}<body name="p1" pos="0.2 0 0">'
          f'<joint name="j1" axis="0 1 0" ref="0.1"/>{LINK}<body name="p2" pos="0.1 0 0">'
          f'<joint name="j2" axis="0 1 0"/>{LINK}<body name="p3" pos="0.1 0 0"><joint name="j3" axis="0 1 0"/>'
          f'{LINK}</body></body></body></body>')
TENDONS = ('<tendon><fixed name="t12"><joint joint="j1" coef="0.5"/><joint joint="j2" coef="0.5"/></fixed>'
           '<fixed name="t23"><joint joint="j2" coef="0.5"/><joint joint="j3" coef="-1"/></fixed></tendon>'
           '<equality><tendon tendon1="t12"/><tendon tendon1="t23" tendon2="t12" polycoef="0.05 2 0 0 0"/>'
           '</equality>')


def test_fixed_tendon_equalities_are_exact_linear_couplings(tmp_path: Path) -> None:
    """Each tendon equality is one linear relation of the joints' coordinates, solved for its deepest joint (j2 from
    the first, j3 from the second with j2 substituted): the robot's q is (base, j1), and every q the coupling map
    gives holds MuJoCo's tendon equalities exactly (L1 - L1_0 = c0 + c1 (L2 - L2_0)); the tree agrees with MuJoCo."""
    path = _mjcf(tmp_path, FINGER, TENDONS)
    robot = _quiet(path)
    assert robot.nv == 2 and [robot.joint_names[int(c.joint)] for c in robot.couplings] == ["j2", "j3"]
    assert all(robot.joint_names[int(k)] in ("base", "j1") for c in robot.couplings for k, _ in c.leaders)
    G, c = (np.array(m, dtype=float) for m in robot.coupling_map())
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(2)
    for q in rng.uniform(-1, 1, (5, robot.nv)):
        data.qpos[:] = G @ q + c.ravel()
        mujoco.mj_forward(model, data)
        L, L0 = data.ten_length, model.tendon_length0
        assert abs(L[0] - L0[0]) < 1e-14 and abs((L[1] - L0[1]) - (0.05 + 2 * (L[0] - L0[0]))) < 1e-14
    assert _against_mujoco(robot, path) < TOL


def test_a_tendon_equality_that_fixes_a_joint_or_wraps_is_refused_in_one_line(tmp_path: Path) -> None:
    fixing = ('<tendon><fixed name="t1"><joint joint="j1" coef="1"/></fixed></tendon>'
              '<equality><tendon tendon1="t1"/></equality>')
    assert "fixes a joint" in _refused(_mjcf(tmp_path, FINGER, fixing, "fix.xml"), "tendon equality")
    squared = TENDONS.replace('polycoef="0.05 2 0 0 0"', 'polycoef="0 1 0.5 0 0"')
    assert "linearly" in _refused(_mjcf(tmp_path, FINGER, squared, "sq.xml"), "tendon equality")
