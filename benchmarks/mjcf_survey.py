"""Public MJCF files through ``rd.load`` with its default options, against MuJoCo (prints a table and a summary).

    python benchmarks/mjcf_survey.py --fetch DIR         # once: the source packages' wheels unpacked into DIR
    python benchmarks/mjcf_survey.py DIR [--samples 3] [--timeout 300] [--only WORD] [--csv out.csv]

The files come from five packages on PyPI that ship MJCF models (fetched with ``pip download --no-deps`` and
unpacked, nothing installed or imported from them): dm_control (the control suite, locomotion walkers and arenas),
gymnasium (its MuJoCo environments: ant, half_cheetah, humanoid, ...), gymnasium-robotics (Fetch, Shadow hand,
Adroit, kitchen scenes), metaworld (Sawyer scenes with props) and robosuite (arms, grippers and scenes). Every
``.xml`` file whose root element is ``<mujoco>`` is tried; one that MuJoCo itself cannot compile alone (an
include-only fragment, a file that needs assets the package does not ship) or that has no moving joint (hinge,
slide or ball) is not a robot file and is listed apart.

For each robot file, in a child process of its own (a hang or a crash is a row, not the end of the survey), with a
wall-clock ``--timeout``: ``rd.load(path)`` loads it (every warning it gives is counted: a note that props or fluid
forces were left out) or refuses it (robodyn's one-line ModelError: the row shows the line; ``lines`` counts its
lines, which must be 1). A loaded robot is compared with MuJoCo's model of the same file at ``--samples`` random
states (q, qd, qdd, tau uniform in [-1, 1], quaternions normalised), constraints and contacts off:

- ``id``: robodyn's inverse dynamics against ``mj_rne`` plus armature times qdd minus MuJoCo's passive force
  (damping, springs, gravity compensation) plus, where robodyn reads MuJoCo's ``frictionloss`` as Coulomb friction,
  frictionloss sign(qd) (MuJoCo solves it as a constraint, which is off here);
- ``M``: the mass matrix against ``mj_fullM`` (armature on the diagonal);
- ``fd``: forward dynamics against ``mj_forward``'s qacc for the applied force tau.

Joints are matched by name (MJCF joint names, which robodyn keeps), so a robot read from a scene (its props left
out) is compared with its own rows of the scene; fluid forces that robodyn dropped are switched off in MuJoCo's model
too. A floating base's state and forces are converted as ``robodyn.formats.mjcf.from_mujoco`` does. The differences
are relative to the largest entry (or 1): ``max |a - b| / max(1, max |b|)``; TOLERANCE is the bound each loaded file
must meet.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

#: The PyPI packages whose MJCF files are surveyed (``--fetch``).
SOURCES = ("dm-control", "gymnasium", "gymnasium-robotics", "metaworld", "robosuite")
TOLERANCE = 1e-9


# -- fetching ------------------------------------------------------------------------------------------------------
def fetch(directory: Path) -> None:
    """``pip download --no-deps`` of :data:`SOURCES` and each wheel unpacked into ``directory`` (nothing installed)."""
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", wheels, *SOURCES],
                       check=True)
        for wheel in sorted(Path(wheels).glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(directory)
            print(f"unpacked {wheel.name}")


# -- one file, in a child process ----------------------------------------------------------------------------------
def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def _indices(robot: Any, model: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """MuJoCo's qpos and dof addresses of the robot's coordinates in robodyn's order (joints by name, a floating
    base first), or None where the names do not match and the sizes differ."""
    import mujoco

    qpos: list[int] = []
    dofs: list[int] = []
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) for name in robot.joint_names]
    if min(ids, default=-1) < 0:
        if (robot.nq, robot.nv) == (model.nq, model.nv):
            return np.arange(model.nq), np.arange(model.nv)
        return None
    if robot.floating:
        body = int(model.jnt_bodyid[ids[0]])
        while body and not any(model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE
                               for j in range(model.njnt) if model.jnt_bodyid[j] == body):
            body = int(model.body_parentid[body])
        free = next(j for j in range(model.njnt) if model.jnt_bodyid[j] == body)
        ids.insert(0, free)
    sizes = {int(mujoco.mjtJoint.mjJNT_FREE): (7, 6), int(mujoco.mjtJoint.mjJNT_BALL): (4, 3)}
    for j in ids:
        nq, nv = sizes.get(int(model.jnt_type[j]), (1, 1))
        qpos.extend(range(model.jnt_qposadr[j], model.jnt_qposadr[j] + nq))
        dofs.extend(range(model.jnt_dofadr[j], model.jnt_dofadr[j] + nv))
    return np.array(qpos), np.array(dofs)


def _random_qpos(model: Any, rng: np.random.Generator) -> np.ndarray:
    import mujoco

    qpos = model.qpos0.copy()
    for j in range(model.njnt):
        kind = int(model.jnt_type[j])
        at = int(model.jnt_qposadr[j])
        if kind == int(mujoco.mjtJoint.mjJNT_FREE):
            qpos[at:at + 3] = rng.uniform(-1, 1, 3)
            at += 3
        if kind in (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)):
            quaternion = rng.uniform(-1, 1, 4)
            qpos[at:at + 4] = quaternion / np.linalg.norm(quaternion)
        else:
            qpos[at] = rng.uniform(-1, 1)
    return qpos


def compare(robot: Any, path: Path, samples: int, notes: list[str]) -> dict[str, float]:
    """The largest relative differences (id, M, fd) between robodyn's numeric engine and MuJoCo's model of
    ``path`` at ``samples`` random states."""
    import mujoco

    from robodyn import numeric
    from robodyn.formats.mjcf import from_mujoco

    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
                               | mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    if any("fluid" in note for note in notes):  # dropped by robodyn: off in MuJoCo's model too (both fluid models
        model.opt.density = model.opt.viscosity = 0.0  # scale with the medium's density and viscosity)
    coulomb = not any("frictionloss" in note for note in notes)  # read as robodyn's Coulomb friction
    tree = robot.replace(couplings=()) if robot.couplings else robot
    found = _indices(tree, model)
    if found is None:
        raise LookupError("the robot's joints are not MuJoCo's by name")
    qi, vi = found
    data = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    worst = {"id": 0.0, "M": 0.0, "fd": 0.0}
    for _ in range(samples):
        qpos = _random_qpos(model, rng)
        qvel, qacc, qfrc = np.zeros((3, model.nv))
        qvel[vi], qacc[vi], qfrc[vi] = rng.uniform(-1, 1, (3, len(vi)))
        data.qpos[:], data.qvel[:], data.qfrc_applied[:] = qpos, qvel, 0.0
        mujoco.mj_forward(model, data)
        data.qacc[:] = qacc
        rne = np.zeros(model.nv)
        mujoco.mj_rne(model, data, 1, rne)
        tau_mj = rne + model.dof_armature * qacc - data.qfrc_passive
        if coulomb:
            tau_mj = tau_mj + model.dof_frictionloss * np.sign(qvel)
        state = from_mujoco(tree, qpos[qi], qvel[vi], qacc[vi], tau_mj[vi])
        M_mj = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, M_mj)
        M_mj = M_mj[np.ix_(vi, vi)]
        if tree.floating:
            T = np.eye(len(vi))
            T[:3, :3] = data.xmat[model.jnt_bodyid[_base_joint(model, vi)]].reshape(3, 3)
            M_mj = T.T @ M_mj @ T
        data.qfrc_applied[:] = qfrc
        mujoco.mj_forward(model, data)
        tau_fd = qfrc[vi] + (model.dof_frictionloss * np.sign(qvel))[vi] * coulomb
        moved = from_mujoco(tree, qpos[qi], qvel[vi], data.qacc[vi].copy(), tau_fd)
        worst["id"] = max(worst["id"], _relative(numeric.inverse_dynamics(tree, state.q, state.v, state.a),
                                                 state.tau))
        worst["M"] = max(worst["M"], _relative(numeric.mass_matrix(tree, state.q), M_mj))
        worst["fd"] = max(worst["fd"], _relative(numeric.forward_dynamics(tree, moved.q, moved.v, moved.tau),
                                                 moved.a))
    return worst


def _base_joint(model: Any, dofs: np.ndarray) -> int:
    return int(model.dof_jntid[dofs[0]])


def one(path: Path, samples: int) -> dict[str, Any]:
    """The row of one file (run in the child process)."""
    import mujoco

    import robodyn as rd
    from robodyn.formats.mjcf import root_element

    row: dict[str, Any] = {"file": str(path)}
    if root_element(path) != "mujoco":
        return {**row, "status": "not mjcf"}
    try:
        model = mujoco.MjModel.from_xml_path(str(path))
    except Exception as exc:  # MuJoCo's own refusal: not a robot file on its own
        return {**row, "status": "not a model", "why": str(exc).strip().splitlines()[0][:160]}
    moving = sum(int(t) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE),
                            int(mujoco.mjtJoint.mjJNT_BALL)) for t in model.jnt_type)
    if not moving:
        return {**row, "status": "no moving joint"}
    row.update(joints=moving, nq=int(model.nq), nv=int(model.nv))
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            robot = rd.load(path)
        except rd.ModelError as exc:
            text = str(exc)
            return {**row, "status": "refused", "why": text, "lines": len(text.splitlines())}
    row["load_s"] = round(time.perf_counter() - start, 2)
    notes = [str(w.message) for w in caught]
    row.update(status="loaded", notes=notes, robot_nv=robot.nv, floating=bool(robot.floating))
    try:
        row.update(compare(robot, path, samples, notes))
    except Exception as exc:  # a comparison that cannot be made is a row, not the end of the survey
        row.update(status="loaded, not compared", why=f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
    return row


# -- the survey ----------------------------------------------------------------------------------------------------
def _files(directory: Path, only: str | None) -> list[Path]:
    files = sorted(p for p in directory.rglob("*.xml") if "dist-info" not in str(p))
    return [p for p in files if only is None or only in str(p)]


def _run(path: Path, samples: int, timeout: float) -> dict[str, Any]:
    try:
        done = subprocess.run([sys.executable, __file__, "--one", str(path), "--samples", str(samples)],
                              capture_output=True, text=True, timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"file": str(path), "status": "timeout", "why": f"over {timeout:g} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"file": str(path), "status": "crash", "why": (done.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return dict(json.loads(lines[-1]))


def _source(path: Path, directory: Path) -> str:
    return path.relative_to(directory).parts[0]


def survey(directory: Path, samples: int, timeout: float, only: str | None) -> list[dict[str, Any]]:
    rows = []
    for path in _files(directory, only):
        row = _run(path, samples, timeout)
        row["source"] = _source(path, directory)
        rows.append(row)
        if row["status"] in ("not mjcf", "not a model", "no moving joint"):
            continue
        worst = max((row.get(k, 0.0) for k in ("id", "M", "fd")), default=0.0)
        shown = path.relative_to(directory)
        detail = (f"worst {worst:.1e}{' NOTES ' + ' | '.join(row['notes']) if row.get('notes') else ''}"
                  if row["status"] == "loaded" else row.get("why", ""))
        print(f"{row['status']:<20} {row.get('joints', ''):>4} {shown}  {detail}", flush=True)
    return rows


def summary(rows: list[dict[str, Any]]) -> None:
    robots = [r for r in rows if r["status"] not in ("not mjcf", "not a model", "no moving joint")]
    loaded = [r for r in robots if r["status"] == "loaded"]
    good = [r for r in loaded if max(r["id"], r["M"], r["fd"]) <= TOLERANCE]
    refused = [r for r in robots if r["status"] == "refused"]
    print()
    print(f"files: {len(rows)}; robot files (MuJoCo compiles them, moving joints): {len(robots)} from "
          f"{len({r['source'] for r in robots})} sources ({dict(Counter(r['source'] for r in robots))})")
    print(f"loaded with default options: {len(loaded)} ({100 * len(loaded) / max(1, len(robots)):.0f}%); agree with "
          f"MuJoCo to {TOLERANCE:g}: {len(good)}; worst difference "
          f"{max((max(r['id'], r['M'], r['fd']) for r in loaded), default=0.0):.1e}")
    print(f"refused: {len(refused)} (one line each: {all(r['lines'] == 1 for r in refused)}); other: "
          f"{dict(Counter(r['status'] for r in robots if r['status'] not in ('loaded', 'refused')))}")
    reasons = Counter(r["why"].split(": ", 1)[-1].split(" (")[0][:90] for r in refused)
    for reason, count in reasons.most_common(12):
        print(f"  {count:>3}  {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("--fetch", type=Path, help="download and unpack the source packages into this directory")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0, help="wall-clock seconds for one file")
    parser.add_argument("--only", help="only files whose path contains this")
    parser.add_argument("--csv", type=Path, help="also write the rows as JSON lines here")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.samples)))
        return
    if args.fetch:
        fetch(args.fetch)
        return
    if args.directory is None:
        parser.error("give the directory of unpacked sources (made by --fetch DIR)")
    rows = survey(args.directory, args.samples, args.timeout, args.only)
    if args.csv:
        args.csv.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary(rows)


if __name__ == "__main__":
    main()
