"""The :class:`Trajectory` type (joint-space samples) and its limits, shared by :mod:`robodyn.analysis.trajectories`
(the
sources of trajectories, which re-exports these names) and :mod:`robodyn.analysis.ik` (which builds one by inverse
kinematics and is itself a source).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robodyn.errors import ModelError
from robodyn.model.files import atomic_write

#: The most samples of a built-in trajectory, of a simulation's output or of a check's random states: one
#: million states of a 6-joint arm already take about 150 MB for q, qd, qdd and tau.
MAX_SAMPLES = 1_000_000


class TrajectoryError(ModelError):
    """A trajectory name or file that cannot be used (one line, like every ModelError)."""


def check_samples(samples: object, least: int, field: str = "samples") -> int:
    """``samples`` as an int in [``least``, :data:`MAX_SAMPLES`]; otherwise one :class:`ModelError` naming ``field``."""
    if isinstance(samples, bool) or not isinstance(samples, int | np.integer) or not least <= samples <= MAX_SAMPLES:
        raise ModelError(f"must be an integer from {least} to {MAX_SAMPLES}, got {samples!r}", field=field)
    return int(samples)


@dataclass(frozen=True)
class Trajectory:
    """Joint-space samples: t of shape (N,), q, qd, qdd of shape (N, n), and a name."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    name: str = "trajectory"

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float)
        arrays = [np.atleast_2d(np.asarray(getattr(self, k), dtype=float)) for k in ("q", "qd", "qdd")]
        if t.ndim != 1 or t.size < 3:
            raise TrajectoryError("t must be a 1-d array of at least 3 samples", field="t")
        if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise TrajectoryError("t must be finite and strictly increasing", field="t")
        for key, a in zip(("q", "qd", "qdd"), arrays, strict=True):
            if a.shape[0] != t.size or a.shape != arrays[0].shape:
                raise TrajectoryError(f"expected shape ({t.size}, n), got {a.shape}", field=key)
            if not np.all(np.isfinite(a)):
                raise TrajectoryError("contains a value that is not finite", field=key)
        object.__setattr__(self, "t", t)
        for key, a in zip(("q", "qd", "qdd"), arrays, strict=True):
            object.__setattr__(self, key, a)

    @property
    def n(self) -> int:
        """Number of joints."""
        return int(self.q.shape[1])

    def __len__(self) -> int:
        return int(self.t.size)

    def header(self) -> list[str]:
        """Column names of :meth:`to_csv`: t, q1..qn, qd1..qdn, qdd1..qddn."""
        return ["t"] + [f"{p}{i}" for p in ("q", "qd", "qdd") for i in range(1, self.n + 1)]

    def to_csv(self, path: str | Path) -> Path:
        """Write every column with full precision (``%.17g``), atomically; :func:`trajectory_from_csv` reads it."""
        data = np.hstack([self.t[:, None], self.q, self.qd, self.qdd])
        rows = [",".join(f"{x:.17g}" for x in row) for row in data]
        return atomic_write(Path(path), "\n".join([",".join(self.header()), *rows]) + "\n")
