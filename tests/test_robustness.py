"""Hardening: simulations that cannot hang (non-finite states, bad options, runaway integrations) and one
inertia check, with its documented rounding tolerance, on every path (model files, URDF, params=, the
identification). Whatever could hang runs in another process bounded in CPU time (a hang spins: a slow run on a
loaded machine is not one), with a wall-clock bound of several minutes as a last resort: the command lines together
in one driver process of the fuzz harness (:data:`BATCHED`, each run bounded on its own), the rest each in its own
subprocess."""

from __future__ import annotations

import importlib.metadata
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn import numeric
from robodyn.analysis.simulation import MAX_MAGNITUDE, NonFiniteStateError, SimulationError, simulate
from robodyn.model.inertia import TOLERANCE, as_inertia, check_inertia
from tests.conftest import load_quiet

#: CPU-time bound (seconds) of every subprocess: the hangs these tests guard against ran forever, spinning, and a
#: bound on CPU time stops them without failing a correct run that a loaded machine slows down.
CPU_SECONDS = 120
#: Wall-clock bound (seconds), a last resort only (a subprocess blocked without using CPU).
WALL_SECONDS = 600
DOUBLE = {"L1": 1.0, "L2": 0.5, "m1": 2.0, "m2": 1.0}
#: The double pendulum with m2 = 0: M is singular everywhere (det M = L1^2 L2^2 m2 (m1 + m2 sin^2 q2)).
SINGULAR = ["--param", "L1=1", "--param", "L2=0.5", "--param", "m1=2", "--param", "m2=0"]
PARAMS = ["--param", "L1=1", "--param", "L2=0.5", "--param", "m1=2", "--param", "m2=1"]
STANFORD = {"m1": 5.0, "m2": 3.0, "m3": 2.0, "y1": 0.05, "z1": 0.1, "d2": 0.15, "y2": 0.1, "z3": -0.2,
            **{f"I{axis}{i}": 0.1 for axis in ("xx", "yy", "zz") for i in (1, 2, 3)}, "g": 9.81}


def _limit_cpu() -> None:
    """In the child before it runs (preexec_fn): SIGXCPU after CPU_SECONDS of CPU time, SIGKILL soon after."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 10))


def _bounded(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` run to completion, bounded in CPU time (where the platform has RLIMIT_CPU) and, as a last
    resort, in wall-clock time; a run stopped by the CPU bound fails the test as a hang."""
    limit = _limit_cpu if sys.platform != "win32" else None
    proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=WALL_SECONDS,
                          preexec_fn=limit)
    if limit is not None and proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        pytest.fail(f"hang: {command[1:3]} stopped by signal {-proc.returncode} (CPU bound {CPU_SECONDS} s)\n"
                    f"{proc.stderr[-2000:]}")
    return proc


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return _bounded([sys.executable, "-m", "robodyn.cli", *args])


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return _bounded([sys.executable, "-c", textwrap.dedent(code)])


#: The command lines of the tests below that read no file of their own: name -> (arguments, files written in the
#: run's working directory first). They run once for the module in one driver process of the fuzz harness
#: (tests/fuzz/harness.py, as `python -m robodyn.cli` but without a process start each: every run in its own
#: working directory with its own CPU-time bound of CPU_SECONDS, a hang or a dead driver failing that run only).
BATCHED: dict[str, tuple[list[str], dict[str, Any]]] = {}


def _batch(name: str, *args: str, setup: dict[str, Any] | None = None) -> str:
    BATCHED[name] = (list(args), setup or {})
    return name


@pytest.fixture(scope="module")
def batched() -> dict[str, dict[str, Any]]:
    """Every run of :data:`BATCHED`: name -> the harness's result (exit code, stdout, stderr, files created)."""
    from tests.fuzz import harness

    entries = [{"id": name, "args": args, "setup": setup, "expect": "refuse", "timeout": CPU_SECONDS}
               for name, (args, setup) in BATCHED.items()]
    return harness.run_entries(entries, workers=1)


def _run(batched: dict[str, dict[str, Any]], name: str) -> subprocess.CompletedProcess[str]:
    """The batched run ``name`` as a finished process; a run past its CPU-time bound, or whose driver died, fails
    the test as a hang (or a crash)."""
    result = batched.get(name)
    if result is None or result["event"] == "died" or result["timed_out"]:
        kind = "hang" if result is not None and result["timed_out"] else "crash"
        pytest.fail(f"{kind}: {BATCHED[name][0][:2]} (CPU bound {CPU_SECONDS} s)\n"
                    f"{(result or {}).get('stderr', 'no result')[-2000:]}")
    return subprocess.CompletedProcess(BATCHED[name][0], result["exit"], result["stdout"], result["stderr"])


def _one_line_error(proc: subprocess.CompletedProcess[str], *words: str) -> str:
    """The CLI's refusal: exit 2, one line ``error: ...`` on stderr, no traceback; the line is returned."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def _has_compiler() -> bool:
    from robodyn.runtime import find_compiler

    try:
        return bool(find_compiler())
    except Exception:
        return False


ENGINES = ["lambdify", "numpy", pytest.param("compiled", marks=pytest.mark.skipif(
    not _has_compiler(), reason="no C compiler for the compiled engine"))]


# -- simulations that used to hang ------------------------------------------------------------------------


SINGULAR_RUNS = {engine: _batch(f"singular-{engine}", "simulate", "double_pendulum", *SINGULAR, "--q0", "0.5,0.5",
                                 "--t-end", "1", "--engine", engine, "--csv", "motion.csv")
                 for engine in ("lambdify", "numpy", *(["compiled"] if _has_compiler() else []))}


@pytest.mark.parametrize("engine", ENGINES)
def test_singular_mass_matrix_stops_with_one_line_on_every_engine(engine: str,
                                                                  batched: dict[str, dict[str, Any]]) -> None:
    """m2 = 0 makes M singular: the compiled engine's LDL^T gave NaN and solve_ivp looped forever on it."""
    name = SINGULAR_RUNS[engine]
    _one_line_error(_run(batched, name), "singular", "t = 0 s")
    assert "motion.csv" not in batched[name]["created"]


OPTIONS = [
    ("--rtol", "nan", ("rtol", "(0, 1)")),
    ("--rtol", "0", ("rtol",)),
    ("--rtol", "2", ("rtol",)),
    ("--atol", "-1", ("atol", "positive")),
    ("--atol", "inf", ("atol",)),
    ("--qd0", "1e300,0", ("qd0", "magnitude")),
    ("--q0", "nan,0", ("q0", "finite")),
    ("--q0", "1,2,3", ("--q0", "2 numbers")),
    ("--q0", ",", ("--q0",)),
    ("--method", "Euler", ("method", "RK45")),
    ("--t-end", "0", ("--t-end",)),
    ("--t-end", "inf", ("--t-end",)),
    ("--samples", "1", ("--samples",)),
    ("--max-evaluations", "0", ("max_evaluations",)),
]
for _option, _value, _ in OPTIONS:
    _batch(f"option{_option}={_value}", "simulate", "double_pendulum", *PARAMS, "--t-end", "1", _option, _value)


@pytest.mark.parametrize(("option", "value", "words"), OPTIONS)
def test_simulate_options_are_checked_first(option: str, value: str, words: tuple[str, ...],
                                            batched: dict[str, dict[str, Any]]) -> None:
    _one_line_error(_run(batched, f"option{option}={value}"), *words)


RUNAWAY = _batch("runaway", "simulate", "double_pendulum", *PARAMS, "--qd0", "1e8,0", "--t-end", "1",
                 "--max-evaluations", "5000")


def test_runaway_integration_gives_up_after_max_evaluations(batched: dict[str, dict[str, Any]]) -> None:
    """1e8 rad/s: RK45 would need about 10^8 evaluations; the bound stops it with one line saying at which t."""
    _one_line_error(_run(batched, RUNAWAY), "gave up at t = ", "5000 evaluations", "Radau")


def test_api_non_finite_states_and_runaways_stop_on_every_engine() -> None:
    """In a subprocess (bounded in CPU time): a torque function returning 1e300 (which would shrink the step to
    1e-150 s, never overflowing) and one blowing up in finite time stop with a SimulationError naming the torque
    function and the time, on every engine and with explicit and implicit methods."""
    engines = ["lambdify", "numpy", *(["compiled"] if _has_compiler() else [])]
    proc = _python(f"""
        import warnings
        warnings.simplefilter("ignore")
        import robodyn as rd
        from robodyn.analysis.simulation import NonFiniteStateError, SimulationError, simulate
        robot = rd.load("double_pendulum")
        for engine in {engines!r}:
            for method in ("RK45", "Radau", "LSODA"):
                try:
                    simulate(robot, 1.0, [0.5, 0.5], torque=lambda t, q, qd: [1e300, -1e300], params={DOUBLE!r},
                             engine=engine, method=method)
                except SimulationError as exc:
                    print("bounded", engine, method, "torque function returned" in str(exc) and "\\n" not in str(exc))
                try:
                    simulate(robot, 1.0, [0.5, 0.5], torque=lambda t, q, qd: [1 / (0.5 - t) ** 3, 0.0],
                             params={DOUBLE!r}, engine=engine, method=method, max_evaluations=200_000)
                except SimulationError as exc:
                    print("stopped", engine, method, "at t = 0.49" in str(exc) and "\\n" not in str(exc))
    """)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    for engine in engines:
        for method in ("RK45", "Radau", "LSODA"):
            assert f"bounded {engine} {method} True" in lines, proc.stdout
            assert f"stopped {engine} {method} True" in lines, proc.stdout


OVERFLOWS = [
    (_batch("overflow-q0", "linearize", "double_pendulum", *PARAMS, "--q0", "1e300,0"), ("q0", "magnitude")),
    (_batch("overflow-dt", "linearize", "double_pendulum", *PARAMS, "--dt", "1e300"), ("dt", "not finite")),
    (_batch("overflow-tau0", "linearize", "double_pendulum", *PARAMS, "--tau0", "1,2,3"), ("--tau0",)),
    (_batch("overflow-csv", "torques", "double_pendulum", *PARAMS, "-t", "huge.csv",
            setup={"write": [["huge.csv", "t,q1,q2\n0,0,0\n1,1e300,1\n2,0,0\n"]]}), ("not finite",)),
]


def test_linearize_and_torques_refuse_values_that_overflow(batched: dict[str, dict[str, Any]]) -> None:
    for name, words in OVERFLOWS:
        _one_line_error(_run(batched, name), *words)


# -- simulate's options through the API -------------------------------------------------------------------


def _bad_torque(value: object) -> object:
    return lambda t, q, qd: value


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"t_span": (0.0,)}, "t_span"),  # was an IndexError with a traceback
        ({"t_span": (0.0, 1.0, 2.0)}, "t_span"),
        ({"t_span": "a"}, "t_span"),
        ({"t_span": None}, "t_span"),
        ({"t_span": 0.0}, "t_span"),
        ({"t_span": (1.0, 0.0)}, "t_span"),
        ({"samples": 0}, "samples"),  # was an AttributeError
        ({"samples": 1}, "samples"),
        ({"samples": 2.5}, "samples"),
        ({"t_eval": []}, "t_eval"),  # was an AttributeError
        ({"t_eval": [np.nan]}, "t_eval"),
        ({"t_eval": [[0.1]]}, "t_eval"),
        ({"t_eval": [5.0]}, "t_eval"),
        ({"rtol": np.nan}, "rtol"),  # solve_ivp looped forever
        ({"rtol": "x"}, "rtol"),
        ({"rtol": [1e-6, 1e-6]}, "rtol"),
        ({"atol": 0.0}, "atol"),
        ({"atol": -1.0}, "atol"),
        ({"max_step": 0.0}, "max_step"),
        ({"max_step": np.nan}, "max_step"),
        ({"method": "Euler"}, "method"),
        ({"method": int}, "method"),
        ({"q0": [1.0, 2.0, 3.0]}, "q0"),
        ({"q0": []}, "q0"),
        ({"q0": [np.inf, 0.0]}, "q0"),
        ({"qd0": [1e300, 0.0]}, "qd0"),
        ({"qd0": [2 * MAX_MAGNITUDE, 0.0]}, "qd0"),
        ({"torque": [1.0]}, "torque"),
        ({"torque": _bad_torque(1.0)}, "torque"),
        ({"torque": _bad_torque([1.0, 2.0, 3.0])}, "torque"),
        ({"torque": _bad_torque(None)}, "torque"),  # was taken as zero torque
        ({"torque": _bad_torque([np.nan, 0.0])}, "torque"),
        ({"engine": "fast"}, "engine"),
        ({"max_evaluations": 0}, "max_evaluations"),
        ({"max_evaluations": 1.5}, "max_evaluations"),
    ],
)
def test_simulate_refuses_bad_options_with_one_line(options: dict, field: str) -> None:
    robot = load_quiet("double_pendulum")
    arguments = {"t_span": 0.1, **options}
    with pytest.raises(SimulationError) as info:
        simulate(robot, params=DOUBLE, **arguments)
    assert info.value.field == field and "\n" not in str(info.value)


def test_valid_per_component_tolerances_and_t_eval_still_work() -> None:
    robot = load_quiet("double_pendulum")
    result = simulate(robot, 0.5, [0.3, 0.0], params=DOUBLE, rtol=1e-9, atol=[1e-10] * 4, t_eval=[0.0, 0.25, 0.5])
    assert result.t.tolist() == [0.0, 0.25, 0.5] and np.all(np.isfinite(result.q))
    assert result.energy_drift() < 1e-6


def test_evaluation_bound_counts_evaluations() -> None:
    robot = load_quiet("double_pendulum")
    with pytest.raises(SimulationError, match=r"gave up at t = .* after 50 evaluations") as info:
        simulate(robot, 1.0, [0.5, 0.5], params=DOUBLE, max_evaluations=50)
    assert info.value.field == "max_evaluations"
    assert simulate(robot, 0.01, [0.5, 0.5], params=DOUBLE, max_evaluations=None).nfev > 0


@pytest.mark.skipif(not _has_compiler(), reason="no C compiler for the compiled engine")
def test_non_finite_state_error_is_a_simulation_error_naming_the_time() -> None:
    """m2 = 0 makes M singular: the compiled engine's LDL^T returns NaN, which stops the integration at once."""
    robot = load_quiet("double_pendulum")
    with pytest.raises(NonFiniteStateError, match=r"not finite at t = 0 s .*q = \(0.5, 0.5\)") as info:
        simulate(robot, 1.0, [0.5, 0.5], params={**DOUBLE, "m2": 0.0}, engine="compiled")
    assert isinstance(info.value, SimulationError) and isinstance(info.value, rd.ModelError)


# -- the inertia check and its tolerance -------------------------------------------------------------------


def test_rounding_noise_passes_with_a_warning_and_real_violations_are_refused() -> None:
    """iCub's ixx = -5.4e-20 beside moments of 1e-4 is noise; -1e-3 beside them is a real violation."""
    with pytest.warns(rd.ModelWarning, match="rounding noise"):
        check_inertia(as_inertia([-5.4e-20, 1e-4, 1e-4]), mass=0.5, where="link 1")
    with pytest.raises(rd.ModelError, match=r"not positive semidefinite.*negative"):
        check_inertia(as_inertia([-1e-3, 1e-4, 1e-4]), mass=0.5)
    with pytest.raises(rd.ModelError, match="negative"):  # a symbolic tensor: its numeric diagonal entries
        check_inertia(as_inertia([-1e-3, sympy.Symbol("Iyy"), 1e-4]), mass=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_inertia(as_inertia([[0.02, 1e-17, 0], [1e-17, 0.02, 0], [0, 0, 0.01]]), mass=1.0)  # PSD: silent


def test_tolerance_scale_is_the_largest_moment_or_the_mass() -> None:
    """A point mass (moments all zero up to noise) passes by its mass; without mass the noise is the scale."""
    with pytest.warns(rd.ModelWarning):  # iCub's r_hip_2: 0.526 kg, ixx = iyy = -5.42101e-20, izz = 0
        check_inertia(as_inertia([-5.42101e-20, -5.42101e-20, 0.0]), mass=0.526, where="r_hip_2")
    with pytest.warns(rd.ModelWarning):  # iCub's head: all zero but ixz = 2.40741e-35
        check_inertia(as_inertia([[0, 0, 2.40741e-35], [0, 0, 0], [2.40741e-35, 0, 0]]), mass=1.33687)
    with pytest.raises(rd.ModelError):
        check_inertia(as_inertia([-5.42101e-20, -5.42101e-20, 0.0]), mass=0)
    edge = 0.5 * TOLERANCE * 2.0
    with pytest.warns(rd.ModelWarning):
        check_inertia(as_inertia([-edge, 1.0, 1.0]), mass=2.0)
    with pytest.raises(rd.ModelError):
        check_inertia(as_inertia([-3 * edge, 1.0, 1.0]), mass=2.0)


def test_model_file_link_with_noise_loads_and_with_a_violation_is_refused() -> None:
    row = {"joint": "R", "a": 0.3, "alpha": 0, "d": 0, "theta": 0, "mass": 0.5}
    with pytest.warns(rd.ModelWarning, match=r"link 1.*rounding noise"):
        rd.Manipulator.from_dh([{**row, "inertia": [-5.4e-20, 1e-4, 1e-4]}])
    with pytest.raises(rd.ModelError, match=r"link 1.*inertia.*negative"):
        rd.Manipulator.from_dh([{**row, "inertia": [-1e-3, 1e-4, 1e-4]}])


# -- parameters bound at use time --------------------------------------------------------------------------


@pytest.mark.parametrize(("bad", "field"), [({"Ixx2": -1e-3}, "inertia"), ({"m3": -1.0}, "mass")])
def test_non_physical_values_bound_with_params_are_refused_on_every_path(bad: dict, field: str) -> None:
    from robodyn import identification as ident

    robot = load_quiet("stanford_modified")
    values = {**STANFORD, **bad}
    link = "link 2" if "Ixx2" in bad else "link 3"
    calls = [
        lambda: numeric.mass_matrix(robot, np.zeros(3), params=values),
        lambda: simulate(robot, 0.1, params=values, engine="numpy"),
        lambda: ident.numeric_values(robot, values),
        lambda: ident.numeric_regressor(robot, np.zeros(3), np.zeros(3), np.zeros(3), params=values),
    ]
    for call in calls:
        with pytest.raises(rd.ModelError) as info:
            call()
        message = str(info.value)
        assert link in message and f"field '{field}'" in message and "\n" not in message, message
    with pytest.raises(rd.ModelError, match=link):
        robot.subs(values)
    assert numeric.mass_matrix(robot, np.zeros(3), params=STANFORD).shape == (3, 3)  # physical values pass
    noise = {**STANFORD, "Ixx2": -1e-14}  # rounding noise beside a 3 kg link: accepted
    assert np.all(np.isfinite(numeric.mass_matrix(robot, np.zeros(3), params=noise)))


NON_PHYSICAL = _batch("non-physical", "simulate", "stanford_modified",
                      *(x for k, v in {**STANFORD, "Ixx2": -1e-3}.items() for x in ("--param", f"{k}={v}")),
                      "--t-end", "0.1")


def test_cli_refuses_non_physical_params(batched: dict[str, dict[str, Any]]) -> None:
    _one_line_error(_run(batched, NON_PHYSICAL), "link 2", "inertia")


# -- URDF --------------------------------------------------------------------------------------------------

ICUB_LIKE = """<?xml version="1.0"?>
<robot name="icub_like">
  <link name="root_link"/>
  <joint name="hip_pitch" type="revolute"><parent link="root_link"/><child link="hip_1"/>
    <origin xyz="0 -0.068 -0.1199" rpy="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="hip_1"><inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="0.754"/>
    <inertia ixx="0.00047" ixy="0" ixz="0" iyy="0.00047" iyz="0" izz="0.00054"/></inertial></link>
  <joint name="hip_roll" type="revolute"><parent link="hip_1"/><child link="hip_2"/>
    <origin xyz="0 0 0" rpy="1.5708 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="hip_2"><inertial><origin xyz="0.02 0 0" rpy="0 0 0"/><mass value="0.526"/>
    <inertia ixx="{hip_ixx}" ixy="0" ixz="0" iyy="{hip_iyy}" iyz="0" izz="0"/></inertial></link>
  <joint name="sensor" type="fixed"><parent link="hip_2"/><child link="head"/>
    <origin xyz="0.1 0 0" rpy="0 0 0"/></joint>
  <link name="head"><inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="1.33687"/>
    <inertia ixx="{head_ixx}" ixy="0" ixz="{head_ixz}" iyy="0" iyz="0" izz="0"/></inertial></link>
</robot>
"""


def test_urdf_with_icub_rounding_noise_loads_and_matches_the_same_model_without_it(tmp_path: Path) -> None:
    pytest.importorskip("lxml")
    noisy, clean = tmp_path / "noisy.urdf", tmp_path / "clean.urdf"
    noisy.write_text(_icub_like(hip_ixx="-5.42101e-20", hip_iyy="-5.42101e-20", head_ixz="2.40741e-35"))
    clean.write_text(_icub_like())
    with pytest.warns(rd.ModelWarning, match="rounding noise"):
        robot = rd.load(noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        reference = rd.load(clean)
    q = np.array([0.3, -0.7])
    np.testing.assert_allclose(numeric.mass_matrix(robot, q), numeric.mass_matrix(reference, q), rtol=0, atol=1e-15)
    np.testing.assert_allclose(numeric.gravity(robot, q), numeric.gravity(reference, q), rtol=0, atol=1e-12)


def _icub_like(**values: str) -> str:
    return ICUB_LIKE.format(**{"hip_ixx": "0", "hip_iyy": "0", "head_ixx": "0", "head_ixz": "0", **values})


URDF_VIOLATIONS = {
    link: _batch(f"urdf-{link}", "derive", "bad.urdf", setup={"write": [
        ["bad.urdf", _icub_like(**{"hip_ixx" if link == "hip_2" else "head_ixx": "-1e-3"})]]})
    for link in ("hip_2", "head")}


@pytest.mark.parametrize("link", ["hip_2", "head"])
def test_urdf_violation_is_refused_naming_the_urdf_link(link: str, batched: dict[str, dict[str, Any]]) -> None:
    """head is fixed to hip_2 and merged with it: its own -1e-3 is refused although the merged tensor (head's
    mass 10 cm away) would be positive definite."""
    pytest.importorskip("lxml")
    _one_line_error(_run(batched, URDF_VIOLATIONS[link]), f"link '{link}'", "inertia", "negative")


def _icub_urdf() -> Path:
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    for f in dist.files or []:
        if str(f).endswith("icub_description/robots/icub_reduced.urdf"):
            return Path(dist.locate_file(f))
    pytest.skip("example-robot-data ships no iCub")


def test_icub_right_leg_loads_and_matches_pinocchio() -> None:
    """The real iCub URDF (ixx = -5.4e-20 on r_hip_2...): its right leg, every other joint locked at 0."""
    pytest.importorskip("lxml")
    pin = pytest.importorskip("pinocchio")
    from robodyn.formats.urdf import read_urdf
    from tests.formats.test_urdf import _compare

    path = _icub_urdf()
    full = pin.buildModelFromUrdf(str(path))
    leg = ("r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll")
    locked = [name for name in list(full.names)[1:] if name not in leg]
    with pytest.warns(rd.ModelWarning, match="rounding noise"):
        robot = read_urdf(path, lock=dict.fromkeys(locked, 0.0))
    assert robot.n == 6
    reduced = pin.buildReducedModel(full, [full.getJointId(name) for name in locked], pin.neutral(full))
    assert _compare(robot, reduced) < 1e-9


# -- numbers too large for double precision, and text for the terminal -----------------------------------


HUGE_G = _batch("huge-g", "torques", "double_pendulum", *PARAMS, "--param", "g=1e21")


def test_model_numbers_and_parameter_values_are_bounded(batched: dict[str, dict[str, Any]]) -> None:
    """A finite number so large that the dynamics' products overflow is refused at the door, naming the
    field (it used to put inf into generated code: a NameError in Python, INFINITY in C)."""
    from robodyn.model.expr import MAX_MAGNITUDE as BOUND

    row = {"joint": "R", "a": 1.0, "mass": 1.0}
    for value in (1e200, 10**25, "1e30*L1", "-2e21"):
        with pytest.raises(rd.ModelError, match=r"link 1: field 'a'.*magnitude above"):
            rd.Manipulator.from_dh([{**row, "a": value}])
    assert rd.Manipulator.from_dh([{**row, "a": BOUND}]).links[0].a == BOUND
    robot = load_quiet("double_pendulum")
    with pytest.raises(rd.ModelError, match="parameter L1 must be at most"):
        numeric.gravity(robot, np.zeros(2), params={**DOUBLE, "g": 9.81, "L1": 1e200})
    _one_line_error(_run(batched, HUGE_G), "--param", "parameter g")


def test_constants_that_overflow_are_one_model_error() -> None:
    """Numbers within the bound whose products still overflow (L1**64) stop with one line naming the cause,
    in the traced numeric engine, never as inf in the source."""
    from robodyn.errors import finite_constant

    assert finite_constant(2.5) == 2.5
    for bad in (float("inf"), float("nan"), sympy.Float("1e400"), sympy.Integer(10) ** 400):
        with pytest.raises(rd.ModelError, match="not a finite double"):
            finite_constant(bad)
    huge = rd.Manipulator.from_dh([{"joint": "R", "a": "L1**16", "mass": 1.0},
                                   {"joint": "R", "a": "L1**16", "mass": 1.0}], name="huge")
    with pytest.raises(rd.ModelError, match="not a finite"):  # (1e19)**16 = 1e304: its square overflows
        numeric.inverse_dynamics(huge, np.zeros(2), np.ones(2), np.ones(2), params={"L1": 1e19, "g": 9.81})
    numeric_huge = huge.subs({"L1": 10, "g": 9.81})  # 1e16 each: within the bound, the torques stay finite
    assert np.all(np.isfinite(numeric.inverse_dynamics(numeric_huge, np.zeros(2), np.ones(2), np.ones(2))))


def test_emitters_refuse_a_literal_that_is_not_a_finite_double() -> None:
    """The last guard behind the bounds at the door: no emitter writes inf, nan or 1e400 into source."""
    import symengine as se

    from robodyn.codegen.numpy_ import literal
    from robodyn.codegen.spec import to_printable

    assert to_printable(se.Float(2.5) * se.Symbol("x")) == sympy.Float(2.5, 17) * sympy.Symbol("x")
    for bad in (se.Float(float("inf")), se.Integer(10) ** 400, se.Rational(10**400, 3)):
        with pytest.raises(rd.ModelError, match="not a finite double"):
            to_printable(bad * se.Symbol("x"))
    assert literal(0.5).text == "0.5"
    with pytest.raises(rd.ModelError, match="not a finite double"):
        literal(float("inf"))


def test_read_expression_refuses_division_by_a_float_zero() -> None:
    from robodyn.model.expr import read_expression

    x = sympy.Symbol("x")
    for text in ("x/0.0", "x/0", "x/(1 - 1.0)"):
        with pytest.raises(rd.ModelError, match="division by zero"):
            read_expression(text, {"x": x})


def test_messages_and_show_escape_terminal_control_characters(tmp_path: Path) -> None:
    """ESC from a model file would retitle the terminal or colour it; U+202E would reverse the text."""
    from robodyn.errors import printable

    assert printable("a\x1b]0;PWN\x07 b\u202ec\n d") == "a\\x1b]0;PWN\\x07 b\\u202ec d"
    model = tmp_path / "esc.yaml"
    model.write_text('name: esc\ndescription: "\\e[31mRED \\u202e"\nlinks:\n  - {joint: R, a: 1, mass: 1, '
                     '"\\e]0;x": 1}\n', encoding="utf-8")
    refused = _cli("show", str(model))
    assert "\x1b" not in refused.stderr and "\\x1b" in _one_line_error(refused)
    model.write_text('name: esc\ndescription: "\\e[31mRED \\u202e"\nlinks:\n  - {joint: R, a: 1, mass: 1}\n',
                     encoding="utf-8")
    shown = _cli("show", str(model))
    assert shown.returncode == 0 and "\x1b" not in shown.stdout and "\u202e" not in shown.stdout
    assert "\\x1b[31mRED \\u202e" in shown.stdout


TWICE = _batch("twice", "torques", "double_pendulum", *PARAMS, "--param", "L1=2")


def test_a_parameter_given_twice_is_refused(batched: dict[str, dict[str, Any]]) -> None:
    _one_line_error(_run(batched, TWICE), "--param", "given twice")


def test_identification_refuses_non_finite_parameter_values() -> None:
    from robodyn import identification as ident

    robot = load_quiet("stanford_modified")
    for value in (float("nan"), float("inf"), "abc"):
        with pytest.raises(rd.ModelError, match="parameter m1"):
            ident.numeric_values(robot, {**STANFORD, "m1": value})


def test_inertia_near_the_largest_double_is_one_error_not_a_traceback() -> None:
    with pytest.raises(rd.ModelError, match="magnitude above"):
        rd.Manipulator.from_dh([{"joint": "R", "a": 1, "mass": 1, "inertia": [1e308, 1e308, 1e308]}])
    with pytest.raises(rd.ModelError, match="not all finite"):
        check_inertia(np.full((3, 3), np.inf), mass=1.0)
    check_inertia(np.diag([1e308, 1e308, 1e308]), mass=1.0)  # halves first: no overflow in the symmetric part


@pytest.mark.parametrize("name", rd.library.names())
def test_random_parameter_values_are_physical_for_every_built_in_robot(name: str) -> None:
    """What the demo binds to check its compiled C (``./scripts/demo`` on the symbolic PUMA stopped on a
    non-physical inertia when the values were drawn without regard to the tensors)."""
    from robodyn.model.loops import open_tree
    from robodyn.model.params import random_values
    from robodyn.numeric.model import build

    robot = load_quiet(name)
    for seed in range(5):
        values = random_values(robot, np.random.default_rng(seed), 0.1, 1.0)
        build(open_tree(robot) if robot.implicit else robot, {**values, **({"g": 9.81} if "g" in values else {})})


# -- implicit loops at states that are not finite ---------------------------------------------------------------
@pytest.mark.parametrize("call", ["inverse_dynamics", "mass_matrix", "forward_dynamics", "gravity", "bias_forces",
                                  "positions"])
def test_implicit_loops_at_a_non_finite_state_give_nan_there_as_the_tree_recursions_do(call: str) -> None:
    """The five-bar (one implicit loop, Newton's method for its passive joints) in a batch where one state's q holds
    NaN and one's inf: those rows NaN, as the PUMA's own recursions give for a NaN q (no SVD error, no iteration),
    and the finite state's row exactly its value alone."""
    from robodyn.numeric import closed_chains

    fivebar = load_quiet("fivebar")
    q = np.array([[0.1, -0.2], [np.nan, 0.3], [0.2, np.inf]])
    qd = np.array([[0.3, 0.1]] * 3)
    args = {"inverse_dynamics": (q, qd, qd), "mass_matrix": (q,), "forward_dynamics": (q, qd, qd),
            "gravity": (q,), "bias_forces": (q, qd), "positions": (q,)}[call]
    batch = getattr(closed_chains, call)(fivebar, *args)
    alone = getattr(closed_chains, call)(fivebar, *(a[0] for a in args))
    assert np.isfinite(alone).all()
    np.testing.assert_array_equal(batch[0], alone)
    assert np.isnan(batch[1:]).all()
    puma = load_quiet("puma560")
    puma_q = np.full(6, 0.3)
    puma_q[1] = np.nan
    assert np.isnan(numeric.inverse_dynamics(puma, puma_q, np.zeros(6), np.zeros(6))[1:3]).all()


# -- the default trajectory of a robot with implicit loops ----------------------------------------------------------
def test_torques_of_the_fivebar_run_along_a_default_trajectory_where_its_loop_closes(tmp_path: Path) -> None:
    """``robodyn torques fivebar`` (refused: angeles1 put crank 2 at pi/2, where the loop cannot close): exit 0, the
    trajectory from the reference assembly, its torques closed_chains.inverse_dynamics along it, and the loop closed
    (phi = 0 to 1e-12) at every sample."""
    from robodyn.analysis.trajectories import angeles1
    from robodyn.numeric import closed_chains

    fivebar = load_quiet("fivebar")
    proc = subprocess.run([sys.executable, "-m", "robodyn", "torques", "fivebar", "--csv", "tau.csv"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=WALL_SECONDS)
    assert proc.returncode == 0, proc.stderr
    table = np.loadtxt(tmp_path / "tau.csv", delimiter=",", skiprows=1)
    trajectory = angeles1(fivebar)
    np.testing.assert_array_equal(trajectory.q[0], [0.0, 0.0])
    np.testing.assert_allclose(table[:, 0], trajectory.t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(table[:, 1:], closed_chains.inverse_dynamics(fivebar, trajectory.q, trajectory.qd,
                                                                            trajectory.qdd), rtol=1e-9, atol=1e-9)
    phi = closed_chains.constraints(fivebar, closed_chains.positions(fivebar, trajectory.q))[0]
    assert np.abs(phi).max() < 1e-12


def test_the_amplitudes_are_halved_until_the_loops_close_at_every_sample() -> None:
    """Cranks turned apart (A = +-pi/30 over 10 s: 60 degrees each) leave the five-bar's workspace: the trajectory is
    the largest of A/2^k whose every sample closes (A/4 here), and A/2 does not close."""
    from robodyn.analysis import trajectories
    from robodyn.numeric import closed_chains

    fivebar = load_quiet("fivebar")
    A = np.array([np.pi / 30, -np.pi / 30])
    trajectory = trajectories._closing(fivebar, A, 10.0, 101)
    np.testing.assert_allclose(trajectory.q[-1], A * 10 / 4, rtol=1e-12)
    assert np.abs(closed_chains.constraints(fivebar, closed_chains.positions(fivebar, trajectory.q))[0]).max() < 1e-12
    wider = trajectories.angeles_family([0.0, 0.0], A / 2, trajectories.ANGELES1_B, 10.0, 101)
    with pytest.raises(rd.ModelError, match="loop 'fivebar'"):
        closed_chains.positions(fivebar, wider.q)


def test_the_simulations_follower_gives_nan_at_a_nan_state_and_resumes_as_before() -> None:
    """The follower of a five-bar's simulation (each Newton solve from the last state's passive joints): a NaN state
    (an integrator's trial step gone wild) gives NaN accelerations, and the next finite state the same accelerations
    as before it, bit for bit (the NaN state is no guess; it raised 'guess not finite')."""
    from robodyn.numeric.closed_chains import Follower

    follower = Follower(load_quiet("fivebar"))
    q, rest = np.array([0.1, 0.0]), np.zeros(2)
    before = follower.accelerations(q, rest, rest)
    assert np.isnan(follower.accelerations(np.array([np.nan, 0.0]), rest, rest)).all()
    np.testing.assert_array_equal(follower.accelerations(q, rest, rest), before)
