"""Recursive algorithms over the model, written once against a small scalar interface.

Each consumer runs the same recursion on its own scalar type: symengine expressions (formulations), NumPy arrays
over a batch of states (the numeric engine) and counting scalars (operation counts). This package sits above
:mod:`robodyn.model` and below both :mod:`robodyn.formulations` and :mod:`robodyn.numeric`.
"""
