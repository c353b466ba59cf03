"""The report (one self-contained HTML page: :mod:`robodyn.report.page`) and the main job of ``robodyn demo``
(:mod:`robodyn.report.demo`).

    import robodyn.report
    robodyn.report.write(rd.load("puma560"), "puma.html")
"""

from robodyn.report.page import build, write

__all__ = ["build", "write"]
