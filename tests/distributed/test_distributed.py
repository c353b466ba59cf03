"""robodyn.distributed on a two-process LocalCluster (two single-threaded worker processes, as issue 32 asks): a
sweep equals a single-process loop exactly, also with a worker killed mid-run; identification from 20 simulated logs
equals the one-process fit; catalogues are resumable and report a failing robot by name (API and ``robodyn batch``).

Hang guards: the cluster's calls are bounded by wide timeouts (``distributed.wait``/``result`` timeouts, the
subprocess's); no duration is asserted.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

from benchmarks.distributed_sweep import length_samples, puma_lengths, states
from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import WorkerPlugin

import robodyn as rd
from robodyn import distributed as rdd
from robodyn import identification, numeric
from robodyn.identification import fit

ROOT = Path(__file__).resolve().parents[2]
#: Hang guard of every run on the cluster (seconds); never a bound on how long it should take.
HANG = 600


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster, timeout=HANG) as connected:
        yield connected


def _pids(client: Client) -> set[int]:
    return set(client.run(os.getpid).values())


# -- sweeps ----------------------------------------------------------------------------------------------------------


def test_a_sweep_of_the_pumas_link_lengths_equals_a_single_process_loop_with_a_worker_killed(
        client: Client, tmp_path: Path) -> None:
    """The issue's acceptance size: the PUMA's 6 link lengths x 8 values each (48 samples) over 10^5 states, in
    chunks of 25,000 states (192 tasks), on two worker processes; one worker kills itself (os._exit) when its first
    sweep task has finished, its result still in its memory: the nanny starts a new worker, the scheduler computes
    the lost results again, and every number is the single-process loop's, bit for bit."""
    robot, nominal = puma_lengths()
    samples = length_samples(nominal, 8)
    assert len(samples) == 48 and len(robot.parameters()) == 6
    given = states(10**5)
    flag = tmp_path / "kill-once"
    flag.write_text("")

    class KillOnce(WorkerPlugin):
        """Kills its worker's process once (the first worker to remove the flag file), right after a sweep task's
        result is in that worker's memory."""

        def __init__(self, path: str) -> None:
            self.path = path

        def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
            if finish == "memory" and "evaluate" in str(key):  # (the key of a task of _evaluate, fused or not)
                try:
                    os.remove(self.path)
                except FileNotFoundError:
                    return
                os._exit(1)

    before = _pids(client)
    client.register_plugin(KillOnce(str(flag)), name="kill-once")
    try:
        result = rdd.sweep(robot, parameters=samples, states=given, outputs=("tau",), chunk=25_000, client=client)
        tau = result.arrays["tau"].compute()
    finally:
        client.unregister_worker_plugin("kill-once")
    client.wait_for_workers(2, timeout=HANG)
    assert not flag.exists()  # a worker did kill itself ...
    assert _pids(client) != before  # ... and was replaced
    dyn = rd.compile(robot, outputs=["tau"])
    loop = np.stack([dyn.inverse_dynamics(given["q"], given["qd"], given["qdd"], params=s) for s in samples])
    assert tau.shape == (48, 10**5, 6)
    assert np.array_equal(tau, loop)
    assert np.array_equal(result.peak["tau"], np.abs(loop).max(axis=1))
    # every length but d1 changes the peak torques (d1 only lifts the whole arm along the vertical first axis)
    nominal_peak = np.abs(dyn.inverse_dynamics(given["q"], given["qd"], given["qdd"], params=nominal)).max(axis=0)
    for name in nominal:
        varied = [s for s, sample in enumerate(samples) if sample[name] != nominal[name]]
        changed = [not np.allclose(result.peak["tau"][s], nominal_peak, rtol=1e-9) for s in varied]
        assert len(varied) >= 7 and (not any(changed) if name == "d1" else all(changed)), name


def test_a_family_of_robots_and_several_outputs_written_as_npy(client: Client, tmp_path: Path) -> None:
    """A list of numeric robots (the double pendulum at three lengths L1: each worker builds each member's C, which
    takes seconds for the PUMA's forward dynamics) with tau, M and forward, written by the workers as NPY files and
    read back: each equals that robot's own compiled routines."""
    robot = rd.load("double_pendulum")
    family = [robot.subs({"L1": L1, "L2": 0.4, "g": 9.81, "m1": 1.5, "m2": 0.8}) for L1 in (0.5, 0.7, 0.9)]
    assert all(not member.parameters() for member in family)
    given = states(5000, n=2, seed=1)
    given["tau"] = given["qdd"] * 10.0
    result = rdd.sweep(family, states=given, outputs=("tau", "M", "forward"), chunk=2000, client=client,
                       out_dir=tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out" / "M").iterdir()) == [f"sample_0000{i}.npy" for i in range(3)]
    for s, member in enumerate(family):
        dyn = rd.compile(member, outputs=["tau", "M", "forward"])
        assert np.array_equal(result.arrays["tau"][s].compute(), dyn.inverse_dynamics(given["q"], given["qd"],
                                                                                       given["qdd"]))
        assert np.array_equal(result.arrays["M"][s].compute(), dyn.mass_matrix(given["q"]))
        qdd = dyn.forward_dynamics(given["q"], given["qd"], given["tau"])
        assert np.array_equal(result.arrays["forward"][s].compute(), qdd)
        assert np.array_equal(result.peak["forward"][s], np.abs(qdd).max(axis=0))


def test_states_drawn_on_the_workers_are_seeded_per_chunk(client: Client) -> None:
    """uniform_states: the workers draw each chunk from its own seed; the sweep equals the single-process loop over
    the same states drawn here (.draw), its peaks too; another seed gives other states."""
    robot, nominal = puma_lengths()
    samples = rdd.one_at_a_time(nominal, {"a2": [0.4, 0.45], "d4": [0.4]})
    spec = rdd.uniform_states(7000, low=-2.0, high=2.0, seed=5)
    result = rdd.sweep(robot, parameters=samples, states=spec, outputs=("tau",), chunk=3000, client=client)
    drawn = spec.draw(("q", "qd", "qdd"), 6, chunk=3000)
    assert drawn["q"].shape == (7000, 6) and drawn["q"].min() >= -2.0 and drawn["q"].max() < 2.0
    assert not np.array_equal(drawn["q"], drawn["qd"])
    assert not np.array_equal(rdd.uniform_states(7000, seed=6).draw(("q",), 6, 3000)["q"], drawn["q"])
    dyn = rd.compile(robot, outputs=["tau"])
    for s, sample in enumerate(samples):
        tau = dyn.inverse_dynamics(drawn["q"], drawn["qd"], drawn["qdd"], params=sample)
        assert np.array_equal(result.arrays["tau"][s].compute(), tau)
        assert np.array_equal(result.peak["tau"][s], np.abs(tau).max(axis=0))


def test_sweep_refuses_bad_input_in_one_line() -> None:
    robot, nominal = puma_lengths()
    given = states(10)
    with pytest.raises(ValueError, match="states lacks qdd"):
        rdd.sweep(robot, [nominal], {"q": given["q"], "qd": given["qd"]})
    with pytest.raises(ValueError, match="unknown output 'torque'"):
        rdd.sweep(robot, [nominal], given, outputs=("torque",))
    with pytest.raises(ValueError, match=r"must have shape \(N, 6\)"):
        rdd.sweep(robot, [nominal], {**given, "q": given["q"][:, :5]})


# -- identification --------------------------------------------------------------------------------------------------


def _fourier_log(robot: rd.Manipulator, seed: int, samples: int = 200) -> tuple[np.ndarray, ...]:
    """An exciting run (a finite Fourier series per joint, as examples/identify_puma.py) and its torques."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 10.0, samples, endpoint=False)
    w = 2 * np.pi / 10.0
    n = robot.n
    q, qd, qdd = np.tile(rng.uniform(-1, 1, n), (samples, 1)), np.zeros((samples, n)), np.zeros((samples, n))
    for ell in range(1, 6):
        a, b = rng.uniform(-0.5, 0.5, n), rng.uniform(-0.5, 0.5, n)
        s, c = np.sin(w * ell * t)[:, None], np.cos(w * ell * t)[:, None]
        q += (a * s - b * c) / (w * ell)
        qd += a * c + b * s
        qdd += w * ell * (-a * s + b * c)
    return q, qd, qdd, numeric.inverse_dynamics(robot, q, qd, qdd)


def test_identification_from_20_logs_split_across_workers_equals_the_one_process_fit(
        client: Client, tmp_path: Path) -> None:
    """20 simulated PUMA logs, 3 to a task, some as .npz files read by the workers: the distributed estimate equals
    the one-process fit (robodyn.identification.fit) to 1e-10 (the blocks are summed in the logs' order, so in fact
    exactly), the direct least squares of the stacked rows (numpy.linalg.lstsq) to 1e-8, and the truth to 1e-6."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load("puma560")
    base = identification.base_parameters(robot)
    logs: list[Any] = [_fourier_log(robot, seed) for seed in range(20)]
    for i in range(0, 20, 4):  # every fourth log as a file
        path = tmp_path / f"log{i}.npz"
        np.savez(path, **dict(zip(("q", "qd", "qdd", "tau"), logs[i], strict=True)))
        logs[i] = str(path)
    spread = rdd.identify(base, logs, logs_per_task=3, client=client)
    local = fit.identify(base, [np.load(log) if isinstance(log, str) else log for log in logs])
    assert spread.names == local.names == base.names and spread.rows == local.rows == 20 * 200 * 6
    scale = np.abs(local.estimate).max()
    assert np.max(np.abs(spread.estimate - local.estimate)) <= 1e-10 * scale
    W = np.concatenate([base.numeric_regressor(*_fourier_log(robot, seed)[:3]).reshape(-1, len(base))
                        for seed in range(20)])
    y = np.concatenate([_fourier_log(robot, seed)[3].reshape(-1) for seed in range(20)])
    direct, *_ = np.linalg.lstsq(W, y, rcond=None)
    assert np.max(np.abs(spread.estimate - direct)) <= 1e-8 * scale
    truth = base.numeric_values()
    assert np.max(np.abs(spread.estimate - truth) / np.maximum(np.abs(truth), 1e-6 * scale)) < 1e-6
    assert spread.residual <= 1e-12 * float(y @ y)


# -- catalogues ------------------------------------------------------------------------------------------------------


def test_a_catalogue_is_resumable_and_reports_a_failing_robot_by_name(client: Client, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: broken\nlinks: [{joint: Q}]\n")
    models = ["two_link_fu", str(broken), "double_pendulum", str(tmp_path / "missing.urdf")]
    first = rdd.catalogue(models, ["tau", "M"], ("c", "numpy", "cuda"), tmp_path / "cat", client=client)
    assert [e.status for e in first.entries] == ["built", "failed", "built", "failed"]
    assert [e.model for e in first.entries] == models
    assert "broken.yaml" in first.entries[1].message and "missing.urdf" in first.entries[3].message
    manifest = json.loads((tmp_path / "cat" / "two_link_fu" / "manifest.json").read_text())
    assert sorted(manifest["files"]) == ["c/two_link_fu.c", "c/two_link_fu.h", "cuda/two_link_fu.cu",
                                         "numpy/two_link_fu.py"]
    assert manifest["counts"]["tau"] == first.entries[0].counts["tau"]
    mtime = (tmp_path / "cat" / "two_link_fu" / "manifest.json").stat().st_mtime_ns
    second = rdd.catalogue(models, ["tau", "M"], ("c", "numpy", "cuda"), tmp_path / "cat", client=client)
    assert [e.status for e in second.entries] == ["skipped", "failed", "skipped", "failed"]
    assert second.built == 0 and (tmp_path / "cat" / "two_link_fu" / "manifest.json").stat().st_mtime_ns == mtime
    # an edited file is noticed: that entry alone is built again
    (tmp_path / "cat" / "double_pendulum" / "c" / "double_pendulum.c").write_text("/* edited */\n")
    third = rdd.catalogue(models, ["tau", "M"], ("c", "numpy", "cuda"), tmp_path / "cat", client=client)
    assert [e.status for e in third.entries] == ["skipped", "failed", "built", "failed"]
    summary = json.loads((tmp_path / "cat" / "catalogue.json").read_text())
    assert (summary["built"], summary["skipped"], summary["failed"]) == (1, 1, 2)


BATCH = [sys.executable, "-m", "robodyn", "batch", "puma560", "two_link_payload", "-O", "tau", "-O", "M,forward",
         "--workers", "2"]


def test_robodyn_batch_twice_builds_nothing_the_second_time(tmp_path: Path) -> None:
    """The command line on two built-in robots, every language: a table and a count line; the second run starts no
    cluster and builds nothing; a failing model is named on stderr, exit status 1."""
    env = {**os.environ, "COLUMNS": "200"}
    run = [*BATCH, "-o", str(tmp_path / "cat")]
    first = subprocess.run(run, capture_output=True, text=True, timeout=HANG, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "2 built, 0 already there, 0 failed" in first.stdout
    counts = json.loads((tmp_path / "cat" / "puma560" / "manifest.json").read_text())["counts"]
    assert f"tau {counts['tau']}; M {counts['M']}; forward {counts['forward']}" in first.stdout  # the table's counts
    for language, suffix in (("c", "c"), ("fortran", "f90"), ("numpy", "py"), ("jax", "py")):
        assert any((tmp_path / "cat" / "puma560" / language).glob(f"*.{suffix}")), language
    second = subprocess.run(run, capture_output=True, text=True, timeout=HANG, env=env, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "0 built, 2 already there, 0 failed" in second.stdout
    failing = subprocess.run([*run, "no_such_robot.yaml"], capture_output=True, text=True, timeout=HANG, env=env,
                             cwd=tmp_path)
    assert failing.returncode == 1
    assert "0 built, 2 already there, 1 failed" in failing.stdout
    assert "error: " in failing.stderr and "no_such_robot.yaml" in failing.stderr and "Traceback" not in failing.stderr


def test_robodyn_batch_refuses_an_unknown_output_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run([*BATCH[:4], "puma560", "-O", "torque", "-o", str(tmp_path)], capture_output=True,
                            text=True, timeout=HANG)
    assert result.returncode == 2 and result.stderr.startswith("error: --outputs 'torque'")
    assert result.stderr.count("\n") == 1


# -- hostile input -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "problem"), [
    ("foo://host:8786", "unknown scheme 'foo'"), ("inproc://x", "unknown scheme 'inproc'"),
    ("ucx://host:8786", "unknown scheme 'ucx'"), ("host", "missing port"), ("", "expected tcp://HOST:PORT"),
    ("tcp://host:port", "the port 'port' is not a number"), ("tcp://:8786", "a port from 1 to 65535"),
    ("tcp://host:70000", "a port from 1 to 65535")])
def test_a_malformed_scheduler_address_is_one_line_before_anything_starts(tmp_path: Path, address: str,
                                                                          problem: str) -> None:
    with pytest.raises(ValueError, match=f"scheduler address {re.escape(repr(address))}: .*{re.escape(problem)}"), \
            rdd.connect(scheduler=address):
        pass
    # also where every entry is already there (nothing would connect)
    with pytest.raises(ValueError, match=re.escape(problem)):
        rdd.catalogue(["two_link_fu"], ["tau"], ("c",), tmp_path, scheduler=address)


def test_robodyn_batch_refuses_an_unknown_scheme_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run([*BATCH[:4], "two_link_fu", "-o", str(tmp_path), "--scheduler", "foo://host:8786"],
                            capture_output=True, text=True, timeout=HANG)
    assert result.returncode == 2
    assert result.stderr == "error: scheduler address 'foo://host:8786': unknown scheme 'foo' (known: tcp, tls, ws, " \
                            "wss)\n"


def test_a_scheduler_that_does_not_answer_is_one_line_within_the_connect_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens on port 1: a ConnectionError naming the address once the bound (shortened here) is spent."""
    from robodyn.distributed import cluster

    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1)
    with pytest.raises(ConnectionError, match=r"no Dask scheduler reached at tcp://127\.0\.0\.1:1: "), \
            rdd.connect(scheduler="tcp://127.0.0.1:1"):
        pass


def test_special_files_among_the_models_fail_before_they_are_opened(tmp_path: Path) -> None:
    """A FIFO nobody writes (reading it would block for ever), a device, a directory: each a failed entry naming it,
    without a cluster (nothing left to build)."""
    fifo = tmp_path / "robot.yaml"
    os.mkfifo(fifo)
    models = [str(fifo), os.devnull, str(tmp_path)]
    report = rdd.catalogue(models, ["tau"], ("c",), tmp_path / "cat")
    assert [entry.status for entry in report.entries] == ["failed"] * 3
    assert [entry.message for entry in report.entries] == [
        f"{fifo}: is a FIFO, not a regular file", f"{os.devnull}: is a character device, not a regular file",
        f"{tmp_path}: is a directory, not a regular file"]


def test_a_fifo_among_the_logs_is_refused_before_a_worker_reads_it(tmp_path: Path) -> None:
    fifo = tmp_path / "log.npz"
    os.mkfifo(fifo)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load("two_link_fu")
    with pytest.raises(rd.ModelError, match=f"{re.escape(str(fifo))}: is a FIFO, not a regular file"):
        rdd.identify(robot, [str(fifo)])


def test_a_fifo_in_place_of_an_entrys_file_has_the_entry_built_again(client: Client, tmp_path: Path) -> None:
    first = rdd.catalogue(["two_link_fu"], ["tau"], ("c",), tmp_path, client=client)
    assert first.built == 1
    made = tmp_path / "two_link_fu" / "c" / "two_link_fu.c"
    made.unlink()
    os.mkfifo(made)  # read as before, it would block the run for ever
    again = rdd.catalogue(["two_link_fu"], ["tau"], ("c",), tmp_path, client=client)
    assert [entry.status for entry in again.entries] == ["built"]
    assert made.is_file()
