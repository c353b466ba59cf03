"""Errors and warnings raised by robodyn.

Every problem with a robot description is a :class:`ModelError` whose message
names the file (when there is one), the link (1-based) and the field, on one line.
"""

from __future__ import annotations

import math
import unicodedata
import warnings
from collections.abc import Iterator
from contextlib import contextmanager


def printable(text: str) -> str:
    """``text`` on one line (runs of white space folded to one space) with every other control or format
    character shown as an escape (``\\x1b``, ``\\u202e``): a name or description read from a file cannot move
    the cursor, retitle the terminal or reverse the text of a message."""
    folded = " ".join(str(text).split())
    return "".join(ch if unicodedata.category(ch) not in ("Cc", "Cf") else ascii(ch)[1:-1] for ch in folded)


class ModelError(ValueError):
    """A robot description is invalid.

    Attributes ``file``, ``link`` (1-based, or None for manipulator-level fields)
    and ``field`` say where; ``problem`` says what. ``unbound`` names the parameters a computation needs
    numbers for and was not given (the command line turns it into a ``--param`` hint).
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        link: int | str | None = None,
        field: str | None = None,
        unbound: tuple[str, ...] = (),
    ) -> None:
        self.problem = problem
        self.unbound = tuple(unbound)
        self.file = file
        self.link = link
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.file:
            parts.append(str(self.file))
        if self.link is not None:
            parts.append(f"link {self.link}" if isinstance(self.link, int) else str(self.link))
        if self.field:
            parts.append(f"field '{self.field}'")
        where = ": ".join(parts)
        return printable(f"{where}: {self.problem}" if where else self.problem)

    def located(self, *, file: str | None = None, link: int | str | None = None) -> ModelError:
        """A copy of this error with the file (and link, if unknown so far) filled in."""
        return ModelError(
            self.problem,
            file=file if file is not None else self.file,
            link=self.link if self.link is not None else link,
            field=self.field,
            unbound=self.unbound,
        )


class ModelWarning(UserWarning):
    """A description that is physically doubtful but published in the literature."""


class DerivationError(RuntimeError):
    """A formulation cannot handle the given robot."""


@contextmanager
def prefixed_warnings(prefix: str) -> Iterator[None]:
    """Warnings raised in the block, raised again after it with ``"{prefix}: "`` before their message (the file
    or the link that the code raising them does not know). An exception leaving the block drops them: the
    error says what matters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        warnings.warn_explicit(f"{prefix}: {w.message}", w.category, w.filename, w.lineno)


def finite_constant(value: object) -> float:
    """``value`` as a finite float, for a number written into generated or traced code; a number beyond double
    precision (a model's numbers so large that a product of them overflows) is one :class:`ModelError`,
    never ``inf`` in C or a NameError in Python."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ModelError(f"a constant of the equations is not a finite double ({str(value)[:40]}): the model's "
                         "numbers are too large")
    return number
