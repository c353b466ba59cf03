"""Describe an arm in code, save it, derive its dynamics and evaluate them at one state."""


import robodyn as rd

arm = rd.Manipulator.from_dh(
    [
        {"joint": "R", "a": 0.4, "alpha": "pi/2", "d": 0.3, "mass": 5.0, "com": [-0.2, 0, 0],
         "inertia": [0.01, 0.08, 0.08], "damping": 0.2},
        {"joint": "P", "a": 0, "alpha": 0, "d": 0.1, "mass": 2.0, "com": [0, 0, -0.1],
         "inertia": [0.02, 0.02, 0.001], "armature": 0.05},
    ],
    convention="standard",
    gravity=[0, 0, -9.81],
    name="rp_arm",
)
path = arm.save("rp_arm.yaml")
eqs = rd.derive(rd.load(path))
state = dict(zip(eqs.symbols.all(), [0.3, 0.2, 1.0, -0.5, 2.0, 0.1], strict=True))
print("M =", eqs.M.subs(state).evalf(6))
print("tau =", eqs.tau.subs(state).evalf(6))
