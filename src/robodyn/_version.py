"""The version of robodyn, in one place (the package face and the code generators read it)."""

__version__ = "0.1.0"
