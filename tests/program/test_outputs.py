"""The one vocabulary (issue 27): :mod:`robodyn.program.outputs` names what the API has, the lower layers' own lists
agree with it, and the command line offers exactly its names (every choice run: tests/test_cli.py)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from robodyn.program import outputs as vocabulary


def test_importing_the_vocabulary_loads_nothing_heavy():
    """The command line reads it at start-up: no sympy, symengine or NumPy (``robodyn.program`` loads its routes
    on first use)."""
    code = ("import sys; import robodyn.program.outputs, robodyn.program; "
            "print(sorted(m for m in ('sympy', 'numpy', 'symengine') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_program_package_loads_on_use():
    """The lazy names of ``robodyn.program`` are the real ones."""
    import robodyn.program as program
    from robodyn.program import core, routes

    assert program.Program is core.Program and program.count_operations is core.count_operations
    assert program.from_equations is routes.from_equations and program.routes is routes
    assert {"build", "Program", "OUTPUTS"} <= set(dir(program))
    with pytest.raises(AttributeError):
        program.no_such_name  # noqa: B018


def test_methods_are_those_of_the_formulations():
    """The formulations' layer sits below the program package: it keeps its own list, equal to the vocabulary's."""
    from robodyn import formulations

    assert formulations.AVAILABLE == vocabulary.METHODS
    spellings = {**{m: m for m in vocabulary.METHODS}, **vocabulary.METHOD_ALIASES, **vocabulary.METHOD_SPELLINGS}
    assert spellings == formulations.METHODS
    assert set(formulations.METHODS.values()) == set(vocabulary.METHODS)  # every alias names a method


def test_forms_are_those_of_the_equations():
    from robodyn import equations

    assert equations.FORMS == vocabulary.FORMS


def test_program_and_codegen_take_their_names_from_the_vocabulary():
    from robodyn import codegen, program
    from robodyn.codegen import spec
    from robodyn.program import routes

    assert program.OUTPUTS is vocabulary.OUTPUTS and program.ROUTES is vocabulary.ROUTES
    assert (program.LDLT, program.ABA) == (vocabulary.LDLT, vocabulary.ABA)
    assert routes.DERIVATIVES is vocabulary.DERIVATIVES and routes.DERIVATIVE_GROUPS is vocabulary.DERIVATIVE_GROUPS
    assert routes.PARTS is vocabulary.PARTS and routes.FORWARD_ROUTES is vocabulary.FORWARD_ROUTES
    assert spec.KINDS is vocabulary.KINDS and spec.KEYS is vocabulary.KEYS and spec.Kind is vocabulary.Kind
    assert codegen.KINDS is vocabulary.KINDS and codegen.LANGUAGES is vocabulary.LANGUAGES
    assert spec.DEFAULT_KEYS == ("tau", "M", "h", "bias", "G", "forward")
    for language in vocabulary.LANGUAGES:
        assert codegen.emitter(language) is not None
    for route in vocabulary.ROUTES:  # each route is a function of robodyn.program.routes, or aba (forward)
        assert callable(getattr(routes, route))
    for kind in vocabulary.KINDS:  # (a frame's routine: its Program output of each compiled frame, "pose:F")
        assert set(kind.parts) <= {*vocabulary.OUTPUTS, *vocabulary.FRAME_OUTPUTS}, kind
    assert set(vocabulary.PARTS) <= set(vocabulary.OUTPUTS)
    assert set(vocabulary.COUNTABLE) == {*vocabulary.OUTPUTS, "dtau", "dqdd"}


def test_every_cli_choice_is_a_name_of_the_api():
    """The command line's choices are the vocabulary's names (``count`` calls ``elements`` ``all``)."""
    from robodyn import cli

    def values(enum: Any) -> list[str]:
        return [member.value for member in enum]

    assert values(cli.Form) == list(vocabulary.FORMS)
    assert "aba" not in values(cli.Form)  # issue 27: --form aba printed a traceback
    assert set(values(cli.Method)) <= set(vocabulary.METHODS) | set(vocabulary.METHOD_ALIASES)
    assert set(vocabulary.METHODS) <= set(values(cli.Method))
    assert values(cli.Route) == [vocabulary.AUTO, *vocabulary.ROUTES]
    assert values(cli.Language) == list(vocabulary.LANGUAGES)
    counted = [{v: k for k, v in cli.COUNT_NAMES.items()}.get(c, c) for c in values(cli.CountOutput)]
    assert counted == list(vocabulary.COUNTABLE)
