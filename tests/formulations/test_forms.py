"""Every form reassembles to the same tau; the outputs are parseable and complete."""

from __future__ import annotations

import json

import pytest
import sympy
from sympy.parsing.sympy_parser import parse_expr

import robodyn as rd
from tests.conftest import random_robot
from tests.helpers import equivalent

SMALL = ["double_pendulum", "two_link_fu", "two_link_payload", "stanford_modified"]


def arm_with_everything():
    """stanford_modified plus damping, armature and a symbolic tip load."""
    robot = rd.load("stanford_modified")
    links = tuple(link.replace(damping=f"b{i + 1}", armature=f"Jm{i + 1}") for i, link in enumerate(robot.links))
    return robot.replace(links=links, tip_force=("fx", "fy", "fz"), tip_moment=("nx", "ny", "nz"))


@pytest.mark.parametrize("name", SMALL)
@pytest.mark.parametrize("method", ["ne", "le"])
def test_parts_sum_to_tau(name, method):
    eqs = rd.derive(rd.load(name), method)
    qdd = sympy.Matrix(eqs.symbols.qdd)
    assert equivalent(eqs.M * qdd + eqs.h + eqs.G + eqs.damping + eqs.load, eqs.tau, eqs.n)


@pytest.mark.parametrize("method", ["ne", "le"])
def test_all_forms_reassemble(method):
    robot = arm_with_everything()
    eqs = rd.derive(robot, method)
    n = eqs.n
    qd, qdd = sympy.Matrix(eqs.symbols.qd), sympy.Matrix(eqs.symbols.qdd)
    extra = eqs.damping + eqs.load
    assert equivalent(eqs.M * qdd + eqs.h + eqs.G + extra, eqs.tau, n)
    assert equivalent(eqs.config_space().force(qdd) + extra, eqs.tau, n)
    fu = eqs.fu_form()
    assert equivalent(fu.D * qdd + fu.h(qd) + fu.c + extra, eqs.tau, n)
    gamma = eqs.christoffel()
    h = sympy.Matrix([sum(gamma[i, j, k] * qd[j] * qd[k] for j in range(n) for k in range(n)) for i in range(n)])
    assert equivalent(h, eqs.h, n)
    em = eqs.emdeg_form()
    c = sympy.Matrix([sum(em.c[i + 1, j + 1] * qd[j] ** 2 for j in range(n)) for i in range(n)])
    b = sympy.Matrix([sum(em.b[i + 1, j + 1, k + 1] * qd[j] * qd[k] for j in range(n) for k in range(j + 1, n))
                      for i in range(n)])
    assert equivalent(em.M * qdd + c + b + em.g + extra, eqs.tau, n)
    # Burdick's structure: c_iii = 0 (eq. 26-29)
    assert all(em.c[i, i] == 0 for i in range(1, n + 1))
    # damping and armature are where the model says
    assert eqs.damping == sympy.Matrix([sympy.Symbol(f"b{i}") * qd[i - 1] for i in range(1, n + 1)])
    assert equivalent(eqs.M - rd.derive(rd.load("stanford_modified"), method).M,
                      sympy.diag(*[sympy.Symbol(f"Jm{i}") for i in range(1, n + 1)]), n)


def test_tip_load_methods_agree_and_are_nonzero():
    robot = arm_with_everything()
    ne, le = rd.derive(robot, "ne"), rd.derive(robot, "le")
    assert any(x != 0 for x in ne.load)
    assert equivalent(ne.load, le.load, robot.n)


@pytest.mark.parametrize("form", ["tau", "config-space", "fu", "christoffel", "emdeg"])
def test_to_dict_is_json_and_parseable(form):
    eqs = rd.derive(rd.load("double_pendulum"))
    data = json.loads(json.dumps(eqs.to_dict(form)))
    assert data["method"] == "newton-euler" and data["q"] == ["q1", "q2"]
    for key in ("tau", "M", "h", "G"):
        assert key in data
    tau = sympy.Matrix([parse_expr(x) for x in data["tau"]])
    assert equivalent(tau, eqs.tau, 2)
    if form == "config-space":
        B = sympy.Matrix([parse_expr(x) for x in data["B"]])
        assert equivalent(B, eqs.config_space().B, 2)
        C = sympy.Matrix([[parse_expr(x) for x in row] for row in data["C"]])
        assert equivalent(C, eqs.config_space().C, 2)
        # ROBMAT's squared rates are shown as qd_sq, never as q2, the second joint's symbol
        assert "q2" not in data and [parse_expr(x) for x in data["qd_sq"]] == list(eqs.config_space().q2)
        assert "q2[1]" not in eqs.to_text("config-space") and "qd_sq[1] = qd1**2" in eqs.to_text("config-space")


def test_latex_and_text():
    eqs = rd.derive(rd.load("double_pendulum"))
    latex = eqs.to_latex("config-space")
    assert latex.startswith("\\tau = ") and "\\sin" in latex and "B = " in latex
    text = eqs.to_text()
    assert "M[1,2] = L2*m2*(L1*cos(q2) + L2)" in text
    assert "sin(q1 + q2)" in text  # angle sums recombined for people


def test_random_arm_forms_numerically():
    """Config-space reassembly on a random 3-joint arm with every extra (numeric data)."""
    robot = random_robot(7, 3, "modified")
    eqs = rd.derive(robot)
    qdd = sympy.Matrix(eqs.symbols.qdd)
    values = {s: 0.3 * (k + 1) for k, s in enumerate(eqs.symbols.all())}
    lhs = (eqs.config_space().force(qdd) + eqs.damping + eqs.load).subs(values).evalf()
    rhs = eqs.tau.subs(values).evalf()
    assert float(max(abs(x) for x in lhs - rhs)) < 1e-9 * float(max(abs(x) for x in rhs))
