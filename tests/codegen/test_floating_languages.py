"""A floating base in every language (issue 31): the NumPy and JAX modules (q of nq entries, the other arrays nv, one
state or a batch), ``rd.compile(backend="numpy" | "jax")``, the CUDA kernels' one-state routines built as host C99,
and ``to_casadi`` of every output (tau, M, h, G, bias, forward, the derivatives in the tangent space, com,
com_jacobian, centroidal_map, centroidal_bias), against Pinocchio with a ``JointModelFreeFlyer`` root at random
states with random unit quaternions (x, y, z, w): a small branched biped written as URDF here (revolute joints on
tilted axes, a prismatic one), and solo12's tau and M (example-robot-data). The JAX module runs eagerly here (jitted,
its forward dynamics derivatives take XLA some 30 s to compile); ``rd.compile(backend="jax")`` is jitted on two
routines."""

from __future__ import annotations

import ctypes
import dataclasses
import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import codegen
from robodyn.model import joints
from robodyn.runtime.toolchain import find_compiler

pin = pytest.importorskip("pinocchio")

BIPED = """<robot name="biped">
  <link name="pelvis"><inertial><origin xyz="0.02 -0.01 0.05"/><mass value="3"/>
    <inertia ixx="0.05" ixy="0.002" ixz="-0.001" iyy="0.06" iyz="0.003" izz="0.04"/></inertial></link>
  <joint name="hip_l" type="revolute"><parent link="pelvis"/><child link="thigh_l"/>
    <origin xyz="0 0.1 -0.05" rpy="0.1 0 0.2"/><axis xyz="1 0 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="10"/></joint>
  <link name="thigh_l"><inertial><origin xyz="0 0 -0.15"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial></link>
  <joint name="knee_l" type="revolute"><parent link="thigh_l"/><child link="shin_l"/>
    <origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="10"/></joint>
  <link name="shin_l"><inertial><origin xyz="0.01 0 -0.15"/><mass value="0.5"/>
    <inertia ixx="0.005" ixy="0.0002" ixz="0" iyy="0.005" iyz="0" izz="0.0005"/></inertial></link>
  <joint name="hip_r" type="revolute"><parent link="pelvis"/><child link="thigh_r"/>
    <origin xyz="0 -0.1 -0.05"/><axis xyz="0 0.6 0.8"/><limit lower="-2" upper="2" effort="10" velocity="10"/></joint>
  <link name="thigh_r"><inertial><origin xyz="0 0 -0.15"/><mass value="1.2"/>
    <inertia ixx="0.012" ixy="0" ixz="0.001" iyy="0.011" iyz="0" izz="0.0012"/></inertial></link>
  <joint name="slide_r" type="prismatic"><parent link="thigh_r"/><child link="shin_r"/>
    <origin xyz="0 0 -0.3"/><axis xyz="0 0 1"/><limit lower="-0.1" upper="0.1" effort="10" velocity="10"/></joint>
  <link name="shin_r"><inertial><origin xyz="0 0.01 -0.1"/><mass value="0.6"/>
    <inertia ixx="0.006" ixy="0" ixz="0" iyy="0.006" iyz="0.0001" izz="0.0006"/></inertial></link>
</robot>
"""
#: Every --outputs key a floating base has.
KEYS = ["tau", "M", "h", "G", "bias", "forward", "dtau", "dqdd", "com", "com_jacobian", "centroidal_map",
        "centroidal_bias"]
#: Every Program output to_casadi gives a floating base.
OUTPUTS = ("tau", "M", "h", "G", "bias", "forward", "dtau_dq", "dtau_dqd", "dqdd_dq", "dqdd_dqd", "dqdd_dtau", "com",
           "com_jacobian", "centroidal_map", "centroidal_bias")
#: Each routine of the generated code: its Program outputs (stacked in this order) and its arguments.
ROUTINES = {"inverse_dynamics": (("tau",), "qva"), "mass_matrix": (("M",), "q"), "coriolis": (("h",), "qv"),
            "bias_forces": (("bias",), "qv"), "gravity": (("G",), "q"), "forward_dynamics": (("forward",), "qvt"),
            "inverse_dynamics_derivatives": (("dtau_dq", "dtau_dqd"), "qva"),
            "forward_dynamics_derivatives": (("dqdd_dq", "dqdd_dqd", "dqdd_dtau"), "qvt"),
            "center_of_mass": (("com",), "q"), "center_of_mass_jacobian": (("com_jacobian",), "q"),
            "centroidal_map": (("centroidal_map",), "q"), "centroidal_bias": (("centroidal_bias",), "qv")}
TOLERANCE = 1e-10  # the generated code against Pinocchio, relative to the largest entry
CASADI_TOLERANCE = 1e-9


class Case:
    """A floating robot loaded by robodyn and by Pinocchio (free-flyer root) from one URDF, and random states."""

    def __init__(self, path: Path, states: int, seed: int) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.robot = rd.load(str(path), floating=True, mimic="independent")
        self.model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        assert self.model.nq == self.robot.nq and not self.model.damping.any()  # (no continuous joint, no damping)
        rng = np.random.default_rng(seed)
        self.q = np.stack([np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, self.robot.n)])
                           for _ in range(states)])
        assert np.allclose(np.linalg.norm(self.q[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-15)
        self.v, self.a, self.tau = (rng.uniform(-1, 1, (states, self.robot.nv)) for _ in range(3))
        self.arrays = {"q": self.q, "v": self.v, "a": self.a, "t": self.tau}
        self._references: dict[int, dict[str, np.ndarray]] = {}

    def reference(self, s: int) -> dict[str, np.ndarray]:
        """Every output of :data:`OUTPUTS` by Pinocchio at state s (each on a fresh Data, kept while its results, views
        of it, are copied)."""
        if s not in self._references:
            self._references[s] = self._pinocchio(s)
        return self._references[s]

    def _pinocchio(self, s: int) -> dict[str, np.ndarray]:
        model, q, v, a, tau = self.model, self.q[s], self.v[s], self.a[s], self.tau[s]

        def call(function: Any, *args: Any) -> Any:
            data = model.createData()
            result = function(model, data, *args)
            return tuple(np.array(x) for x in result) if isinstance(result, tuple) else np.array(result)

        M = call(pin.crba, q)
        G = call(pin.computeGeneralizedGravity, q)
        bias = call(pin.nonLinearEffects, q, v)
        dq, dv, _ = call(pin.computeRNEADerivatives, q, v, a)
        aba = model.createData()
        pin.computeABADerivatives(model, aba, q, v, tau)
        return {"tau": call(pin.rnea, q, v, a), "M": np.triu(M) + np.triu(M, 1).T, "h": bias - G, "G": G,
                "bias": bias, "forward": call(pin.aba, q, v, tau), "dtau_dq": dq, "dtau_dqd": dv,
                "dqdd_dq": np.array(aba.ddq_dq), "dqdd_dqd": np.array(aba.ddq_dv),
                "dqdd_dtau": np.triu(aba.Minv) + np.triu(aba.Minv, 1).T,
                "com": call(pin.centerOfMass, q), "com_jacobian": call(pin.jacobianCenterOfMass, q),
                "centroidal_map": call(pin.computeCentroidalMap, q),
                "centroidal_bias": call(pin.computeCentroidalMapTimeVariation, q, v) @ v}

    def routine_reference(self, routine: str, s: int) -> np.ndarray:
        parts, _ = ROUTINES[routine]
        ref = self.reference(s)
        return np.stack([np.asarray(ref[p]) for p in parts]) if len(parts) > 1 else np.asarray(ref[parts[0]])


def _relative(x: Any, reference: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    assert x.shape == reference.shape
    return float(np.abs(x - reference).max() / max(1.0, float(np.abs(reference).max())))


def _results(function: Any, routine: str, case: Case, s: slice | int) -> np.ndarray:
    """``function``'s result of ``routine`` at the states ``s`` (derivatives given as a tuple stacked as the routine's
    array: (N, 2, n, n) for a batch)."""
    _, args = ROUTINES[routine]
    result = function(*(case.arrays[c][s] for c in args))
    return np.stack([np.asarray(r) for r in result], axis=-3) if isinstance(result, tuple) else np.asarray(result)


def _subset(spec: codegen.ModuleSpec, names: tuple[str, ...]) -> codegen.ModuleSpec:
    """``spec`` with the routines ``names`` only (the constants always): nothing built again."""
    return dataclasses.replace(spec, routines=tuple(r for r in spec.routines if r.name in ("constants", *names)))


@pytest.fixture(scope="module")
def biped(tmp_path_factory: pytest.TempPathFactory) -> Case:
    path = tmp_path_factory.mktemp("biped") / "biped.urdf"
    path.write_text(BIPED)
    return Case(path, 3, 5)


@pytest.fixture(scope="module")
def spec(biped: Case) -> codegen.ModuleSpec:
    return codegen.module_spec(biped.robot, KEYS)


def test_the_numpy_backend_against_pinocchio(biped: Case, spec: codegen.ModuleSpec) -> None:
    """rd.compile(backend="numpy"): every routine on a batch (q (3, nq), the rest (3, nv)) and on each state alone."""
    dyn = rd.compile(biped.robot, outputs=KEYS, backend="numpy", spec=spec)
    assert (dyn.nq, dyn.n, dyn.backend) == (11, 10, "numpy")
    assert set(ROUTINES) == set(dyn.routines)
    for routine in ROUTINES:
        batch = _results(getattr(dyn, routine), routine, biped, slice(None))
        for s in range(len(biped.q)):
            assert _relative(batch[s], biped.routine_reference(routine, s)) < TOLERANCE, routine
            assert np.array_equal(_results(getattr(dyn, routine), routine, biped, s), batch[s]), routine
    # one state's velocities broadcast against a batch of configurations
    tau = dyn.inverse_dynamics(biped.q, biped.v[0], biped.a[0])
    assert tau.shape == (3, 10) and np.array_equal(tau[2], dyn.inverse_dynamics(biped.q[2], biped.v[0], biped.a[0]))


def test_the_jax_module_against_pinocchio(biped: Case, spec: codegen.ModuleSpec) -> None:
    """The generated JAX module (eager), every routine on a batch and on one state, in float64."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    module = codegen.load_python(biped.robot, "jax", spec=spec)
    assert (module.NQ, module.JOINTS) == (11, 10)
    k = module.constants([])
    for routine in ROUTINES:
        function = getattr(module, routine)
        batch = _results(lambda *arrays: function(k, *arrays), routine, biped, slice(None))  # noqa: B023
        for s in range(len(biped.q)):
            assert _relative(batch[s], biped.routine_reference(routine, s)) < TOLERANCE, routine
        if routine in ("inverse_dynamics", "forward_dynamics_derivatives", "centroidal_bias"):  # (eager JAX: slow)
            one = _results(lambda *arrays: function(k, *arrays), routine, biped, 1)  # noqa: B023
            assert _relative(one, batch[1]) < 1e-12, routine


def test_the_jax_backend_jitted(biped: Case, spec: codegen.ModuleSpec) -> None:
    """rd.compile(backend="jax") (each routine jitted), on two routines: a batch, one state, and broadcasting."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    dyn = rd.compile(biped.robot, outputs=["tau", "com"], backend="jax",
                     spec=_subset(spec, ("inverse_dynamics", "center_of_mass")))
    assert (dyn.nq, dyn.n, dyn.backend) == (11, 10, "jax")
    tau = dyn.inverse_dynamics(biped.q, biped.v, biped.a)
    com = dyn.center_of_mass(biped.q)
    assert tau.shape == (3, 10) and com.shape == (3, 3)
    for s in range(len(biped.q)):
        ref = biped.reference(s)
        assert _relative(tau[s], ref["tau"]) < TOLERANCE
        assert _relative(com[s], ref["com"]) < TOLERANCE
    assert _relative(dyn.inverse_dynamics(biped.q[1], biped.v[1], biped.a[1]), tau[1]) < 1e-12
    assert _relative(dyn.inverse_dynamics(biped.q, biped.v[0], biped.a[0])[2],
                     dyn.inverse_dynamics(biped.q[2], biped.v[0], biped.a[0])) < 1e-12


def test_the_generated_numpy_module_checks_each_array_s_length(biped: Case, spec: codegen.ModuleSpec) -> None:
    small = _subset(spec, ("mass_matrix", "coriolis", "center_of_mass"))
    module = codegen.load_python(biped.robot, "numpy", spec=small)
    assert (module.NQ, module.JOINTS) == (11, 10)
    k = module.constants([])
    with pytest.raises(ValueError, match=r"^q must have shape \(11,\) or \(N, 11\), got \(10,\)$"):
        module.mass_matrix(k, biped.v[0])
    with pytest.raises(ValueError, match=r"^qd must have shape \(10,\) or \(N, 10\), got \(3, 11\)$"):
        module.coriolis(k, biped.q, biped.q)
    assert module.center_of_mass(k, biped.q).shape == (3, 3)
    dyn = rd.compile(biped.robot, outputs=["M", "h", "com"], backend="numpy", spec=small)
    with pytest.raises(ValueError, match=r"^q of 'biped' must have shape \(11,\) or \(N, 11\)"):
        dyn.mass_matrix(biped.v[0])
    fixed = codegen.generate(rd.load("two_link_fu"), "numpy", ["tau"])  # a fixed robot's module: one length
    assert "NQ = " not in next(iter(fixed.values()))


def test_to_casadi_against_pinocchio(biped: Case) -> None:
    """Every output as one casadi.Function of (q (nq x 1), qd, qdd, tau): shapes, values, and a mapped batch."""
    ca = pytest.importorskip("casadi")
    from robodyn.codegen.casadi import to_casadi

    f = to_casadi(biped.robot, OUTPUTS)
    assert f.name_in() == ["q", "qd", "qdd", "tau"]
    assert [f.size_in(i) for i in range(4)] == [(11, 1), (10, 1), (10, 1), (10, 1)]
    shapes = {"M": (10, 10), "com": (3, 1), "com_jacobian": (3, 10), "centroidal_map": (6, 10),
              "centroidal_bias": (6, 1), **{d: (10, 10) for d in OUTPUTS if d.startswith("d")}}
    assert [f.size_out(i) for i in range(f.n_out())] == [shapes.get(o, (10, 1)) for o in OUTPUTS]
    arrays = (biped.q, biped.v, biped.a, biped.tau)
    mapped = f.map(len(biped.q))(*(x.T for x in arrays))  # the states as columns, side by side
    for s in range(len(biped.q)):
        ref = biped.reference(s)
        got = f(*(x[s] for x in arrays))
        for i, output in enumerate(OUTPUTS):
            value = np.array(got[i])
            value = value.ravel() if value.shape[1] == 1 else value
            assert _relative(value, np.asarray(ref[output])) < CASADI_TOLERANCE, output
            width = f.size_out(i)[1]
            assert np.array_equal(np.array(mapped[i])[:, s * width:(s + 1) * width], np.array(got[i])), output
    assert isinstance(f, ca.Function)


def test_to_casadi_of_a_named_frame_against_pinocchio(biped: Case) -> None:
    """A frame's pose (4 x 4), Jacobians (6 x nv) and their time derivatives as CasADi outputs, named without the
    ':' CasADi refuses."""
    pytest.importorskip("casadi")
    import pinocchio as pin

    from robodyn.codegen.casadi import to_casadi

    outputs = ["pose:shin_r", "jacobian_world:shin_r", "jacobian_local_dot:shin_r"]
    f = to_casadi(biped.robot, outputs)
    assert f.name() == "biped_pose_shin_r_jacobian_world_shin_r_jacobian_local_dot_shin_r"
    assert f.name_out() == ["pose_shin_r", "jacobian_world_shin_r", "jacobian_local_dot_shin_r"]
    assert [f.size_out(i) for i in range(3)] == [(4, 4), (6, 10), (6, 10)]
    model, data = biped.model, biped.model.createData()
    frame = model.getFrameId("shin_r")
    for s in range(len(biped.q)):
        q, v = biped.q[s], biped.v[s]
        pin.computeJointJacobiansTimeVariation(model, data, q, v)
        pin.updateFramePlacements(model, data)
        pose, J, dJ = (np.array(x) for x in f(q, v))
        assert _relative(pose, data.oMf[frame].homogeneous) < CASADI_TOLERANCE
        assert _relative(J, pin.getFrameJacobian(model, data, frame, pin.WORLD)) < CASADI_TOLERANCE
        assert _relative(dJ, pin.getFrameJacobianTimeVariation(model, data, frame, pin.LOCAL)) < CASADI_TOLERANCE


def test_the_cuda_kernels_one_state_routines_as_host_c(biped: Case, spec: codegen.ModuleSpec, tmp_path: Path) -> None:
    """The CUDA file (each kernel steps through q by nq, the rest by nv) built as host C99: its one-state routines
    against Pinocchio (the kernels themselves need NVRTC and a GPU: rd.compile(backend="cuda") still refuses)."""
    compiler = find_compiler()
    if not compiler:
        pytest.skip("no C compiler")

    names = ("constants", "inverse_dynamics", "forward_dynamics", "center_of_mass_jacobian", "centroidal_bias")
    small = _subset(spec, names[1:])
    (name, text), = codegen.generate(None, "cuda", spec=small).items()
    assert "q + 11ull * s, qd + 10ull * s" in text
    source, library = tmp_path / name, tmp_path / f"{name}.so"
    source.write_text(text)
    command = [*compiler, "-std=c99", "-Wall", "-Werror", "-O1", "-fPIC", "-shared", "-x", "c", str(source), "-o",
               str(library), "-lm"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    host = ctypes.CDLL(str(library))
    k = np.zeros(max(small.n_constants, 1))
    host[f"{small.name}_constants"](ctypes.c_void_p(np.zeros(1).ctypes.data), ctypes.c_void_p(k.ctypes.data))
    for routine in names[1:]:
        shape = small.routine(routine).output.shape
        for s in range(len(biped.q)):
            arrays = [np.ascontiguousarray(biped.arrays[c][s]) for c in ROUTINES[routine][1]]
            out = np.empty(shape)
            host[f"{small.name}_{routine}"](*(ctypes.c_void_p(a.ctypes.data) for a in (k, *arrays, out)))
            assert _relative(out, biped.routine_reference(routine, s)) < TOLERANCE, routine


def test_solo12_numpy_and_casadi_against_pinocchio() -> None:
    """A quadruped of example-robot-data (nq 19, nv 18): the NumPy module's and to_casadi's tau and M."""
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None:
        pytest.skip("example-robot-data is not installed")
    pytest.importorskip("casadi")
    from robodyn.codegen.casadi import to_casadi

    solo = Case(directory / "solo_description/robots/solo12.urdf", 3, 12)
    module = codegen.load_python(solo.robot, "numpy", ["tau", "M"])
    f = to_casadi(solo.robot, ("tau", "M"))
    k = module.constants([])
    tau, M = module.inverse_dynamics(k, solo.q, solo.v, solo.a), module.mass_matrix(k, solo.q)
    assert tau.shape == (3, 18) and M.shape == (3, 18, 18)
    for s in range(len(solo.q)):
        ref = solo.reference(s)
        assert _relative(tau[s], ref["tau"]) < TOLERANCE and _relative(M[s], ref["M"]) < TOLERANCE
        got = f(solo.q[s], solo.v[s], solo.a[s])
        assert _relative(np.array(got[0]).ravel(), ref["tau"]) < CASADI_TOLERANCE
        assert _relative(np.array(got[1]), ref["M"]) < CASADI_TOLERANCE
