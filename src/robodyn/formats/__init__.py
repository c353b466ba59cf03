"""Every reader and writer of a robot: model files (:mod:`~robodyn.formats.model_file`), URDF
(:mod:`~robodyn.formats.urdf`), Pinocchio models (:mod:`~robodyn.formats.pinocchio`), Robotics Toolbox DH robots
(:mod:`~robodyn.formats.toolbox`), the format-neutral frames-to-model builder URDF and Pinocchio share
(:mod:`~robodyn.formats.frames`), and ``robodyn.load`` (:mod:`~robodyn.formats.load`), which picks the reader.

The package itself imports nothing, so that reading a model file does not import the URDF reader's libraries.
"""
