"""The manipulator model: links, conventions, validation and model files."""

from robodyn.model.manipulator import CONVENTIONS, Link, Manipulator, Payload, RigidBody

__all__ = ["CONVENTIONS", "Link", "Manipulator", "Payload", "RigidBody"]
