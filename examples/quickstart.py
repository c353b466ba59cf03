"""Derive the double pendulum of ROBMAT two ways and print its configuration-space form."""

import sympy

import robodyn as rd

robot = rd.load("double_pendulum")
ne = rd.derive(robot, "newton-euler")
le = rd.derive(robot, "lagrange-euler")
assert all(sympy.simplify(x) == 0 for x in ne.tau - le.tau)

cs = ne.config_space()
for name in ("M", "B", "C", "G"):
    print(name, "=", getattr(cs, name).applyfunc(sympy.trigsimp))
