"""The built-in robots: each loads, says where it comes from, and matches its source's data."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import sympy
import yaml

import robodyn as rd
from robodyn.formulations import kinematics
from tests.conftest import load_quiet
from tests.helpers import numeric, state_values

EXPECTED = {
    "double_pendulum": ("RR", "standard", 5),
    "two_link_fu": ("RR", "standard", 4),
    "two_link_payload": ("RR", "standard", 8),
    "stanford_modified": ("RRP", "standard", 18),
    "puma560_symbolic": ("RRRRRR", "modified", 42),
    "puma560": ("RRRRRR", "standard", 0),
    "puma560_rtb": ("RRRRRR", "standard", 0),
    "stanford_arm": ("RRPRRR", "modified", 0),
    "industrial_6r": ("RRRRRR", "modified", 0),
    "palletizer_kr700pa": ("RRRRRRRR", "modified", 0),
    "fourbar_parallelogram": ("RRR", "standard", 0),
}


def test_every_robot_is_listed():
    assert sorted(EXPECTED) == rd.library.names()
    for entry in rd.library.entries():
        assert entry.description and entry.source
        # each names the text its data come from, by its authors (or the Toolbox whose numbers it carries)
        cited = ("Horn and Linge", "Burdick", "Fu, Gonzalez and Lee", "Angeles, Ma and Rojas", "Macsyma",
                 "Robotics Toolbox", "HybrDyn", "RBDL")
        assert any(text in entry.source for text in cited), entry.name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loads_with_expected_structure(name):
    robot = load_quiet(name)
    joints, convention, parameters = EXPECTED[name]
    assert (robot.joint_types, robot.convention, len(robot.parameters())) == (joints, convention, parameters)


def test_industrial_6r_is_converted_from_angeles_notation():
    """Table 3 of seed 003: b1 = -1.5, b6 = -0.41 become d1 = 1.5, d6 = 0.41; alpha_i -> alpha_{i-1}."""
    robot = load_quiet("industrial_6r")
    assert [float(link.d) for link in robot.links] == [1.5, 0, 0, 0, 0, 0.41]
    assert [link.alpha for link in robot.links] == [0, sympy.pi / 2, 0, 0, sympy.pi / 2, sympy.pi / 2]
    assert [float(link.a) for link in robot.links] == [0, 0, 1.02, 1.02, 0.2, 0]
    # at table 3's initial angles the wrist centre of frame 6 lies on the line x = 1.33 (to 0.01)
    q0 = np.deg2rad([0, 68.5, -135, 39.6, 90, 90])
    T = numeric(kinematics.forward_kinematics(robot), state_values(6, q0))
    assert abs(T[0, 3] - 1.33) < 0.01 and abs(T[1, 3]) < 1e-12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loads_without_warnings(name):
    """Published data that break the triangle inequality say so (each such link's ``inertia_note``): no warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rd.load(name)
    assert [str(w.message) for w in caught] == []


def test_every_robot_loads_without_warnings_in_a_fresh_interpreter():
    code = "import robodyn as rd\nfor name in rd.library.names():\n    rd.load(name)\nprint('ok')"
    proc = subprocess.run([sys.executable, "-W", "error::Warning", "-c", code], capture_output=True, text=True,
                          check=False, timeout=600, preexec_fn=_limit_cpu if sys.platform != "win32" else None)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def _limit_cpu() -> None:
    """A hang guard in CPU time (a loaded machine slows a correct run down; a hang spins): preexec_fn."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (120, 130))


NOTED = {"puma560": [1, 3], "puma560_rtb": [1, 3], "industrial_6r": [1]}


@pytest.mark.parametrize("name", sorted(NOTED))
def test_published_inertia_is_noted_and_still_strict(name):
    """The notes name the links and their source; strict mode still refuses the tensors; the same data in a user
    file without the notes warn about exactly those links."""
    robot = rd.load(name)
    noted = [k + 1 for k, note in enumerate(robot.inertia_notes) if note]
    assert noted == NOTED[name]
    for k in noted:
        assert f"link {k}" in robot.inertia_notes[k - 1]
        assert any(author in robot.inertia_notes[k - 1] for author in ("Corke", "Angeles")), robot.inertia_notes
    with pytest.raises(rd.ModelError, match="strict"):
        rd.load(name, strict=True)


@pytest.mark.parametrize("name", sorted(NOTED))
def test_same_data_without_the_notes_warn(name, tmp_path):
    data = yaml.safe_load(rd.library.text(name)[1])
    for row in data["links"]:
        row.pop("inertia_note", None)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rd.load(path)
    messages = [str(w.message) for w in caught if issubclass(w.category, rd.ModelWarning)]
    assert len(messages) == len(NOTED[name]), messages
    for k, message in zip(NOTED[name], messages, strict=True):
        assert f"{path}: link {k}: field 'inertia'" in message and "triangle inequality" in message


def test_show_prints_the_notes():
    from typer.testing import CliRunner

    from robodyn.cli import app

    result = CliRunner().invoke(app, ["show", "puma560"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "inertia notes" in text and "warning:" not in text
    assert "link 1: Corke and Armstrong-Helouvry (1994) give link 1" in text
    assert "link 3: Corke and Armstrong-Helouvry (1994) give link 3" in text
    plain = CliRunner().invoke(app, ["show", "double_pendulum"])
    assert plain.exit_code == 0 and "inertia notes" not in plain.output


def test_puma560_matches_the_toolbox_file():
    import json
    from pathlib import Path

    rtb = json.loads((Path(__file__).parents[1] / "data" / "puma560_rtb.json").read_text())
    robot = load_quiet("puma560")
    for link, ref in zip(robot.links, rtb["links"], strict=True):
        assert float(link.a) == ref["a"] and float(link.d) == ref["d"] and float(link.mass) == ref["m"]
        assert abs(float(link.alpha) - ref["alpha"]) < 1e-15
        assert [float(x) for x in link.com] == ref["r"]
        assert np.array(link.inertia, dtype=float).tolist() == ref["I"]
