"""``rd.load(model, **options)`` hands each option to the reader the file's kind chooses (read_urdf, read_mjcf,
read_model_file, the built-in library), refuses an unknown or inapplicable one in one line that names it and lists
the reader's options (read from its signature), and ``floating`` means the same for URDF and MJCF (None: the file
decides, True: floating, False: fixed); ``root=`` reads a URDF link's subtree."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.formats import load as loading
from robodyn.formats.mjcf import read_mjcf
from robodyn.formats.model_file import read_model_file
from robodyn.formats.urdf import read_urdf
from tests.formats.test_urdf_friction import URDF

pytest.importorskip("lxml")

#: An ant-like body: a free torso with two legs (MJCF).
ANT = """<mujoco model="ant"><worldbody><body name="torso" pos="0 0 0.5"><freejoint name="root"/>
<geom type="sphere" size="0.2" mass="2"/>
<body name="leg1" pos="0.2 0 0"><joint name="hip1" type="hinge" axis="0 0 1"/><geom type="capsule"
 fromto="0 0 0 0.3 0 0" size="0.05" mass="0.5"/></body>
<body name="leg2" pos="-0.2 0 0"><joint name="hip2" type="hinge" axis="0 0 1"/><geom type="capsule"
 fromto="0 0 0 -0.3 0 0" size="0.05" mass="0.5"/></body></body></worldbody></mujoco>
"""


@pytest.fixture
def urdf(tmp_path: Path) -> Path:
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    return path


def _keyword_only(reader: object) -> list[str]:
    return [p.name for p in inspect.signature(reader).parameters.values()  # type: ignore[arg-type]
            if p.kind is inspect.Parameter.KEYWORD_ONLY]


def _refused(call: object, *words: str) -> str:
    with pytest.raises(rd.ModelError) as info:
        call()  # type: ignore[operator]
    message = str(info.value)
    assert "\n" not in message and all(word in message for word in words), message
    return message


def test_each_kind_takes_its_readers_options() -> None:
    assert loading.URDF.options() == _keyword_only(read_urdf)
    assert loading.MJCF.options() == _keyword_only(read_mjcf)
    assert loading.MODEL_FILE.options() == _keyword_only(read_model_file) == ["strict"]
    assert loading.BUILTIN.options() == ["strict"]
    assert {"lock", "mimic", "actuated", "floating", "root", "friction", "xacro_args", "package_paths"} <= set(
        loading.URDF.options())


def test_an_unknown_option_is_one_line_with_a_suggestion_and_the_readers_options(urdf: Path) -> None:
    listed = ", ".join(_keyword_only(read_urdf))
    _refused(lambda: rd.load(urdf, flaoting=True), "rd.load has no option 'flaoting'; did you mean 'floating'?",
             f"(the options of a URDF file: {listed})")
    _refused(lambda: rd.load("puma560", colour="red"), "no option 'colour'",
             "(the options of a built-in robot: strict)")


def test_an_option_of_another_reader_is_refused_naming_where_it_applies(urdf: Path, tmp_path: Path) -> None:
    model = tmp_path / "arm.yaml"
    rd.load("two_link_fu").save(model)
    _refused(lambda: rd.load("puma560", lock={"j1": 0.0}),
             "lock= (--lock) applies to URDF files only, and 'puma560' is a built-in robot")
    _refused(lambda: rd.load(model, root="l1"), "root= (--root) applies to URDF", "is a model file (the options of a "
             "model file: strict)")
    _refused(lambda: rd.load(model, floating=True), "applies to URDF and MJCF files only (a model file says "
             "'floating: true' itself)")
    _refused(lambda: rd.load(urdf, frictionloss="ignore"), "frictionloss= (--frictionloss) applies to MJCF files only",
             "is a URDF file (the options of a URDF file: strict, lock,")
    _refused(lambda: rd.load(model, xacro_args={"a": "1"}), "xacro_args= (--xacro-arg) applies to URDF files only")


def test_none_and_an_empty_mapping_are_not_given(tmp_path: Path) -> None:
    model = tmp_path / "arm.yaml"
    rd.load("two_link_fu").save(model)
    assert rd.load("puma560", lock=None, floating=None, root=None).n == 6
    assert rd.load(model, lock={}, xacro_args={}).n == 2


def test_floating_means_the_same_for_urdf_and_mjcf(urdf: Path, tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    ant = tmp_path / "ant.xml"
    ant.write_text(ANT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        free, asked, welded = rd.load(ant), rd.load(ant, floating=True), rd.load(ant, floating=False)
    assert free.floating and (free.nq, free.nv) == (9, 8) and asked == free  # None: the file's free joint
    assert not welded.floating and (welded.nq, welded.nv) == (2, 2)  # False: the torso welded where it is
    fixed, floating = rd.load(urdf), rd.load(urdf, floating=True)
    assert rd.load(urdf, floating=False) == fixed and not fixed.floating  # None: a URDF's root is fixed
    assert floating.floating and (floating.nq, floating.nv) == (10, 9)
    _refused(lambda: rd.load(urdf, floating="yes"), "floating must be None, True or False")


def test_the_welded_ant_moves_as_the_free_one_with_its_base_held(tmp_path: Path) -> None:
    """With the torso at rest where the file places it, the welded ant's legs feel what the free ant's do: its M
    is the free one's leg block, and its tau the legs' part of the free one's at zero base motion."""
    pytest.importorskip("mujoco")
    ant = tmp_path / "ant.xml"
    ant.write_text(ANT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        free, welded = rd.load(ant), rd.load(ant, floating=False)
    q, qd, qdd = np.array([0.3, -0.7]), np.array([0.5, 1.0]), np.array([-0.2, 0.4])
    base = np.array([0, 0, 0.5, 0, 0, 0, 1.0])  # the torso where the file places it (x, y, z, quaternion x y z w)
    zeros = np.zeros(6)
    tau_free = numeric.inverse_dynamics(free, np.r_[base, q], np.r_[zeros, qd], np.r_[zeros, qdd])
    np.testing.assert_allclose(numeric.inverse_dynamics(welded, q, qd, qdd), tau_free[6:], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numeric.mass_matrix(welded, q), numeric.mass_matrix(free, np.r_[base, q])[6:, 6:],
                               rtol=1e-12, atol=1e-12)


def test_root_reads_a_links_subtree(urdf: Path) -> None:
    full, sub = rd.load(urdf), rd.load(urdf, root="l1")
    assert sub.joint_names == ("j2", "j3") and sub.n == 2
    rng = np.random.default_rng(3)
    for _ in range(3):  # l1 at rest (q1 = qd1 = qdd1 = 0): its subtree is the robot on l1
        q, qd, qdd = (rng.uniform(-1, 1, 2) for _ in range(3))
        expected = numeric.inverse_dynamics(full, np.r_[0, q], np.r_[0, qd], np.r_[0, qdd])[1:]
        np.testing.assert_allclose(numeric.inverse_dynamics(sub, q, qd, qdd), expected, rtol=1e-12, atol=1e-12)
    assert rd.load(urdf, root="base") == full
    _refused(lambda: rd.load(urdf, root="l22"), "field 'root': root='l22': no such link; did you mean 'l2'?")
    _refused(lambda: rd.load(urdf, root=3), "root must be a link's name, got int")
    _refused(lambda: rd.load(urdf, root="l3"), "no moving joint")  # a leaf: nothing moves below it


def test_root_refuses_a_loop_that_leaves_the_subtree(tmp_path: Path) -> None:
    path = tmp_path / "loop.urdf"
    path.write_text(URDF.replace("</robot>", '<loop_joint name="close" type="revolute"><link1 link="base"/>'
                                             '<link2 link="l3"/><axis xyz="0 0 1"/></loop_joint></robot>'))
    _refused(lambda: rd.load(path, root="l1", actuated=["j2"]),
             "loop_joint 'close'", "closes a loop between links 'base' and 'l3', one of them outside the subtree")
