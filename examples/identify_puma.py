"""Identify the PUMA 560's base parameters from a simulated exciting trajectory, by least squares.

    python examples/identify_puma.py [--duration 10] [--rate 100] [--noise 0.01] [--seed 1]

1. The base parameters of ``puma560`` by Khalil and Kleinfinger's rules (:mod:`robodyn.identification.base`):
   46 of the 72 standard ones (36 inertial, the 6 viscous frictions, 4 armatures; IA1 and IA2 act only
   together with ZZ1 and ZZ2).
2. An exciting trajectory: a finite Fourier series per joint (Swevers, Ganseman, Tukel, de Schutter and Van
   Brussel 1997), q_i(t) = q0_i + sum_l a_il/(w l) sin(w l t) - b_il/(w l) cos(w l t), 5 harmonics of
   w = 2 pi / duration, random coefficients, so that q, qd, qdd are exact and periodic.
3. "Measured" torques: robodyn.numeric.inverse_dynamics along it (the simulation), optionally with Gaussian
   noise of standard deviation ``noise`` times each joint's RMS torque.
4. Weighted least squares on the stacked base regressor W (one block of rows per sample): rows of joint j
   divided by its noise level sigma_j, theta = argmin |W theta - tau|; the covariance of the estimate is
   s^2 (W^T W)^-1 with s^2 = |residual|^2 / (rows - parameters) (Gauss-Markov), whose square roots are the
   standard errors.

Checks (exit 1 if one fails): without noise every base parameter is recovered to 1e-6 relative (relative to
max(|true|, 1e-6 max|true|)); with noise every estimate lies within 4.5 standard errors of the truth (for
Gaussian errors that bound is exceeded by each parameter with probability 7e-6, by any of 46 with < 4e-4) and
the mean squared standardized error is 1 within its chi-square spread.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from dataclasses import dataclass

import numpy as np

import robodyn as rd
from robodyn import identification, numeric

#: The statistical bound on |estimate - truth| / standard error used by the noisy check.
Z_BOUND = 4.5


@dataclass
class Trajectory:
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray


def fourier_trajectory(n: int, duration: float, rate: float, harmonics: int = 5, seed: int = 1,
                       amplitude: float = 0.5) -> Trajectory:
    """q, qd, qdd of a finite Fourier series with random coefficients (see the module docstring)."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration, 1.0 / rate)
    w = 2 * np.pi / duration
    a = rng.uniform(-amplitude, amplitude, (n, harmonics))
    b = rng.uniform(-amplitude, amplitude, (n, harmonics))
    q0 = rng.uniform(-1.0, 1.0, n)
    q, qd, qdd = np.tile(q0, (t.size, 1)), np.zeros((t.size, n)), np.zeros((t.size, n))
    for ell in range(1, harmonics + 1):
        wl = w * ell
        s, c = np.sin(wl * t)[:, None], np.cos(wl * t)[:, None]
        q += (a[:, ell - 1] * s - b[:, ell - 1] * c) / wl
        qd += a[:, ell - 1] * c + b[:, ell - 1] * s
        qdd += wl * (-a[:, ell - 1] * s + b[:, ell - 1] * c)
    return Trajectory(t, q, qd, qdd)


@dataclass
class Identification:
    names: tuple[str, ...]
    truth: np.ndarray
    estimate: np.ndarray
    stderr: np.ndarray
    condition: float
    samples: int

    @property
    def relative_error(self) -> np.ndarray:
        scale = np.maximum(np.abs(self.truth), 1e-6 * np.abs(self.truth).max())
        return np.abs(self.estimate - self.truth) / scale

    @property
    def z(self) -> np.ndarray:
        return (self.estimate - self.truth) / self.stderr


def identify(robot: rd.Manipulator, trajectory: Trajectory, noise: float = 0.0, seed: int = 2) -> Identification:
    """Weighted least squares of the base parameters from the simulated torques (+ noise)."""
    base = identification.base_parameters(robot)
    truth = base.numeric_values()
    tau = numeric.inverse_dynamics(robot, trajectory.q, trajectory.qd, trajectory.qdd)
    sigma = np.ones(robot.n)
    if noise > 0:
        sigma = noise * np.sqrt(np.mean(tau**2, axis=0))
        tau = tau + np.random.default_rng(seed).normal(size=tau.shape) * sigma
    W = base.numeric_regressor(trajectory.q, trajectory.qd, trajectory.qdd) / sigma[None, :, None]
    W = W.reshape(-1, len(base))
    y = (tau / sigma).reshape(-1)
    estimate, *_ = np.linalg.lstsq(W, y, rcond=None)
    residual = y - W @ estimate
    dof = W.shape[0] - W.shape[1]
    s2 = float(residual @ residual) / dof if noise > 0 else 0.0
    stderr = np.sqrt(s2 * np.diag(np.linalg.inv(W.T @ W)))
    return Identification(base.names, truth, estimate, stderr, float(np.linalg.cond(W)), trajectory.t.size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="trajectory period in seconds")
    parser.add_argument("--rate", type=float, default=100.0, help="samples per second")
    parser.add_argument("--noise", type=float, default=0.01, help="noise std as a fraction of each joint's RMS torque")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # the published PUMA inertias break the triangle inequality
        robot = rd.load("puma560")
    trajectory = fourier_trajectory(robot.n, args.duration, args.rate, seed=args.seed)
    exact = identify(robot, trajectory)
    noisy = identify(robot, trajectory, noise=args.noise, seed=args.seed + 1)
    print(f"puma560: {len(exact.names)} base parameters, {exact.samples} samples, cond(W) = {exact.condition:.3g}")
    print(f"{'parameter':>10} {'truth':>14} {'no noise':>14} {'with noise':>14} {'std error':>11} {'z':>6}")
    for k, name in enumerate(exact.names):
        print(f"{name:>10} {exact.truth[k]:14.6g} {exact.estimate[k]:14.6g} {noisy.estimate[k]:14.6g} "
              f"{noisy.stderr[k]:11.3g} {noisy.z[k]:6.2f}")
    worst = float(exact.relative_error.max())
    z_max = float(np.abs(noisy.z).max())
    mean_z2 = float(np.mean(noisy.z**2))
    spread = 4 * np.sqrt(2 / len(noisy.z))  # 4 standard deviations of a chi-square / p mean
    print(f"\nno noise: largest relative error {worst:.2e} (must be < 1e-6)")
    print(f"noise {args.noise:g} x RMS torque: largest |z| = {z_max:.2f} (must be < {Z_BOUND}), "
          f"mean z^2 = {mean_z2:.2f} (must be 1 +- {spread:.2f})")
    ok = worst < 1e-6 and z_max < Z_BOUND and abs(mean_z2 - 1) < spread
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
