"""Putting the equations to work: simulation, linearisation, torque histories along trajectories, Fu's simplified
model, the cross-check of the formulations, inverse kinematics, trajectories, the Robotics Toolbox's names and
plots. Each module is a set of free functions over a robot; the package itself imports nothing.
"""
