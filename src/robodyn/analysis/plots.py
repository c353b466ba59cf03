"""Figures shared by simulations, joint trajectories and the HTML report, with matplotlib's
object-oriented :class:`~matplotlib.figure.Figure` (no pyplot state, no global backend switch).

Every figure has labelled axes with units: t (s); q_i in degrees for a revolute joint, in metres for
a prismatic one; energies in J. A panel whose data are constant to within a noise floor (:data:`RELATIVE_FLOOR`
of their magnitude or :data:`ABSOLUTE_FLOOR`) is drawn flat and titled "constant". :func:`save` writes
atomically; :func:`png_base64` embeds a figure in HTML.
"""

from __future__ import annotations

import base64
import functools
import io
import math
from pathlib import Path
from typing import Any

import numpy as np

from robodyn.model.files import atomic_path
from robodyn.model.manipulator import Manipulator


@functools.cache
def _inline_figure_class() -> type:
    """matplotlib's Figure with ``_repr_png_``: a Figure made without pyplot (no global state, no backend switch)
    has no notebook display of its own, so that ``result.plot()`` would print ``<Figure size ...>``. Made on first
    use (matplotlib loads then)."""
    from matplotlib.figure import Figure

    class InlineFigure(Figure):
        def _repr_png_(self) -> bytes:
            buffer = io.BytesIO()
            self.savefig(buffer, format="png", bbox_inches="tight")
            return buffer.getvalue()

    return InlineFigure

#: Image formats that matplotlib's Agg, PDF, PS and SVG backends write (the file suffix chooses).
IMAGE_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


def new_figure(panels: int, columns: int = 2, height: float = 2.3, width: float = 5.0) -> tuple[Any, list[Any]]:
    """A Figure with ``panels`` axes on a grid of ``columns``; the unused axes are switched off. The Figure shows
    itself inline in a notebook (``_repr_png_``), without pyplot."""
    Figure = _inline_figure_class()
    cols = min(columns, panels)
    rows = math.ceil(panels / cols)
    fig = Figure(figsize=(width * cols + 1, height * rows + 1))
    axes = list(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax in axes[panels:]:
        ax.axis("off")
    return fig, axes[:panels]


def plain_suptitle(fig: Any, text: str) -> Any:
    """``fig.suptitle(text)`` as plain text. A title holds robot and trajectory names (a CSV file's stem is the
    trajectory's name), where ``$...$`` must not be parsed as math text: ``a$\\foo{$.csv`` would make
    mathtext raise a ValueError when the figure is drawn."""
    return fig.suptitle(text, parse_math=False)


#: A panel whose data vary by at most this fraction of their largest magnitude, or by at most
#: :data:`ABSOLUTE_FLOOR`, is drawn flat and its title says "constant": autoscaling would otherwise blow rounding
#: noise (a torque of 1e-16 N m on a joint that carries nothing, an energy drift of 1e-13 J) up into a curve.
RELATIVE_FLOOR = 1e-9
#: See :data:`RELATIVE_FLOOR` (in the panel's units).
ABSOLUTE_FLOOR = 1e-12


def constant_level(*series: Any) -> float | None:
    """The level of data that vary by no more than the noise floor (:data:`RELATIVE_FLOOR`,
    :data:`ABSOLUTE_FLOOR`), else None (also for no finite data)."""
    values = np.concatenate([np.ravel(np.asarray(s, dtype=float)) for s in series]) if series else np.zeros(0)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    low, high = float(values.min()), float(values.max())
    if high - low > max(RELATIVE_FLOOR * max(abs(low), abs(high)), ABSOLUTE_FLOOR):
        return None
    return (low + high) / 2


def _flat_if_noise(ax: Any, *series: Any) -> None:
    """Limits of a wide band (10 % of the level, or 1 unit about zero) for a panel whose data are constant to
    within the noise floor, and "(constant)" in its title."""
    level = constant_level(*series)
    if level is None:
        return
    half = max(abs(level) * 0.1, 1.0 if abs(level) < 1.0 else 0.0)
    ax.set_ylim(level - half, level + half)
    ax.set_title(f"{ax.get_title()} (constant)", fontsize=9)


def _style(ax: Any, title: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("t (s)", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, linewidth=0.3)


def joint_values(robot: Manipulator, q: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """q with revolute columns in degrees, and the axis label of every joint (column k is joint
    ``robot.independent[k]``: a coupled robot's columns are its independent coordinates)."""
    shown = np.array(q, dtype=float, copy=True)
    labels = []
    for k, j in enumerate(robot.independent):
        if robot.links[j].revolute:
            shown[:, k] = np.degrees(shown[:, k])
            labels.append(f"$q_{{{j + 1}}}$ (deg)")
        else:
            labels.append(f"$q_{{{j + 1}}}$ (m)")
    return shown, labels


def joint_figure(t: np.ndarray, q: np.ndarray, robot: Manipulator, title: str) -> Any:
    """One panel per joint: q_i(t) (Angeles et al.'s figures 4 and 7)."""
    fig, axes = new_figure(robot.nv)
    shown, labels = joint_values(robot, q)
    for k, (j, ax) in enumerate(zip(robot.independent, axes, strict=False)):
        ax.plot(t, shown[:, k], color="tab:blue" if robot.links[j].revolute else "tab:red")
        _style(ax, f"joint {j + 1}", labels[k])
        _flat_if_noise(ax, shown[:, k])
    plain_suptitle(fig, title)
    fig.tight_layout()
    return fig


def simulation_figure(
    t: np.ndarray,
    q: np.ndarray,
    kinetic: np.ndarray,
    potential: np.ndarray,
    robot: Manipulator,
    title: str,
) -> Any:
    """Joint motion (left) and the energies with their sum (right)."""
    fig, (ax_q, ax_e) = new_figure(2, width=5.5, height=3.2)
    shown, _ = joint_values(robot, q)
    for k, j in enumerate(robot.independent):
        ax_q.plot(t, shown[:, k], label=f"joint {j + 1} ({'deg' if robot.links[j].revolute else 'm'})")
    _style(ax_q, "joint motion", "q (deg for R, m for P)")
    _flat_if_noise(ax_q, shown)
    ax_q.legend(fontsize=7)
    energy = kinetic + potential
    ax_e.plot(t, kinetic, label="kinetic T")
    ax_e.plot(t, potential - potential[0], label="potential V - V(0)")
    ax_e.plot(t, energy - energy[0], label="T + V - E(0)", color="black", linewidth=1.2)
    _style(ax_e, "energy", "energy (J)")
    _flat_if_noise(ax_e, kinetic, potential - potential[0], energy - energy[0])
    ax_e.legend(fontsize=7)
    plain_suptitle(fig, title)
    fig.tight_layout()
    return fig


def torque_figure(history: Any) -> Any:
    """A :class:`~robodyn.analysis.torques.TorqueHistory` as one panel per joint: tau_i (N m) or f_i (N) against t
    (s)."""
    robot, t = history.robot, history.trajectory.t
    fig, axes = new_figure(robot.nv, height=2.4)
    for k, (j, ax) in enumerate(zip(robot.independent, axes, strict=False)):
        revolute = robot.links[j].revolute
        ax.plot(t, history.tau[:, k], color="tab:blue" if revolute else "tab:red")
        ax.axhline(0.0, color="grey", linewidth=0.5)
        label = f"$\\tau_{{{j + 1}}}$ (N m)" if revolute else f"$f_{{{j + 1}}}$ (N)"
        _style(ax, f"joint {j + 1} ({'torque' if revolute else 'force'})", label)
        _flat_if_noise(ax, history.tau[:, k])
    figure = {"angeles1": "fig. 5", "angeles2": "fig. 8"}.get(history.trajectory.name)
    plain_suptitle(fig, f"{robot.name}: joint torques and forces along {history.trajectory.name}"
                   + (f" (cf. Angeles, Ma and Rojas {figure})" if figure else ""))
    fig.tight_layout()
    return fig


def save(fig: Any, path: str | Path, dpi: int = 100) -> Path:
    """``fig.savefig`` to a temporary file beside ``path``, then renamed (:func:`robodyn.model.files.atomic_path`);
    the suffix of ``path`` chooses the format, one of :data:`IMAGE_FORMATS`."""
    path = Path(path)
    if path.suffix.lower().lstrip(".") not in IMAGE_FORMATS:
        raise ValueError(f"{path}: unknown image format {path.suffix!r}; use one of "
                         f"{', '.join('.' + f for f in IMAGE_FORMATS)}")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format=path.suffix.lower().lstrip("."))
    return path


def png_base64(fig: Any, dpi: int = 80) -> str:
    """The figure as a base64 PNG, for ``<img src="data:image/png;base64,...">``."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
