"""The guide's figures, drawn when the site is built (nothing binary is committed, and each figure shows what
the current code computes): a diagram of the modified Denavit-Hartenberg parameters, Angeles, Ma and Rojas'
example 1 torques (their figure 5) and a free swing of the Macsyma appendix's arm (its energy check).

The plots are made through robodyn's public API as a user would (``torque_history(...).plot``,
``simulate(...).plot``), so building the docs runs those paths too. Files go to ``docs/_generated/figures``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

FIGURES = Path(__file__).resolve().parent.parent / "_generated" / "figures"


def _arrow(ax: Any, origin: np.ndarray, direction: np.ndarray, label: str, color: str) -> None:
    tip = origin + direction
    ax.annotate("", xy=tip, xytext=origin, arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.6})
    offset = 0.06 * direction / np.linalg.norm(direction) + (np.array([0.0, 0.07]) if direction[1] == 0 else 0.0)
    ax.text(*(tip + offset), label, color=color, fontsize=12)


def dh_diagram(path: Path) -> None:
    """Two joint axes in a side view: the common normal a_{i-1} along x_{i-1}, the twist alpha_{i-1} about it,
    the offset d_i along z_i and the angle theta_i about z_i (modified DH, Craig's and Burdick's)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    o_prev, o_i = np.array([0.0, 0.0]), np.array([2.2, 0.0])
    foot = np.array([2.2, -0.35])  # where the common normal meets axis i; frame i sits d_i further along z_i
    ax.plot([0, 0], [-1.2, 1.4], color="0.6", lw=6, alpha=0.35, solid_capstyle="round")  # joint axis i-1
    ax.plot([2.2, 2.2], [-1.2, 1.4], color="0.6", lw=6, alpha=0.35, solid_capstyle="round")  # joint axis i
    ax.text(-0.35, 1.45, "axis $i-1$", fontsize=11)
    ax.text(2.0, 1.45, "axis $i$", fontsize=11)
    ax.plot([0, 2.2], [-0.35, -0.35], color="0.3", ls="--", lw=1)  # common normal
    _arrow(ax, o_prev + np.array([0, -0.35]), np.array([0.8, 0.0]), r"$x_{i-1}$", "tab:red")
    _arrow(ax, o_prev + np.array([0, -0.35]), np.array([0.0, 0.8]), r"$z_{i-1}$", "tab:blue")
    ax.annotate("", xy=foot, xytext=o_prev + np.array([0, -0.35]),
                arrowprops={"arrowstyle": "<->", "color": "0.2", "shrinkA": 0, "shrinkB": 0})
    ax.text(1.0, -0.55, r"$a_{i-1}$ along $x_{i-1}$", fontsize=11, ha="center")
    ax.annotate("", xy=o_i + np.array([0, 0.25]), xytext=foot, arrowprops={"arrowstyle": "<->", "color": "0.2"})
    ax.text(2.3, -0.1, r"$d_i$ along $z_i$", fontsize=11)
    _arrow(ax, o_i + np.array([0, 0.25]), np.array([0.0, 0.8]), r"$z_i$", "tab:blue")
    _arrow(ax, o_i + np.array([0, 0.25]), np.array([0.7, 0.35]), r"$x_i$", "tab:red")
    ax.annotate("", xy=o_i + np.array([0.55, 0.52]), xytext=o_i + np.array([0.6, 0.25]),
                arrowprops={"arrowstyle": "->", "connectionstyle": "arc3,rad=0.4", "color": "tab:green"})
    ax.text(2.85, 0.42, r"$\theta_i$ about $z_i$", color="tab:green", fontsize=11)
    ax.text(1.1, -0.85, r"$\alpha_{i-1}$: the twist from $z_{i-1}$ to $z_i$ about $x_{i-1}$ (out of this plane)",
            fontsize=10, ha="center", color="tab:purple")
    ax.text(-0.3, -1.15, r"$A_i = \mathrm{Rot}(x, \alpha_{i-1})\,\mathrm{Trans}(x, a_{i-1})\,"
                         r"\mathrm{Rot}(z, \theta_i)\,\mathrm{Trans}(z, d_i)$", fontsize=11)
    ax.set_xlim(-0.7, 3.9)
    ax.set_ylim(-1.35, 1.7)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def angeles_example1(path: Path) -> None:
    """Angeles, Ma and Rojas' example 1 on the Stanford arm: the joint torques of their figure 5."""
    import robodyn as rd
    from robodyn.analysis.torques import torque_history

    torque_history(rd.load("stanford_arm"), "angeles1").plot(path)


def macsyma_swing(path: Path) -> None:
    """The Macsyma appendix's two-link arm with payload, a free swing over 5 s (angles and energy)."""
    import robodyn as rd

    params = {"l1": 1.0, "l2": 0.8, "m1": 3.0, "m2": 2.0, "I1": 0.25, "I2": 0.1, "mp": 0.5, "g": 9.81}
    result = rd.simulate(rd.load("two_link_payload"), 5.0, [-1.0, 0.7], params=params, samples=400)
    figure = result.plot(path)
    plt.close(figure)


def build(app: Any) -> None:
    """Draw every figure into ``docs/_generated/figures`` (before the pages are read)."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # matplotlib's own, on some versions
        dh_diagram(FIGURES / "dh_modified.png")
        angeles_example1(FIGURES / "angeles_example1.png")
        macsyma_swing(FIGURES / "macsyma_swing.png")


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", build)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
