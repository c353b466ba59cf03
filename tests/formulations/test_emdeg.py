"""EMDEG's method (seed 001): exact agreement, each structure rule on random arms, the elements
program against the Christoffel symbols, and the operation count against Burdick's."""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn.algebra import canonical, cross, dot
from robodyn.formulations import derive, emdeg
from robodyn.program import build
from robodyn.program.opcount import general_arm
from robodyn.symbols import joint_symbols
from tests.conftest import load_quiet, random_params, random_robot


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_payload", "stanford_modified", "puma560_symbolic"])
def test_emdeg_equals_newton_euler_exactly(name):
    robot = load_quiet(name)
    a, b = derive(robot, "emdeg"), derive(robot, "newton-euler")
    q = a.symbols.q
    for part in ("M", "h", "G", "load", "tau"):
        for x, y in zip(a.canonical(part), b.canonical(part), strict=True):
            assert canonical(x - y, q) == 0, part


def _christoffel(robot):
    eqs = derive(robot, "newton-euler")
    M = eqs.canonical("M")
    q = [se.Symbol(s.name) for s in eqs.symbols.q]
    n = robot.n
    dM = [[[M[i, j].diff(q[k]) for k in range(n)] for j in range(n)] for i in range(n)]
    return q, dM


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 4), convention=st.sampled_from(["standard", "modified"]))
def test_structure_rules_on_random_arms(seed, n, convention):
    """Eq. 26 (zero derivatives) and 27-29 (c and b from the derivatives of M, with the relations
    between elements) on random R/P arms; numbers compared after canonical expansion."""
    robot = random_robot(seed, n, convention)
    q, dM = _christoffel(robot)
    for i in range(n):
        for j in range(n):
            for k in range(min(i, j) + 1):
                assert _small(canonical(dM[i][j][k], q))  # eq. 26
    el = emdeg.elements(robot, q)

    def close(x, y):
        return _small(canonical(se.expand(x - y), q))

    for i in range(n):
        for j in range(n):
            gamma_ijj = dM[i][j][j] - dM[j][j][i] / 2
            assert close(el.element(f"c{i + 1}{j + 1}{j + 1}"), gamma_ijj)  # eq. 27
            for k in range(j + 1, n):
                b = dM[i][j][k] + dM[i][k][j] - dM[j][k][i]
                assert close(el.element(f"b{i + 1}{j + 1}{k + 1}"), b)  # eq. 28, 29


def _small(expr, samples=5):
    """Zero, or numerically zero at random angles (floating-point models leave rounding residues)."""
    if expr == 0:
        return True
    symbols = sorted(expr.free_symbols, key=str)
    if not symbols:
        return abs(float(expr)) < 1e-9
    rng = np.random.default_rng(0)
    f = se.Lambdify(symbols, [expr])
    return all(abs(float(f(rng.uniform(-2, 2, len(symbols)))[0])) < 1e-9 for _ in range(samples))


def test_parallel_joints_rule_34():
    """b_{i,p,k} = b_{i,p+1,k} for successive parallel revolute joints p, p+1 (PUMA's 2 and 3, i < p)."""
    robot = load_quiet("puma560_symbolic")
    q = joint_symbols(6).symengine()[0]
    el = emdeg.elements(robot, q)
    for k in range(4, 7):
        x, y = el.element(f"b12{k}"), el.element(f"b13{k}")
        assert canonical(x - y, q) == 0


def test_elements_program_is_the_christoffel_form():
    robot = load_quiet("puma560_symbolic")
    program = build(robot, ("elements",))
    assert program.route == "emdeg"
    eqs = derive(robot, "newton-euler")
    form = eqs.emdeg_form()
    rng = np.random.default_rng(5)
    values = {s.name: float(rng.uniform(0.5, 2)) for s in robot.parameters()}
    values.update({f"q{i + 1}": float(rng.uniform(-2, 2)) for i in range(6)})
    got = program.evaluate(values)
    sym = {sympy.Symbol(k): v for k, v in values.items()}
    for name, xs in got.items():
        expected = float(sympy.sympify(_form_element(form, name)).xreplace(sym))
        assert abs(xs[0] - expected) <= 1e-10 * max(1.0, abs(expected)), name


def _form_element(form, name):
    """An element of :meth:`Equations.emdeg_form` by Burdick's name (M12, c211, b123, g2)."""
    kind, ix = name[0], tuple(int(c) for c in name[1:])
    if kind == "M":
        return form.M[ix[0] - 1, ix[1] - 1]
    if kind == "c":
        return form.c[ix[:2]]
    if kind == "b":
        return form.b[ix]
    return form.g[ix[0] - 1]


def test_elements_count_beats_emdeg():
    """Burdick: 291 multiplications and 131 additions for all distinct M, c, b, g of the PUMA."""
    c = build(load_quiet("puma560_symbolic"), ("elements",)).count()["evaluation"]
    assert c.multiplications <= 291 and c.additions <= 131


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_parallel_joints_rule_34_on_random_arms(seed):
    """Eq. 34 on random 4-joint arms whose joints 2 and 3 are parallel revolute joints."""
    robot = random_robot(seed, 4, "modified", right_angled=True)
    links = list(robot.links)
    links[1] = links[1].replace(joint="R")
    links[2] = links[2].replace(joint="R", alpha=0)
    robot = robot.replace(links=tuple(links))
    q = joint_symbols(4).symengine()[0]
    el = emdeg.elements(robot, q)
    assert _small(canonical(el.element("b124") - el.element("b134"), q))


# -- the elements program reassembled into tau ------------------------------------------------
def _element_values(program, values):
    """Every element M_ij, c_ijj, b_ijk, g_i from the program's outputs and its references."""
    got = {name: float(xs[0]) for name, xs in program.evaluate(values).items()}

    def element(name):
        if name not in got:
            reference = program.references[name]
            if reference == "0":
                return 0.0
            factor, other = reference.split(" * ")
            got[name] = float(sympy.Rational(factor)) * element(other)
        return got[name]

    return element


def _tau_agrees(program, robot, seed):
    """tau_i = sum_j M_ij qdd_j + sum_j c_ijj qd_j^2 + sum_{j<k} b_ijk qd_j qd_k + g_i (eq. 12-13) from the
    elements and references, against robodyn.numeric's inverse dynamics of the arm without damping and
    tip load (which are not Burdick's), at two random states."""
    from robodyn import numeric

    n = robot.n
    bare = robot.replace(links=tuple(link.replace(damping=0) for link in robot.links),
                         tip_force=(0, 0, 0), tip_moment=(0, 0, 0))
    rng = np.random.default_rng(seed)
    params = random_params(robot, rng)
    for _ in range(2):
        q, qd, qdd = (rng.uniform(-2, 2, n) for _ in range(3))
        element = _element_values(program, {**params, **{f"q{i + 1}": float(q[i]) for i in range(n)}})
        tau = np.array([
            sum(element(f"M{min(i, j) + 1}{max(i, j) + 1}") * qdd[j] + element(f"c{i + 1}{j + 1}{j + 1}") * qd[j] ** 2
                for j in range(n))
            + sum(element(f"b{i + 1}{j + 1}{k + 1}") * qd[j] * qd[k] for j in range(n) for k in range(j + 1, n))
            + element(f"g{i + 1}")
            for i in range(n)
        ])
        ref = numeric.inverse_dynamics(bare, q, qd, qdd, **({"params": params} if params else {}))
        assert np.max(np.abs(tau - ref)) / max(np.max(np.abs(ref)), 1e-300) < 1e-12, (robot.name, program.route)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 4), convention=st.sampled_from(["standard", "modified"]),
       offsets=st.booleans())
def test_elements_program_on_right_angled_arms(seed, n, convention, offsets):
    """The elements program (factored; unfactored for 4 joints with offsets of general angle) on random
    right-angled arms gives, with its references, the inverse dynamics."""
    robot = random_robot(seed, n, convention, right_angled=True)
    if not offsets:
        robot = robot.replace(links=tuple(link.replace(theta=0) for link in robot.links))
    program = build(robot, ("elements",))
    if n <= 3 or not offsets:
        assert program.route == "emdeg"
    assert program.references  # c_iii = 0, b_iik = -2 c_kii, ... (eq. 27-28) are kept, not computed
    _tau_agrees(program, robot, seed)


@pytest.mark.parametrize("robot", [random_robot(2, 5, "standard"), general_arm("RRPR")], ids=["random5", "general4"])
def test_elements_of_general_angles_are_not_expanded(robot, monkeypatch):
    """A 5-joint arm with twists of general angle (once 13,520 multiplications after six minutes of
    factoring) and a 4-joint arm with every parameter a symbol: the elements are built from the unexpanded
    trees (no canonical form is made), the references are kept, and they are the dynamics."""
    def expanded(*args, **kwargs):
        raise AssertionError("a canonical form was computed")

    monkeypatch.setattr(emdeg, "canonical", expanded)
    program = build(robot, ("elements",))
    assert program.route == "emdeg (unfactored: general angles)"
    assert program.references["c111"] == "0" and program.references["b112"] == "-2 * c211"
    if robot.parameters():
        assert program.constants  # parameter-only operations are computed once
    _tau_agrees(program, robot, seed=1)


# -- the rules for successive parallel revolute joints (eq. 24, 25, 35) ---------------------------
def _exact(x):
    """A float as a short exact rational (so that an identity checks to an exact zero)."""
    x = sympy.sympify(x)
    return x.xreplace({f: sympy.Rational(round(float(f) * 1000), 1000) for f in x.atoms(sympy.Float)})


def _parallel_arm(seed, p):
    """A random 5-joint arm in modified DH, right-angled, every number an exact rational, whose joints p and
    p + 1 (0-based) are parallel revolute joints (alpha_p = 0) and joint p + 2 revolute."""
    robot = random_robot(seed, 5, "modified", right_angled=True)
    links = list(robot.links)
    for k in (p, p + 1, p + 2):
        links[k] = links[k].replace(joint="R")
    links[p + 1] = links[p + 1].replace(alpha=0)
    fields = ("a", "d", "theta", "mass", "armature", "damping")
    links = [link.replace(**{f: _exact(getattr(link, f)) for f in fields}, com=tuple(map(_exact, link.com)),
                          inertia=link.inertia.applyfunc(_exact)) for link in links]
    payload = robot.payload and robot.payload.__class__(
        mass=_exact(robot.payload.mass), com=tuple(map(_exact, robot.payload.com)),
        inertia=robot.payload.inertia.applyfunc(_exact))
    return robot.replace(links=tuple(links), gravity=tuple(map(_exact, robot.gravity)), payload=payload)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), p=st.integers(0, 2))
def test_parallel_joints_rules_24_25_35(seed, p):
    """Burdick's rules for parallel revolute joints p, p+1, with eta_ij = -jz_i . jP^_i . U^_j . z (jz_i the
    axis of joint i and jP_i the vector P_i, both in frame j), K_pp, U_j and the rest from
    :mod:`robodyn.formulations.emdeg` (his eq. 19-20), checked exactly (canonical difference 0). His M_ij
    has no armature: ours has it on the diagonal, so it is taken off here.

    The seed is an OCR of the paper, and two of its lines are wrong as printed (an exact check decides):
    eq. 25's second line, M_pp = M_{p+1,p+1} + z.K_pp.z + eta_{p+1,p+1}, holds with M_{p,p+1} in the place of
    M_{p+1,p+1} (it is the first line with eq. 24 put in); and eq. 35, c_pii = c_{p+1,ii} - z.(iR_p z^ P_{p+1})^
    .U^_i.z, holds with the opposite sign, + (for i > p + 1, i revolute, as derived from eq. 25's
    M_pi = M_{p+1,i} + eta_{p+1,i}: its derivative in q_i; for i < p it holds in neither sign)."""
    robot = _parallel_arm(seed, p)
    n = robot.n
    q = joint_symbols(n).symengine()[0]
    chain = emdeg.links(robot, q)
    comp = emdeg.composite(chain)
    el = emdeg.elements(robot, q)

    def M(i, j):  # Burdick's M_ij (no armature), 0-based
        i, j = min(i, j), max(i, j)
        return el.element(f"M{i + 1}{j + 1}") - (chain[i].armature if i == j else 0)

    def c(i, j):
        return el.element(f"c{i + 1}{j + 1}{j + 1}")

    def eta(i, j):
        R, _ = emdeg._relative(chain, i, j)  # iR_j
        R_before, _ = emdeg._relative(chain, i - 1, j)  # (i-1)R_j: P_i is given in frame i - 1
        z_i, P_i = R.T * emdeg.Z, R_before.T * chain[i].P
        return -dot(z_i, emdeg.hat(P_i) * emdeg.hat(comp.U[j]) * emdeg.Z)

    def zero(expr):
        return canonical(expr, q) == 0

    Z, hat = emdeg.Z, emdeg.hat
    P = chain[p + 1].P  # P_{p+1}, in frame p
    K = chain[p].inertia - hat(P) * hat(P) * comp.mass[p + 1]  # K_pp (eq. 20): I*_p - m_p r^ r^ - M_{p+1} P^ P^
    zKz, e = dot(Z, K * Z), eta(p + 1, p + 1)
    assert zero(M(p, p + 1) - (M(p + 1, p + 1) + e))  # eq. 24
    assert zero(M(p, p) - (M(p + 1, p + 1) + zKz + 2 * e))  # eq. 25, first line
    assert zero(M(p, p) - (M(p, p + 1) + zKz + e))  # eq. 25, second line (corrected, see above)
    for i in range(p + 2, n):
        if not chain[i].revolute:
            continue
        assert zero(M(p, i) - (M(p + 1, i) + eta(p + 1, i)))  # eq. 25, last line
        iRp = emdeg._relative(chain, p, i)[0].T
        v = iRp * cross(Z, P)  # iR_p z^ P_{p+1}
        assert zero(c(p, i) - (c(p + 1, i) + dot(Z, hat(v) * hat(comp.U[i]) * Z)))  # eq. 35 (sign corrected)
