"""Errors and warnings raised by robodyn.

Every problem with a robot description is a :class:`ModelError` whose message
names the file (when there is one), the link (1-based) and the field, on one line.
"""

from __future__ import annotations

import math
import re
import unicodedata
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

#: The most characters of one value quoted in a message (a name, a joint type, an expression): a longer one is
#: cut in the middle, ``...`` marking the cut (see :func:`clip`).
MAX_QUOTED = 60
#: The most characters of the file named in a :class:`ModelError` (a path: its start is kept, ``...`` marks the
#: cut; :func:`robodyn.model.files.shown_path` cuts as much).
MAX_FILE = 200
#: The most characters of one message line, whatever it quotes: the last resort of :func:`bounded`.
MAX_LINE = 300

_HIDDEN = ("Cc", "Cf", "Cs")  # control, format (bidirectional overrides...), lone surrogates


def printable(text: str) -> str:
    """``text`` on one line (runs of white space folded to one space) with every other control or format
    character, and a lone surrogate (text that is not valid Unicode), shown as an escape (``\\x1b``,
    ``\\u202e``, ``\\ud800``): a name or description read from a file cannot move the cursor, retitle the
    terminal, reverse the text of a message or make printing it fail."""
    folded = " ".join(str(text).split())
    if folded.isprintable():  # the common case, at C speed (a message of a megabyte included)
        return folded
    return "".join(ch if unicodedata.category(ch) not in _HIDDEN else ascii(ch)[1:-1] for ch in folded)


def clip(text: str, limit: int = MAX_QUOTED) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and end with ``...`` between
    (``limit`` characters in all)."""
    text = str(text)
    if len(text) <= limit:
        return text
    keep = max(limit - 3, 2)
    head = (keep + 1) // 2
    return text[:head] + "..." + text[len(text) - (keep - head):]


_LONG_WORD = re.compile(rf"\S{{{MAX_QUOTED + 1},}}")
#: A quoted value ('...' or "...", the quote not inside a word: an apostrophe is not one) too long to quote whole.
_LONG_QUOTED = re.compile(rf"(?<!\w)(?:'[^']{{{MAX_QUOTED - 1},}}'|\"[^\"]{{{MAX_QUOTED - 1},}}\")(?!\w)")


def did_you_mean(name: str, candidates: Iterable[str], where: str = "", most: int = 1) -> str:
    """``"; did you mean 'puma560'?"`` for the closest of ``candidates`` to ``name`` (difflib's ratio at least 0.6;
    up to ``most`` of them), followed by ``where``; "" when none is close: the hint of every "no such name" line."""
    import difflib

    close = difflib.get_close_matches(name, list(candidates), n=most)
    return f"; did you mean {', '.join(map(repr, close))}{where}?" if close else ""


def bounded(text: str, limit: int = MAX_LINE) -> str:
    """``text`` as one bounded message line: :func:`printable`, every quoted value (``'...'``, ``"..."``) longer
    than :data:`MAX_QUOTED` cut by :func:`clip`; then, if the line is still longer than ``limit``, every run of
    characters without a space longer than :data:`MAX_QUOTED` cut too, and as a last resort the whole line cut
    to ``limit`` characters (``...`` at the end)."""
    line = printable(text)
    if len(line) > MAX_QUOTED:
        line = _LONG_QUOTED.sub(lambda m: m[0][0] + clip(m[0][1:-1], MAX_QUOTED - 2) + m[0][0], line)
    if len(line) <= limit:
        return line
    line = _LONG_WORD.sub(lambda m: clip(m[0]), line)
    return line if len(line) <= limit else line[: limit - 3] + "..."


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
        """One line of at most :data:`MAX_LINE` characters: file (cut to :data:`MAX_FILE`), link, field and
        every value quoted in the problem cut to :data:`MAX_QUOTED` (:func:`bounded`)."""
        parts = []
        if self.file:
            file = printable(str(self.file))
            parts.append(file if len(file) <= MAX_FILE + 3 else file[:MAX_FILE] + "...")
        if self.link is not None:
            parts.append(f"link {self.link}" if isinstance(self.link, int) else clip(printable(str(self.link))))
        if self.field:
            parts.append(f"field '{clip(printable(str(self.field)))}'")
        where = ": ".join(parts)
        if not where:
            return bounded(self.problem)
        line = f"{where}: {bounded(self.problem, max(MAX_LINE - len(where) - 2, MAX_QUOTED))}"  # the file kept whole
        return line if len(line) <= MAX_LINE else line[: MAX_LINE - 3] + "..."

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


class BuildNote(UserWarning):
    """robodyn built what a call needed and was not built up front (a compiled routine left out of
    ``rd.compile``'s outputs): it says what, and how to build it up front."""
