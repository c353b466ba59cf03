"""One self-contained HTML page that a person reads: the arm's tables, its equations, their cost, the
cross-check of the formulations and plots of the arm in motion.

    from robodyn.report import page as report
    report.write(rd.load("double_pendulum"), "report.html", params={"L1": 1, "L2": 0.5, "m1": 2, "m2": 1})

Self-contained: no script, no stylesheet or font from the network, plots embedded as base64 PNG. The
equations are written in MathML (sympy's presentation printer), which browsers lay out natively (MathML
Core: Chromium 109+, Firefox, Safari), so nothing renders them at view time; each formula keeps its
LaTeX source in the ``alttext`` attribute. Large arms do not turn into megabytes of mathematics: an element
with more than :data:`DISPLAY_TERMS` terms (in the canonical expanded form) is listed with its term count, not
printed; the elements of nested equations are expanded one by one within :data:`ELEMENT_BUDGET` terms each; the
zero entries of M are not listed but drawn in its sparsity pattern (:func:`sparsity_svg`); the cross-check leaves
out EMDEG where the expanded form is large. Floating-point numbers are shown to four significant digits.
"""

from __future__ import annotations

import datetime
import html
import re
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sympy
from sympy.printing.mathml import mathml

from robodyn.algebra import count_terms, to_se, to_sympy
from robodyn.analysis.check import MAX_CHECK_LINKS, check, not_applicable
from robodyn.analysis.plots import png_base64
from robodyn.analysis.simulation import SYMBOLIC_MAX_JOINTS, bind_parameters, forward_dynamics_symbolic, simulate
from robodyn.analysis.torques import torque_history
from robodyn.equations import BoundedExpansion, Equations, drop_float_noise
from robodyn.formulations import AVAILABLE, derive
from robodyn.model import tables
from robodyn.model.files import atomic_write
from robodyn.model.manipulator import Manipulator
from robodyn.numeric.model import Params
from robodyn.program import opcount
from robodyn.program.targets import count_summary

#: Elements with more terms than this are summarised, not printed.
DISPLAY_TERMS = 40
#: Elements of nested equations are expanded one by one for the page, each giving up past this many terms
#: (:class:`robodyn.equations.BoundedExpansion`): the page of any arm takes seconds.
ELEMENT_BUDGET = 2_000
#: Significant digits of floating-point numbers in formulas.
DIGITS = 4
#: Terms of a displayed sum below this fraction of the largest coefficient are rounding noise.
NOISE = 1e-12
#: Random states of the numeric cross-check.
CHECK_SAMPLES = 20
#: Seconds of free swing simulated for the plot.
SWING_SECONDS = 3.0

Progress = Callable[[str], None]

CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 70em;
       padding: 0 1.5em; color: #1b1b1b; background: #ffffff; line-height: 1.45; }
h1 { border-bottom: 2px solid #34568b; padding-bottom: .2em; }
h2 { color: #34568b; margin-top: 2em; border-bottom: 1px solid #cfd8e6; }
table { border-collapse: collapse; margin: .8em 0; }
th, td { border: 1px solid #cfd8e6; padding: .3em .7em; text-align: center; vertical-align: middle; }
th { background: #eef2f8; }
td.left, th.left { text-align: left; }
.note { color: #555; font-size: .92em; }
.eq { margin: .5em 0; padding: .15em 0; overflow-x: auto; overflow-y: hidden; max-width: 100%; }
p.eq { overflow-wrap: anywhere; }
figure { margin: .8em 0; } svg.pattern { display: block; }
.summary { color: #8a4b08; }
nav a { margin-right: 1em; }
img { max-width: 100%; border: 1px solid #e3e3e3; }
.ok { color: #1d7a2f; font-weight: bold; } .bad { color: #b00020; font-weight: bold; }
math { font-size: 1.05em; }
"""

_DOT_SYMBOL = re.compile(r"<mi>(qdd|qd)</mi>")


# -- mathematics -------------------------------------------------------------------------------------


def _rounded(expr: Any) -> Any:
    """``expr`` with every Float shown to :data:`DIGITS` significant digits, and the terms of a sum whose
    floating-point coefficient is below :data:`NOISE` of the largest dropped (rounding noise such as
    cos(pi/2) = 6e-17 times a mass)."""
    expr = sympy.sympify(expr)
    floats = expr.atoms(sympy.Float)
    if not floats:
        return expr
    if isinstance(expr, sympy.Add):
        sizes = [abs(float(term.as_coeff_Mul()[0])) for term in expr.args]
        largest = max(sizes)
        expr = sympy.Add(*(t for t, c in zip(expr.args, sizes, strict=True) if c >= NOISE * largest))
    return expr.xreplace({f: sympy.Float(f, DIGITS) for f in expr.atoms(sympy.Float)})


def _dots(markup: str) -> str:
    """qd_i and qdd_i as q with one or two dots above (Newton's notation). The dots are not marked as
    accents: without a MATH-table font (DejaVu, Liberation) Chromium loses small accent glyphs."""
    def accent(match: re.Match[str]) -> str:
        mark = "&#x00A8;" if match.group(1) == "qdd" else "&#x02D9;"
        return f'<mover accent="false"><mi>q</mi><mo>{mark}</mo></mover>'

    return _DOT_SYMBOL.sub(accent, markup)


def math(expr: Any, display: bool = False, lhs: str | None = None, lhs_latex: str | None = None) -> str:
    """``expr`` as a MathML element; ``lhs`` (MathML markup, LaTeX ``lhs_latex``) is printed before "="."""
    value = _rounded(expr)
    body = _dots(mathml(value, printer="presentation"))
    latex = sympy.latex(value)
    if lhs is not None:
        body = f"{lhs}<mo>=</mo>{body}"
        latex = f"{lhs_latex if lhs_latex is not None else _lhs_latex(lhs)} = {latex}"
    mode = "block" if display else "inline"
    return f'<math display="{mode}" alttext="{html.escape(latex, quote=True)}"><mrow>{body}</mrow></math>'


def _lhs_latex(lhs: str) -> str:
    return re.sub(r"<[^>]+>", "", lhs)


def _indexed(name: str, *indices: int, wide: bool = False) -> str:
    """MathML for name_{ij}; ``wide`` (an arm of 10 or more coordinates): name_{i,j}, so that M_{1,10} is not
    read as M_{11,0}."""
    if wide and len(indices) > 1:
        sub = "<mo>,</mo>".join(f"<mn>{i}</mn>" for i in indices)
        return f"<msub><mi>{name}</mi><mrow>{sub}</mrow></msub>"
    return f"<msub><mi>{name}</mi><mn>{''.join(str(i) for i in indices)}</mn></msub>"


def _label(name: str, indices: tuple[int, ...], wide: bool) -> str:
    """Plain text for name_{ij} (name_{i,j} when ``wide``)."""
    return f"{name}_{','.join(map(str, indices)) if wide else ''.join(map(str, indices))}"


@dataclass(frozen=True)
class Element:
    """One element of M, h, G or the load as the page shows it: ``expr`` (expanded, float noise dropped) when it
    expanded within the page's budget, else None; ``terms`` its number of terms (None if not expanded)."""

    indices: tuple[int, ...]
    expr: sympy.Expr | None
    terms: int | None

    @property
    def zero(self) -> bool:
        return self.terms == 0


def _elements(eqs: Equations, part: str) -> list[Element]:
    """The upper triangle of M (row by row) or the entries of a vector part, each expanded if that stays small.

    Expanded equations (:attr:`Equations.expanded`, within :data:`robodyn.equations.EXPAND_BUDGET` for the whole
    arm): the public matrices. Nested ones: each element expanded bottom-up, giving up past
    :data:`ELEMENT_BUDGET` terms (:class:`robodyn.equations.BoundedExpansion`), so the page costs seconds on any
    arm; float noise is dropped as in :func:`robodyn.equations.drop_float_noise`, relative to the largest
    coefficient of the elements of the part that expanded."""
    n = eqs.n
    cells = [(i, j) for i in range(n) for j in range(i, n)] if part == "M" else [(i, 0) for i in range(n)]
    index = (lambda i, j: (i + 1, j + 1)) if part == "M" else (lambda i, j: (i + 1,))
    if eqs.expanded:
        matrix = getattr(eqs, part)
        return [Element(index(i, j), matrix[i, j], len(sympy.Add.make_args(matrix[i, j])) if matrix[i, j] != 0
                        else 0) for i, j in cells]
    raw, expand = eqs.raw(part), BoundedExpansion()
    values = [expand(raw[i, j], ELEMENT_BUDGET) for i, j in cells]
    kept = iter(drop_float_noise(v for v in values if v is not None))
    out = []
    for (i, j), value in zip(cells, values, strict=True):
        if value is None:
            out.append(Element(index(i, j), None, None))
            continue
        value = next(kept)
        terms = count_terms(value)
        out.append(Element(index(i, j), to_sympy(value) if terms <= DISPLAY_TERMS else None, terms))
    return out


def _shown_elements(name: str, elements: list[Element], wide: bool) -> str:
    """The formulas of the small non-zero elements, then one line naming the zero ones (vectors only: M's zeros are
    in its sparsity picture) and one listing the large ones with their sizes."""
    parts = [f'<div class="eq">{math(e.expr, display=True, lhs=_indexed(name, *e.indices, wide=wide))}</div>'
             for e in elements if e.expr is not None and not e.zero and e.terms is not None
             and e.terms <= DISPLAY_TERMS]
    zeros = [_label(name, e.indices, wide) for e in elements if e.zero]
    if zeros and name != "M":
        parts.append(f'<p class="note">Zero: {html.escape(", ".join(zeros))}.</p>')
    large = [f"{_label(name, e.indices, wide)} ({e.terms} terms)" for e in elements
             if e.terms is not None and e.terms > DISPLAY_TERMS]
    unexpanded = [_label(name, e.indices, wide) for e in elements if e.terms is None]
    if large:
        parts.append(f'<p class="eq summary">Not printed, more than {DISPLAY_TERMS} terms expanded: '
                     f"{html.escape(', '.join(large))}.</p>")
    if unexpanded:
        parts.append(f'<p class="eq summary">Not expanded (expanding each would pass {ELEMENT_BUDGET:,} terms): '
                     f"{html.escape(', '.join(unexpanded))}.</p>")
    return "\n".join(parts)


def sparsity_svg(elements: list[Element], n: int) -> str:
    """The pattern of M as an inline SVG: a dark square for each entry that is not zero, white for each zero
    entry, light for an entry too large to expand here (not shown to be zero, nor printed); M is symmetric,
    so each upper entry is drawn on both sides."""
    cell = max(8, min(28, 336 // max(n, 1)))
    size = cell * n
    fill = {}
    for e in elements:
        colour = "#ffffff" if e.zero else "#9fb3d1" if e.terms is None else "#34568b"
        i, j = e.indices[0] - 1, e.indices[1] - 1
        fill[i, j] = fill[j, i] = colour
    squares = "".join(f'<rect x="{j * cell}" y="{i * cell}" width="{cell}" height="{cell}" fill="{fill[i, j]}"/>'
                      for i in range(n) for j in range(n))
    zeros = sum(1 for e in elements if e.zero)
    label = f"sparsity pattern of M: {zeros} of the {len(elements)} entries of the upper triangle are zero"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="pattern" role="img" aria-label="{label}" '
            f'width="{size + 2}" height="{size + 2}" viewBox="-1 -1 {size + 2} {size + 2}">'
            f"<title>{label}</title>{squares}"
            f'<rect x="0" y="0" width="{size}" height="{size}" fill="none" stroke="#1b1b1b" stroke-width="1"/>'
            f'<path d="{_grid(n, cell)}" stroke="#cfd8e6" stroke-width="0.5" fill="none"/></svg>')


def _grid(n: int, cell: int) -> str:
    size = n * cell
    return "".join(f"M{k * cell} 0V{size}M0 {k * cell}H{size}" for k in range(1, n))


# -- sections ----------------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]], raw: bool = False) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{cell if raw else html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _text(text: str) -> str:
    """Free text of the model for the page: HTML-escaped, and anything that is not valid Unicode (a lone surrogate,
    refused when a model is loaded) written as its escape (``\\ud800``), so that the page can always be written."""
    return html.escape(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def _couplings_note(robot: Manipulator) -> str:
    """A coupled robot's couplings (q_joint = ratio q_leader + offset) and its independent coordinates."""
    if not robot.couplings:
        return ""
    rules = "; ".join(c.describe() if c.closure is not None else  # (a four-bar's passive joint: its closed form)
                      " + ".join([f"joint {int(c.joint) + 1} = {r} x joint {int(k) + 1}" if i == 0 else
                                  f"{r} x joint {int(k) + 1}" for i, (k, r) in enumerate(c.leaders)]) + f" + {c.offset}"
                      for c in robot.couplings)
    free = ", ".join(str(j + 1) for j in robot.independent)
    return (f"<p>Coupled joints: {html.escape(rules)}. The equations, plots and counts are in the {robot.nv} "
            f"independent coordinates q1..q{robot.nv}, those of joints {html.escape(free)}.</p>")


def _source(source: str) -> str:
    """The model's source as the page shows it: a file by its name only (not the path it was read from on this
    machine), anything else (a citation) as it is."""
    try:
        is_file = Path(source).is_file()
    except (OSError, ValueError):
        is_file = False
    return Path(source).name if is_file else source


def _header(robot: Manipulator) -> str:
    params = robot.parameters()
    gravity = sympy.Tuple(*robot.gravity)
    lines = [
        f"<h1>{_text(robot.name)}</h1>",
        f"<p>{_text(robot.description)}</p>" if robot.description else "",
        f'<p class="note">Source: {_text(_source(robot.source))}</p>' if robot.source else "",
        f"<p>{robot.n} joints ({robot.joint_types}), {html.escape(tables.CONVENTION_TEXT[robot.convention])}.</p>",
        _couplings_note(robot),
        f"<p>Gravity (acceleration vector in the base frame): {math(gravity)}. Parameters: "
        + (", ".join(math(s) for s in params) if params else "none (numeric model)") + ".</p>",
    ]
    return "\n".join(line for line in lines if line)


_GREEK = {"alpha": "&#x03B1;", "theta": "&#x03B8;"}


def _header_math(header: str) -> str:
    """A DH column header such as ``alpha_{i-1}`` as MathML."""
    name, _, sub = header.partition("_")
    sub = sub.strip("{}")
    index = "<mi>i</mi>" if sub == "i" else "<mrow><mi>i</mi><mo>-</mo><mn>1</mn></mrow>"
    return f"<math><msub><mi>{_GREEK.get(name, name)}</mi>{index}</msub></math>"


def _dh_section(robot: Manipulator) -> str:
    extra = tables.topology(robot)  # names, parents (a tree), placements: plain text
    headers = [_header_math(h) for h in tables.dh_headers(robot)[2:]] + [html.escape(h) for h, _ in extra]
    rows = [
        [str(i + 1), link.joint]
        + [math(v) for v in (link.a, link.alpha, *(tables.joint_value(robot, i, key) for key in ("d", "theta")))]
        + [html.escape(values[i]) for _, values in extra]
        for i, link in enumerate(robot.links)
    ]
    head = "".join(f"<th>{h}</th>" for h in ["i", "joint", *headers])
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f"<h2 id='dh'>Denavit-Hartenberg parameters</h2>{table}"


def _vector_math(values: Any) -> str:
    """A 3-vector as (x, y, z)."""
    return math(sympy.Tuple(*values))


def _inertia_math(inertia: Any) -> str:
    """diag(Ixx, Iyy, Izz) for a diagonal tensor, else the matrix."""
    matrix = sympy.Matrix(inertia)
    if matrix.is_diagonal():
        return math(sympy.Function("diag")(*(matrix[k, k] for k in range(3))))
    return math(matrix)


def _inertia_section(robot: Manipulator) -> str:
    springs = any(link.has_spring for link in robot.links)  # (their columns only where a joint has one)
    rows = []
    for i, link in enumerate(robot.links):
        rows.append([str(i + 1), math(link.mass), _vector_math(link.com), _inertia_math(link.inertia),
                     math(link.damping), math(link.armature)]
                    + ([math(link.stiffness), math(link.springref)] if springs else []))
    if robot.payload is not None:
        p = robot.payload
        rows.append(["payload", math(p.mass), _vector_math(p.com), _inertia_math(p.inertia), "", ""]
                    + (["", ""] if springs else []))
    headers = ["link", "mass", "centre of mass", "inertia about the centre of mass", "damping", "armature"]
    headers += ["stiffness", "springref"] if springs else []
    note = f'<p class="note">{html.escape(tables.INERTIA_TEXT)}.</p>'
    return "<h2 id='inertia'>Inertial parameters</h2>" + _table(headers, rows, raw=True) + note


EQUATION = (
    '<math display="block" alttext="\\tau = M(q)\\ddot q + h(q,\\dot q) + G(q) + B\\dot q + J^T w">'
    "<mrow><mi>&#x03C4;</mi><mo>=</mo><mi>M</mi><mo>(</mo><mi>q</mi><mo>)</mo>"
    '<mover accent="false"><mi>q</mi><mo>&#x00A8;</mo></mover><mo>+</mo><mi>h</mi><mo>(</mo><mi>q</mi><mo>,</mo>'
    '<mover accent="false"><mi>q</mi><mo>&#x02D9;</mo></mover><mo>)</mo><mo>+</mo><mi>G</mi><mo>(</mo><mi>q</mi>'
    '<mo>)</mo><mo>+</mo><mi>B</mi><mover accent="false"><mi>q</mi><mo>&#x02D9;</mo></mover><mo>+</mo>'
    "<msup><mi>J</mi><mi>T</mi></msup><mi>w</mi></mrow></math>"
)


def _equations_section(eqs: Equations) -> str:
    n, wide = eqs.n, eqs.n >= 10
    start = time.perf_counter()
    M, h, G = _elements(eqs, "M"), _elements(eqs, "h"), _elements(eqs, "G")
    load = _elements(eqs, "load") if any(x != 0 for x in eqs.raw("load")) else None
    spring = _elements(eqs, "spring") if any(x != 0 for x in eqs.raw("spring")) else None
    seconds = eqs.total_seconds + time.perf_counter() - start  # the elements' expansion, done here if nested
    body = [
        f'<div class="eq">{EQUATION}</div>',
        "<h3>Inertia matrix M (M is symmetric)</h3>",
        f'<figure>{sparsity_svg(M, n)}<figcaption class="note">Pattern of M: dark entries are not zero, white '
        "entries are identically zero" + (", light ones were too large to expand here" if any(
            e.terms is None for e in M) else "") + f" ({sum(e.zero for e in M)} of the {len(M)} entries of the "
        "upper triangle are zero).</figcaption></figure>",
        _shown_elements("M", M, wide),
        "<h3>Coriolis and centrifugal torques h</h3>",
        _shown_elements("h", h, wide),
        "<h3>Gravity torques G</h3>",
        _shown_elements("G", G, wide),
    ]
    if load is not None:
        body += ["<h3>Tip-load torques</h3>", _shown_elements("L", load, wide)]
    if spring is not None:  # (added to the right-hand side above: tau also holds K (q - q_ref))
        body += ["<h3>Joint spring torques K (q - q_ref), also in tau</h3>", _shown_elements("S", spring, wide)]
    form = ("in canonical form (expanded, each sin of degree at most one)" if eqs.expanded else
            f"in {html.escape(eqs.form_note('robodyn derive --expand'))}. Each element below is expanded on its "
            f"own where that takes at most {ELEMENT_BUDGET:,} terms")
    head = [
        "<h2 id='equations'>Equations of motion</h2>",
        f"<p>Derived by {html.escape(eqs.method)} in {seconds:.3f} s (derivation and expansion), {form}. "
        "Floating-point numbers to four digits; float coefficients below 1e-12 of the largest of their part "
        f"dropped as rounding noise; elements of more than {DISPLAY_TERMS} terms are counted, not printed (see "
        "<code>robodyn derive</code>). M includes the armature; B = diag(damping); the last term is the tip "
        "load" + ("; the joint springs add K (q - q_ref), K = diag(stiffness)" if spring is not None else "") + ".</p>",
    ]
    return "\n".join(head + body)


def _forward_section(robot: Manipulator) -> str:
    if robot.nv > SYMBOLIC_MAX_JOINTS or any(c.closure is not None for c in robot.couplings):  # (four-bars: no
        return ""  # canonical form, robodyn.analysis.simulation.forward_dynamics_symbolic)
    fd = forward_dynamics_symbolic(robot)
    det_lhs = "<mi>&#x0394;</mi><mo>=</mo><mi>det</mi><mi>M</mi>"
    det_formula = math(fd.denominator, display=True, lhs=det_lhs, lhs_latex=r"\Delta = \det M")
    parts = [
        "<h2 id='forward'>Forward dynamics in closed form</h2>",
        "<p>qdd = adj(M) (tau - h - G - damping - load) / det M (ROBMAT sec. 4.4; the Macsyma appendix).</p>",
        f'<div class="eq">{det_formula}</div>'
        if count_terms(to_se(fd.denominator)) <= DISPLAY_TERMS
        else f'<div class="eq summary">det M: {count_terms(to_se(fd.denominator))} terms</div>',
    ]
    for i, (numerator, terms) in enumerate(zip(fd.numerator, fd.terms(), strict=True), start=1):
        lhs = f'<msub><mover accent="false"><mi>q</mi><mo>&#x00A8;</mo></mover><mn>{i}</mn></msub>'
        if terms <= DISPLAY_TERMS:
            quotient = sympy.Mul(numerator, sympy.Pow(sympy.Symbol("Delta"), -1), evaluate=False)
            formula = math(quotient, display=True, lhs=lhs, lhs_latex=rf"\ddot q_{{{i}}}")
            parts.append(f'<div class="eq">{formula}</div>')
        else:
            parts.append(f'<div class="eq summary">numerator of qdd_{i}: {terms} terms</div>')
    return "\n".join(parts)


def _counts_section(robot: Manipulator) -> str:
    label = "Kane's algorithm (Angeles, Ma and Rojas), inverse dynamics"
    if robot.has_placements:  # Angeles' HD notation cannot express a fixed placement before a joint
        rows = [[label, "-", "-", "not applicable (fixed placements): Angeles' HD notation cannot express them"]]
    elif robot.couplings:  # the algorithm runs on independent joints; a coupled robot's count is not yet offered
        rows = [[label, "-", "-", "not applicable (coupled joints)"]]
    else:
        kane = opcount.count_operations(robot)
        rows = [[label, str(kane.multiplications), str(kane.additions),
                 "this geometry's 0, 1, -1 folded; constants off line"]]
    for output, label in (("tau", "inverse dynamics tau"), ("M", "inertia matrix M"), ("forward", "forward dynamics")):
        summary = count_summary(robot, output)
        rows.append([f"cheapest straight-line program, {label}", str(summary["multiplications"]),
                     str(summary["additions"]), f"route: {summary['route']}; {summary['trig']} sin/cos; constants "
                     f"{summary['constants']['multiplications']} multiplications, "
                     f"{summary['constants']['additions']} additions, once"])
    table = _table(["algorithm", "multiplications", "additions", "notes"], rows)
    return "<h2 id='counts'>Operation counts</h2>" + table


#: Why the page's cross-check leaves EMDEG out of an arm whose expanded form is large.
EMDEG_LARGE_NOTE = ("left out here: it expands every element, and this arm's expanded form is large "
                    "(robodyn check -m newton-euler -m emdeg runs it)")


def _check_section(robot: Manipulator, eqs: Equations) -> str:
    """The cross-check of the formulations (:func:`robodyn.analysis.check.check`, :data:`CHECK_SAMPLES` states):
    exact for small exact arms, numeric otherwise; EMDEG, which expands every element, only where the expanded form
    is small (the default rule of :mod:`robodyn.equations`, as ``eqs`` took it), so that the page takes seconds on
    any arm."""
    if robot.n > MAX_CHECK_LINKS:  # every method's derivation grows too quickly past this (robodyn.analysis.check)
        return (f"<h2 id='check'>Cross-check of the formulations</h2><p class=\"note\">Not run: {robot.n} links, "
                f"and the cross-check of every method is limited to {MAX_CHECK_LINKS}.</p>")
    methods, left_out = [], {}
    for name in AVAILABLE:
        reason = not_applicable(robot, name) or (EMDEG_LARGE_NOTE if name == "emdeg" and not eqs.expanded else None)
        if reason is None:
            methods.append(name)
        else:
            left_out[name] = reason
    result = check(robot, methods, samples=CHECK_SAMPLES)
    result.skipped.update(left_out)
    rows = []
    for c in result.comparisons:
        diff = "0 (identical)" if c.mode == "exact" and c.agree else f"{c.max_relative_difference:.3g}"
        verdict = '<span class="ok">yes</span>' if c.agree else '<span class="bad">NO</span>'
        rows.append([html.escape(c.method), html.escape(c.part), c.mode, diff, verdict])
    times = ", ".join(f"{m} {s:.3f} s" for m, s in result.seconds.items())
    skipped = "".join(f'<p class="note">{html.escape(m)}: {html.escape(reason)}; not compared.</p>'
                      for m, reason in result.skipped.items())
    verdict = '<p class="ok">All methods agree.</p>' if result.agree else '<p class="bad">Methods disagree.</p>'
    return (f"<h2 id='check'>Cross-check of the formulations against {html.escape(result.reference)}</h2>"
            + _table(["method", "part", "mode", "max relative difference", "agree"], rows, raw=True)
            + f'<p class="note">{CHECK_MODES} Derivation times: {html.escape(times)}.</p>' + skipped + verdict)


#: What the two modes of the cross-check do (printed under its table).
CHECK_MODES = ("Exact: the difference of the two parts brought to canonical form is identically zero; numeric: "
               f"both evaluated at {CHECK_SAMPLES} random states (and parameter values), relative tolerance 1e-10.")


def _swing_start(robot: Manipulator) -> np.ndarray:
    return np.array([0.4 if robot.links[j].revolute else 0.0 for j in robot.independent])  # independent q


_TRAJECTORY_NOTES = {
    "angeles1": "The motion law of Angeles, Ma and Rojas' example 1 (their sec. 7.1), applied to this arm: "
    "q_i(t) = q_i(0) + A_i (t - sin(Bt)/B), B = 2 pi/10, over 10 s (A_i = pi/30 rad for a revolute joint, "
    "-pi/60 for joint 2 from q_2(0) = pi/2; 0.01 m for a prismatic one).",
    "angeles2": "Angeles, Ma and Rojas' example 2: the tool moves 0.5 m along y on a straight line "
    "with fixed orientation in 1 s (quintic time law), joint motion by inverse kinematics.",
}


def _plots_section(robot: Manipulator, params: Mapping[str, float] | None) -> str:
    bound = bind_parameters(robot, params) or {}
    missing = [s.name for s in robot.parameters() if s.name not in bound]
    head = "<h2 id='plots'>Plots</h2>"
    if missing:
        return head + (f'<p class="note">Plots need numbers for {html.escape(", ".join(missing))}: pass them with '
                       "<code>--param NAME=VALUE</code>.</p>")
    q0 = _swing_start(robot)
    result = simulate(robot, SWING_SECONDS, q0, params=bound, method="DOP853", rtol=1e-10, atol=1e-10, samples=301)
    swing = png_base64(result.plot())
    name = "angeles2" if robot.name == "industrial_6r" else "angeles1"
    history = torque_history(robot, name, bound, samples=101)
    torques = png_base64(history.figure())
    start = ", ".join(f"{x:g}" for x in q0)
    return (
        head
        + f"<h3>Free swing from q = ({start}), no torques</h3>"
        + f'<img alt="free swing: joint motion and energy" src="data:image/png;base64,{swing}">'
        + f'<p class="note">{SWING_SECONDS:g} s with DOP853 (rtol = atol = 1e-10); relative energy drift '
        f"{result.energy_drift():.2g}.</p>"
        + f"<h3>Joint torques along the trajectory {name}</h3>"
        + f"<p class='note'>{html.escape(_TRAJECTORY_NOTES[name])}</p>"
        + f'<img alt="joint torques along {name}" src="data:image/png;base64,{torques}">'
    )


# -- the page ----------------------------------------------------------------------------------------


def build(
    robot: Manipulator,
    *,
    params: Params | None = None,
    method: str = "newton-euler",
    cross_check: bool = True,
    plots: bool = True,
    progress: Progress | None = None,
) -> str:
    """The HTML page (a string): tables, equations (MathML), operation counts, cross-check, plots.

    ``params`` binds symbolic parameters for the plots (g defaults to 9.81); without all of them the plots
    section says which are missing. ``cross_check``/``plots`` switch those sections off.
    """
    step = progress or (lambda _: None)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's warnings were given when it was loaded
        step("equations")
        eqs = derive(robot, method)
        sections = [_header(robot), _nav(cross_check, plots, robot.nv), _dh_section(robot), _inertia_section(robot),
                    _equations_section(eqs), _forward_section(robot)]
        step("operation counts")
        sections.append(_counts_section(robot))
        if cross_check:
            step("cross-check")
            sections.append(_check_section(robot, eqs))
        if plots:
            step("plots")
            sections.append(_plots_section(robot, {str(k): float(v) for k, v in (params or {}).items()}))
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    footer = (f'<p class="note">Written by robodyn on {stamp} in {time.perf_counter() - start:.1f} s. '
              "Formulas are MathML; their LaTeX source is in each formula's alttext.</p>")
    body = "\n".join(s for s in sections if s)
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f"<title>robodyn report: {html.escape(robot.name)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body>\n{body}\n{footer}\n</body>\n</html>\n"
    )


def _nav(cross_check: bool, plots: bool, n: int) -> str:
    links = [("dh", "DH table"), ("inertia", "inertia"), ("equations", "equations")]
    if n <= 3:
        links.append(("forward", "forward dynamics"))
    links.append(("counts", "operation counts"))
    if cross_check:
        links.append(("check", "cross-check"))
    if plots:
        links.append(("plots", "plots"))
    return "<nav>" + "".join(f"<a href='#{key}'>{label}</a>" for key, label in links) + "</nav>"


def write(robot: Manipulator, path: str | Path, **options: Any) -> Path:
    """:func:`build` the page and write it atomically to ``path``."""
    return atomic_write(Path(path), build(robot, **options))
