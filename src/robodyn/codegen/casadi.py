"""CasADi: a robot's straight-line program as a `CasADi <https://web.casadi.org>`_ function.

    from robodyn.codegen.casadi import to_casadi
    f = to_casadi(rd.load("double_pendulum"), ("forward",))   # casadi.Function: (q, qd, tau, params) -> qdd

:func:`to_casadi` writes the program of :func:`robodyn.program.build` (the cheapest one robodyn finds, common
subexpressions shared) statement by statement as CasADi SX expressions: the function has the program's
operations, not those of the expanded equations (for the PUMA's tau, some 300 against tens of thousands by a
lambdify of the expanded torques). CasADi is imported only when it is called (``pip install 'robodyn[casadi]'``).
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Sequence
from typing import Any

import symengine as se

from robodyn.codegen.spec import product_power
from robodyn.model.manipulator import Manipulator
from robodyn.program import build
from robodyn.program.outputs import is_frame_output, split_frame_output


def _casadi() -> Any:
    try:
        import casadi
    except ImportError:  # pragma: no cover - exercised only without casadi
        raise ImportError("robodyn.codegen.casadi.to_casadi needs CasADi: pip install 'robodyn[casadi]'") from None
    return casadi


#: The order of a CasADi function's inputs (those the outputs use).
CASADI_INPUTS = ("q", "qd", "qdd", "tau", "parameters")
#: The rows of a floating base's matrix outputs (:data:`~robodyn.program.outputs.CENTROIDAL_OUTPUTS`), each k x nv;
#: the other outputs are nv x nv (``M``, the derivatives) or a column; a named frame's pose is 4 x 4, its Jacobians
#: and their time derivatives 6 x nv.
ROWS = {"com_jacobian": 3, "centroidal_map": 6}


def _rows(output: str, entries: int, n: int) -> int:
    """The rows of ``output``'s matrix (0: a column)."""
    if is_frame_output(output):
        return 4 if split_frame_output(output)[0] == "pose" else 6
    return ROWS.get(output, n if entries == n * n else 0)


def _identifier(name: str) -> str:
    """``name`` as CasADi takes a function's or an output's name (``jacobian:FL_FOOT`` -> ``jacobian_FL_FOOT``)."""
    return re.sub(r"\W", "_", name)


def to_casadi(robot: Manipulator, outputs: Sequence[str] = ("tau",), *, name: str | None = None) -> Any:
    """A ``casadi.Function`` computing ``outputs`` (names of :data:`robodyn.program.OUTPUTS` but ``elements``:
    ``tau``, ``M``, ``h``, ``G``, ``bias``, ``forward``, ``dtau_dq``, ...; for a floating base also ``com``,
    ``com_jacobian``, ``centroidal_map``, ``centroidal_bias``) of ``robot``, built from its program (see the module
    docstring). Inputs, in :data:`CASADI_INPUTS` order, those the outputs need: ``q``, ``qd``, ``qdd``, ``tau``
    (n x 1 each; a floating base's q nq x 1: the base's position, its unit quaternion (x, y, z, w), the joints',
    and the others nv x 1) and ``parameters`` (the robot's symbols in :meth:`~robodyn.Manipulator.parameters`
    order; absent for a numeric robot). Outputs: n x 1, or n x n for ``M`` and the derivatives ([i, j] = d out_i /
    d in_j, a floating base's in its tangent space, as Pinocchio's), 3 x 1 ``com``, 3 x n ``com_jacobian``, 6 x n
    ``centroidal_map`` and 6 x 1 ``centroidal_bias`` (n = nv), a named frame's ``pose:F`` 4 x 4 and ``jacobian:F``
    (and the other references, their ``_dot``) 6 x n; named as asked (``tau_out`` where ``tau`` is also an input,
    ``jacobian_F`` for ``jacobian:F``)."""
    ca = _casadi()
    if "elements" in outputs:
        raise ValueError("to_casadi gives the dynamics and their derivatives; 'elements' is EMDEG's listing")
    program = build(robot, tuple(outputs))
    n = robot.nv  # the independent coordinates (robot.n without couplings)
    symbols = {key: ca.SX.sym(key, len(program.inputs[key])) for key in CASADI_INPUTS
               if program.inputs.get(key)}
    env: dict[Any, Any] = {}
    for key, column in symbols.items():
        env.update({s: column[i] for i, s in enumerate(program.inputs[key])})
    for a in [*program.constants, *program.body]:
        env[se.Symbol(a.name)] = _to_sx(ca, a.expr, env)
    results = []
    for output in outputs:
        entries = [_to_sx(ca, x, env) for x in program.outputs[output]]
        k = _rows(output, len(entries), n)
        c = len(entries) // k if k else 1  # (the columns: nv, or a pose's 4)
        rows = [entries[i * c : (i + 1) * c] for i in range(k)] if k else [[e] for e in entries]
        results.append(ca.vertcat(*[ca.horzcat(*row) for row in rows]))
    used = [key for key in CASADI_INPUTS if key in symbols and any(
        ca.depends_on(r, symbols[key]) for r in results)]
    names = [f"{o}_out" if o in used else _identifier(o) for o in outputs]  # CasADi names inputs, outputs apart
    return ca.Function(name or _identifier(f"{robot.name}_{'_'.join(outputs)}"), [symbols[key] for key in used],
                       results, used, names)


def _to_sx(ca: Any, expr: Any, env: dict[Any, Any]) -> Any:
    """A symengine expression of the program as a CasADi SX expression, over ``env`` (symbol -> SX)."""
    if expr.is_Symbol:
        return env[expr]
    if expr.is_Number:
        return float(expr)
    args = [_to_sx(ca, a, env) for a in expr.args]
    if isinstance(expr, se.Add):
        return functools.reduce(operator.add, args)
    if isinstance(expr, se.Mul):
        return functools.reduce(operator.mul, args)
    if isinstance(expr, se.Pow):
        base, exponent = args
        k = product_power(*expr.args)  # x*x*x, as the generated code writes it
        if k:
            product = functools.reduce(operator.mul, [base] * abs(k))
            return product if k > 0 else 1 / product
        return base**exponent
    function = {"sin": ca.sin, "cos": ca.cos, "sqrt": ca.sqrt, "sign": ca.sign, "atan2": ca.atan2
                }.get(type(expr).__name__)
    if function is None:
        raise ValueError(f"cannot write {type(expr).__name__}() as CasADi")
    return function(*args)
