"""robodyn's compiled C batch routines against Pinocchio's own C++ loop, per state, on the Panda (prints markdown).

    python benchmarks/pinocchio_native.py [--states 20000] [--rounds 5]

Compiles a small C++ program against the Pinocchio headers of the installed cmeel wheel (``cmeel.prefix``:
Pinocchio 4.1, Boost; Eigen 3.4 from CasADi's wheel), with ``g++ -O3 -march=native -DNDEBUG -std=c++17``: the
algorithms are instantiated from the headers in that translation unit (no
``PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION``), so they run compiled for this CPU. The model is built in the same
unit (``addJoint``/``appendBodyToJoint``) from Python Pinocchio's ``buildModelFromUrdf`` of the Panda, written as
text: the wheel's URDF parser, built for baseline x86-64 with 16-byte Eigen alignment, cannot hand its ``Model``
to code compiled with AVX-512 alignment (it crashes), and the wheel lacks the urdfdom headers. The program takes
the Panda's model (``buildModel``: the mimic finger is an independent joint, so robodyn reads it with
``mimic="independent"``: 9 coordinates), reads N states from a binary file and times loops over them of ``crba``
(upper triangle, as Pinocchio leaves it, beside robodyn's packed upper triangle ``M_packed``; and with the
strict lower triangle copied in, as robodyn writes M),
``computeRNEADerivatives``, ``computeABADerivatives``, ``rnea`` and ``aba``: best of interleaved rounds. It
writes its results for the first states, which are compared with robodyn's (the URDF's joint damping is in
robodyn's dynamics and not in Pinocchio's: its terms are added to Pinocchio's results before the comparison).
robodyn's routines run into preallocated ``out=`` arrays (benchmarks/codegen.py's ``steady_times``, rounds
interleaved with the C++ program's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

import robodyn as rd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.calls import load_plain  # noqa: E402 - the repository root is on the path now
from benchmarks.codegen import steady_times  # noqa: E402
from benchmarks.urdf_survey import robots_directory  # noqa: E402

SITE = Path(sysconfig.get_paths()["purelib"])
PREFIX = SITE / "cmeel.prefix"
EIGEN = SITE / "casadi" / "include" / "eigen3"
CHECK = 8  # states whose results are compared

PROGRAM = r"""
#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <vector>

using namespace pinocchio;
typedef Eigen::VectorXd V;

int main(int argc, char** argv) {  // model.txt states.bin N rounds results.bin
  Model model;  // built here from Python Pinocchio's URDF model: kind parent axis[3] placement[12] mass lever[3] I[6]
  std::ifstream txt(argv[1]);
  std::string kind;
  while (txt >> kind) {
    int parent; double a[3], p[12], m, c[3], I[6];
    txt >> parent;
    for (double& v : a) txt >> v;
    for (double& v : p) txt >> v;
    txt >> m;
    for (double& v : c) txt >> v;
    for (double& v : I) txt >> v;
    Eigen::Matrix3d R; R << p[0], p[1], p[2], p[4], p[5], p[6], p[8], p[9], p[10];
    SE3 placement(R, Eigen::Vector3d(p[3], p[7], p[11]));
    Eigen::Vector3d axis(a[0], a[1], a[2]);
    JointIndex j;
    const std::string name = "j" + std::to_string(model.njoints);
    if (kind == "R") j = model.addJoint(parent, JointModelRevoluteUnaligned(axis), placement, name);
    else if (kind == "RZ") j = model.addJoint(parent, JointModelRZ(), placement, name);
    else if (kind == "PY") j = model.addJoint(parent, JointModelPY(), placement, name);
    else j = model.addJoint(parent, JointModelPrismaticUnaligned(axis), placement, name);
    Symmetric3 S(I[0], I[1], I[2], I[3], I[4], I[5]);
    model.appendBodyToJoint(j, Inertia(m, Eigen::Vector3d(c[0], c[1], c[2]), S));
  }
  Data data(model);
  const int n = model.nv, N = std::atoi(argv[3]), rounds = std::atoi(argv[4]);
  std::vector<double> s(size_t(N) * 4 * n);  // per state: q, v, a, tau (tau without damping)
  std::ifstream in(argv[2], std::ios::binary);
  in.read(reinterpret_cast<char*>(s.data()), s.size() * sizeof(double));
  auto x = [&](int k, int which) { return Eigen::Map<const V>(&s[(size_t(k) * 4 + which) * n], n); };
  double sink = 0;
  std::vector<std::pair<const char*, std::function<void(int)>>> calls = {
    {"crba", [&](int k) { crba(model, data, x(k, 0)); sink += data.M(0, n - 1); }},
    {"crba_full", [&](int k) {
       crba(model, data, x(k, 0));
       data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose().triangularView<Eigen::StrictlyLower>();
       sink += data.M(n - 1, 0); }},
    {"rnea_derivatives", [&](int k) {
       computeRNEADerivatives(model, data, x(k, 0), x(k, 1), x(k, 2)); sink += data.dtau_dq(0, 0); }},
    {"aba_derivatives", [&](int k) {
       computeABADerivatives(model, data, x(k, 0), x(k, 1), x(k, 3)); sink += data.ddq_dq(0, 0); }},
    {"rnea", [&](int k) { rnea(model, data, x(k, 0), x(k, 1), x(k, 2)); sink += data.tau[0]; }},
    {"aba", [&](int k) { aba(model, data, x(k, 0), x(k, 1), x(k, 3)); sink += data.ddq[0]; }},
  };
  std::vector<double> best(calls.size(), std::numeric_limits<double>::infinity());
  for (int r = 0; r < rounds; ++r)
    for (size_t c = 0; c < calls.size(); ++c) {
      for (int k = 0; k < 100 && k < N; ++k) calls[c].second(k);  // warm
      auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < N; ++k) calls[c].second(k);
      double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / N;
      if (ns < best[c]) best[c] = ns;
    }
  std::ofstream res(argv[5], std::ios::binary);  // per checked state: M, dtau_dq, dtau_dv, ddq_dq, ddq_dv, Minv
  for (int k = 0; k < CHECK && k < N; ++k) {
    Eigen::MatrixXd M;
    crba(model, data, x(k, 0));
    data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose().triangularView<Eigen::StrictlyLower>();
    M = data.M;
    computeRNEADerivatives(model, data, x(k, 0), x(k, 1), x(k, 2));
    Eigen::MatrixXd dq = data.dtau_dq, dv = data.dtau_dv;
    computeABADerivatives(model, data, x(k, 0), x(k, 1), x(k, 3));
    data.Minv.triangularView<Eigen::StrictlyLower>() = data.Minv.transpose().triangularView<Eigen::StrictlyLower>();
    for (const Eigen::MatrixXd& m : {M, dq, dv, Eigen::MatrixXd(data.ddq_dq), Eigen::MatrixXd(data.ddq_dv),
                                     Eigen::MatrixXd(data.Minv)}) {
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row = m;
      res.write(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(double));
    }
  }
  std::printf("{\"n\": %d, \"sink\": %g", n, sink);
  for (size_t c = 0; c < calls.size(); ++c) std::printf(", \"%s\": %.3f", calls[c].first, best[c]);
  std::printf("}\n");
  return 0;
}
"""


def compile_command(source: Path, binary: Path) -> list[str]:
    """The g++ command line: Pinocchio's interface definitions (its CMake targets') less template instantiation."""
    lib = PREFIX / "lib"
    defines = ["BOOST_MPL_LIMIT_LIST_SIZE=30", "BOOST_MPL_LIMIT_VECTOR_SIZE=30",
               "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "BOOST_FUSION_INVOKE_MAX_ARITY=12", f"CHECK={CHECK}"]
    return ["g++", "-O3", "-march=native", "-DNDEBUG", "-std=c++17", *(f"-D{d}" for d in defines),
            f"-I{PREFIX / 'include'}", f"-isystem{EIGEN}", str(source), "-o", str(binary),
            f"-L{lib}", f"-Wl,-rpath,{lib}", "-lpinocchio_default"]


def write_model(urdf: str, path: Path) -> None:
    """Python Pinocchio's model of the URDF (buildModelFromUrdf: fixed links merged, the mimic finger
    independent) as text the C++ program rebuilds it from, joint by joint."""
    import pinocchio as pin

    model = pin.buildModelFromUrdf(urdf)
    lines = []
    for i in range(1, model.njoints):
        joint, inertia = model.joints[i], model.inertias[i]
        kind = {"JointModelRZ": "RZ", "JointModelPY": "PY", "JointModelRevoluteUnaligned": "R",
                "JointModelPrismaticUnaligned": "P"}[joint.shortname()]
        axis = getattr(joint.extract(), "axis", np.zeros(3)) if kind in ("R", "P") else np.zeros(3)
        J = inertia.inertia
        numbers = [*np.asarray(axis).ravel(), *model.jointPlacements[i].homogeneous[:3].ravel(), inertia.mass,
                   *inertia.lever, J[0, 0], J[0, 1], J[1, 1], J[0, 2], J[1, 2], J[2, 2]]
        lines.append(f"{kind} {model.parents[i]} " + " ".join(repr(float(x)) for x in numbers))
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (C++ program runs, Python rounds)")
    args = parser.parse_args()
    directory = robots_directory()
    assert directory is not None  # load_plain says so otherwise
    urdf = directory / "panda_description" / "urdf" / "panda.urdf"
    robot = load_plain("panda")
    n, N = robot.n, args.states
    dyn = rd.compile(robot, outputs=["M", "M_packed", "tau", "forward", "dtau", "dqdd"])
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, (N, n)) for _ in range(3))
    damping = np.array([float(link.damping) for link in robot.links])
    tau = dyn.inverse_dynamics(q, qd, qdd)  # robodyn's forward input; Pinocchio's without the damping
    command_key = hashlib.sha256((PROGRAM + repr(compile_command(Path(), Path()))).encode())
    work = Path(tempfile.gettempdir()) / f"pinocchio_native_{command_key.hexdigest()[:12]}"  # kept: g++ takes minutes
    work.mkdir(exist_ok=True)
    states = np.stack([q, qd, qdd, tau - damping * qd], axis=1)  # (N, 4, n)
    states.tofile(work / "states.bin")
    write_model(str(urdf), work / "model.txt")
    source, binary = work / "bench.cpp", work / "bench"
    source.write_text(PROGRAM)
    command = compile_command(source, binary)
    if not binary.exists():
        built = subprocess.run(compile_command(source, work / "bench.part"), capture_output=True, text=True)
        if built.returncode:
            raise SystemExit(built.stderr[-4000:])
        (work / "bench.part").rename(binary)

    outs = {"M": np.empty((N, n, n)), "M_packed": np.empty((N, n * (n + 1) // 2)), "tau": np.empty((N, n)),
            "forward": np.empty((N, n)),
            "dtau": np.empty((N, 2, n, n)), "dqdd": np.empty((N, 3, n, n))}
    calls = [("M", N, lambda: dyn.mass_matrix(q, out=outs["M"])),
             ("M_packed", N, lambda: dyn.mass_matrix_packed(q, out=outs["M_packed"])),
             ("dtau", N, lambda: dyn.inverse_dynamics_derivatives(q, qd, qdd, out=outs["dtau"])),
             ("dqdd", N, lambda: dyn.forward_dynamics_derivatives(q, qd, tau, out=outs["dqdd"])),
             ("tau", N, lambda: dyn.inverse_dynamics(q, qd, qdd, out=outs["tau"])),
             ("forward", N, lambda: dyn.forward_dynamics(q, qd, tau, out=outs["forward"]))]
    ours: dict[str, float] = {}
    pin: dict[str, float] = {}
    for _ in range(args.rounds):  # interleaved: one C++ run (its own 2 rounds), one Python round
        result = subprocess.run([str(binary), str(work / "model.txt"), str(work / "states.bin"), str(N), "2",
                                 str(work / "results.bin")], check=True, capture_output=True, text=True)
        for key, value in json.loads(result.stdout).items():
            pin[key] = min(pin.get(key, float("inf")), value)
        for label, _, seconds in steady_times(calls, budget_s=0.3, repeats=1):
            ours[label] = min(ours.get(label, float("inf")), seconds * 1e9)

    checked = np.fromfile(work / "results.bin").reshape(CHECK, 6, n, n)
    M, dtau_dq, dtau_dv, ddq_dq, ddq_dv, Minv = (checked[:, i] for i in range(6))
    D = np.diag(damping)
    ours_dtau = dyn.inverse_dynamics_derivatives(q[:CHECK], qd[:CHECK], qdd[:CHECK])
    ours_dqdd = dyn.forward_dynamics_derivatives(q[:CHECK], qd[:CHECK], tau[:CHECK])
    diffs = {
        "M": np.abs(dyn.mass_matrix(q[:CHECK]) - M).max(),
        "M_packed": np.abs(dyn.mass_matrix_packed(q[:CHECK]) - M[:, *np.triu_indices(n)]).max(),
        "dtau": max(np.abs(ours_dtau[0] - dtau_dq).max(), np.abs(ours_dtau[1] - (dtau_dv + D)).max()),
        "dqdd": max(np.abs(ours_dqdd[0] - ddq_dq).max(), np.abs(ours_dqdd[1] - (ddq_dv - Minv @ D)).max(),
                    np.abs(ours_dqdd[2] - Minv).max()),
    }
    print(f"# Native per-state speed on the Panda (n = {n}): robodyn {rd.__version__}'s C batch against Pinocchio's "
          f"C++ loop\n\n{platform.processor() or platform.machine()}, one thread, {N} states, best of "
          f"{args.rounds} interleaved rounds.\n\nPinocchio program: `{' '.join(command)}`\n")
    print("| output | robodyn C batch ns/state | Pinocchio C++ ns/state | ratio | max difference (first "
          f"{CHECK} states) |\n|---|---:|---:|---:|---:|")
    rows = [("M (full matrix)", "M", "crba_full", "M"), ("M (Pinocchio: upper triangle only)", "M", "crba", "M"),
            ("M packed upper triangle (`M_packed`; Pinocchio: upper triangle only)", "M_packed", "crba", "M_packed"),
            ("dtau: dtau/dq, dtau/dqd", "dtau", "rnea_derivatives", "dtau"),
            ("dqdd: dqdd/dq, dqdd/dqd, M^-1", "dqdd", "aba_derivatives", "dqdd"),
            ("tau (rnea, reference)", "tau", "rnea", None), ("qdd (aba, reference)", "forward", "aba", None)]
    for title, mine, theirs, diff in rows:
        d = f"{diffs[diff]:.1e}" if diff else "-"
        print(f"| {title} | {ours[mine]:.1f} | {pin[theirs]:.1f} | {pin[theirs] / ours[mine]:.1f}x | {d} |")


if __name__ == "__main__":
    main()
