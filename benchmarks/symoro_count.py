"""Operation counts of OpenSYMORO's Staubli RX-90 inverse dynamic model, as written and at the zeros of the base
parameters, beside robodyn's base-parameter program of the same arm (issue 33, item 3; docs/guide/programs.md). An
estimate of what SYMORO's customised Newton-Euler costs in the base parameters: OpenSYMORO is not run here, its
stored model in the standard parameters is read and the grouped-away parameters set to zero in it.

    python benchmarks/symoro_count.py RX90_idm.txt     # OpenSYMORO's robots/RX90/RX90_idm.txt (github symoro/symoro)

SYMORO writes the customised Newton-Euler model (Khalil and Kleinfinger) in the standard parameters, one assignment a
line after ``Equations:``. The base parameters keep, of link j's XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M and IA, those
that robodyn's :func:`robodyn.identification.base_parameters` of the same arm (``benchmarks.opcount.rx90``, every
inertial parameter a symbol) keeps under the same stem (XXR2 = XX2 - YY2 keeps XX2, ...); the others, and the
external wrench on the last link, are set to zero. The script folds, drops what no torque needs, and counts as
robodyn counts (a product of k factors k - 1 multiplications, a square one, a sum of k terms k - 1 additions, sines
and cosines apart; the Coulomb terms FS_j sign(qd_j) apart, robodyn's RX-90 having none). The stored RX-90 model
has no gravity term (its linear accelerations start from zero), which robodyn's carries.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import sympy

import robodyn as rd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # (benchmarks.opcount: run as a script, the repository root is not on the path)
from benchmarks.opcount import rx90  # noqa: E402 - the repository root is on the path now


def statements(path: Path) -> list[tuple[sympy.Symbol, sympy.Expr]]:
    """The assignments after ``Equations:`` (up to the next blank-or-marker line)."""
    text = path.read_text(encoding="utf-8")
    if "Equations:" not in text:
        raise SystemExit(f"{path}: no 'Equations:' section (a SYMORO *_idm.txt file?)")
    out = []
    sign = sympy.Function("sign")
    for line in text.split("Equations:", 1)[1].splitlines():
        if " = " not in line:
            if out and line.strip().startswith("*"):
                break
            continue
        lhs, rhs = (x.strip() for x in line.split(" = ", 1))
        out.append((sympy.Symbol(lhs), sympy.sympify(rhs, locals={"sign": sign})))
    return out


def zeros(n: int) -> dict[str, int]:
    """The standard parameters that the base parameters of :func:`benchmarks.opcount.rx90` group away, and the
    external wrench on link n (module docstring)."""
    kept = set()
    for name in rd.identification.base_parameters(rx90()).names:
        found = re.fullmatch(r"([A-Z]{1,2})R?(\d+)", name)
        if found:
            kept.add(f"{found.group(1)}{found.group(2)}")
    stems = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA")
    names = [f"{p}{j}" for j in range(1, n + 1) for p in stems if f"{p}{j}" not in kept]
    return {name: 0 for name in names + [f"{p}{n}" for p in ("FX", "FY", "FZ", "CX", "CY", "CZ")]}


def live(assignments: list[tuple[sympy.Symbol, sympy.Expr]], outputs: str) -> list[tuple[sympy.Symbol, sympy.Expr]]:
    """The assignments the outputs (those named ``outputs``, e.g. GAM) need, after aliases and zeros are folded."""
    folded: dict[sympy.Symbol, sympy.Expr] = {}
    kept = []
    for lhs, rhs in assignments:
        rhs = rhs.xreplace(folded)
        if rhs.is_Number or rhs.is_Symbol or (-rhs).is_Symbol:
            folded[lhs] = rhs
        else:
            kept.append((lhs, rhs))
    needed = {lhs for lhs, _ in kept if str(lhs).startswith(outputs)}
    out = []
    for lhs, rhs in reversed(kept):
        if lhs in needed:
            out.append((lhs, rhs))
            needed |= rhs.free_symbols
    return out[::-1]


def count(expr: sympy.Expr) -> tuple[int, int, int]:
    """(multiplications, additions, Coulomb multiplications) of one right-hand side."""
    m = a = coulomb = 0
    if expr.is_Add:
        a += len(expr.args) - 1
    elif expr.is_Mul:
        factors = [x for x in expr.args if not (x.is_Number and abs(x) == 1)]
        m += len(factors) - 1
        coulomb += any(getattr(x, "func", None) is not None and str(x.func) == "sign" for x in factors)
    elif expr.is_Pow:
        m += int(expr.args[1]) - 1
    for x in expr.args:
        dm, da, dc = count(x)
        m, a, coulomb = m + dm, a + da, coulomb + dc
    return m, a, coulomb


def totals(assignments: list[tuple[sympy.Symbol, sympy.Expr]]) -> dict[str, int]:
    m = a = coulomb = trig = 0
    for _, rhs in assignments:
        if rhs.func in (sympy.sin, sympy.cos):
            trig += 1
            continue
        dm, da, dc = count(rhs)
        m, a, coulomb = m + dm, a + da, coulomb + dc
    return {"multiplications": m, "additions": a, "coulomb_multiplications": coulomb, "sin_cos": trig}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="OpenSYMORO's robots/RX90/RX90_idm.txt")
    parser.add_argument("--joints", type=int, default=6, help="the number of joints (default 6)")
    args = parser.parse_args(argv)
    assignments = statements(args.path)
    fold = {sympy.Symbol(k): v for k, v in zeros(args.joints).items()}
    for label, model in (("SYMORO, as written", assignments),
                         ("SYMORO, base parameters", [(lhs, rhs.xreplace(fold)) for lhs, rhs in assignments])):
        t = totals(live(model, "GAM"))
        c = t["coulomb_multiplications"]  # (each Coulomb term: one multiplication, one addition)
        print(f"{label}: {t['multiplications']} m + {t['additions']} a; without its {c} Coulomb terms "
              f"{t['multiplications'] - c} m + {t['additions'] - c} a")
    for label, arm in (("gravity and viscous friction included", rx90()),
                       ("viscous friction, no gravity", rx90().replace(gravity=[0, 0, 0]))):
        counted = rd.program.build(arm, ("tau",), base=rd.identification.base_parameters(arm)).count()["evaluation"]
        print(f"robodyn, base parameters ({label}): {counted.multiplications} m + {counted.additions} a")
    return 0


if __name__ == "__main__":
    sys.exit(main())
