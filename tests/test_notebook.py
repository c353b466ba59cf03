"""What a notebook user sees (issue 14, item 4): every public result type displays itself readably, and
examples/tour.ipynb runs from top to bottom in a fresh kernel (nbclient, the engine of ``jupyter nbconvert
--execute``) with the displays checked."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.analysis.check import check
from robodyn.program import build
from tests.conftest import load_quiet

TOUR = Path(__file__).resolve().parents[1] / "examples" / "tour.ipynb"
PNG = b"\x89PNG\r\n\x1a\n"


def test_program_repr_is_one_line_with_the_counts() -> None:
    program = build(load_quiet("puma560"), ("tau",))
    c = program.count()["evaluation"]
    text = repr(program)
    assert "\n" not in text and text.startswith("<Program tau[6] from q[6], qd[6], qdd[6], parameters[0]")
    assert f"{c.multiplications} multiplications, {c.additions} additions" in text
    assert "# run time" in str(program)  # str is still the listing


def test_forms_show_shapes_and_latex() -> None:
    eqs = rd.derive(load_quiet("two_link_payload"))
    cs = eqs.config_space()
    assert repr(cs).startswith("ConfigSpace(M 2x2 (") and "B 2x1" in repr(cs)
    latex = cs._repr_latex_()
    assert latex.startswith("$\\begin{gathered}F = M \\ddot{q}") and latex.endswith("\\end{gathered}$")
    assert repr(eqs.fu_form()).startswith("FuForm(D 2x2") and "H2 2x2" in repr(eqs.fu_form())
    assert repr(eqs.emdeg_form()).startswith("EmdegForm(n=2: M 2x2")
    assert eqs._repr_latex_().startswith("$\\begin{gathered}\\tau = ")


def test_check_result_is_a_table() -> None:
    result = check(load_quiet("two_link_fu"))
    lines = repr(result).splitlines()
    assert lines[0] == "two_link_fu: every method against newton-euler" and lines[-1] == "all methods agree"
    assert lines[1].split() == ["method", "part", "mode", "max", "relative", "difference", "agree"]
    assert len(lines) == 3 + len(result.rows())
    html = result._repr_html_()
    assert html.startswith("<table><caption>") and html.count("<tr>") == 1 + len(result.rows())


def test_simulation_and_linear_models_summarise_and_plot_inline() -> None:
    pendulum = load_quiet("double_pendulum")
    params = {"L1": 1.0, "L2": 0.5, "m1": 2.0, "m2": 1.0, "g": 9.81}
    result = rd.simulate(pendulum, 0.5, q0=[0.3, 0.1], params=params, samples=51)
    assert repr(result).startswith("<SimulationResult double_pendulum: t = 0..0.5 s, 51 samples, RK45")
    figure = result.plot()
    assert figure._repr_png_().startswith(PNG)  # shown inline without pyplot
    lin = rd.linearize(pendulum, [0.0, 0.0], params=params)
    assert repr(lin) == "LinearModel(numeric, A 4x4, B 4x2, C 4x4, D 4x2, output 'state')"
    oscillations = rd.simulation.small_oscillations(pendulum, [0.0, 0.0], params=params)
    assert repr(oscillations).startswith("Oscillations(q0=[0. 0.], periods [s] = (")


def test_tour_notebook_runs_and_shows_every_result() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(TOUR, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(TOUR.parent)}}).execute()
    shown = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs
             if o.output_type == "execute_result"]
    assert not [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs
                if o.output_type == "error"]
    data = [o["data"] for o in shown]
    plain = [d["text/plain"] for d in data]
    assert plain[0].startswith("Manipulator(name='two_link_payload'") and "text/latex" in data[0]
    assert data[1]["text/latex"].startswith("$\\begin{gathered}\\tau = ")  # Equations: LaTeX, not "False"
    assert data[2]["text/latex"].startswith("$\\begin{gathered}F = M")  # ConfigSpace
    assert "all methods agree" in data[3]["text/html"]  # CheckResult
    assert plain[4].startswith("<Program tau[2], dtau_dq[4], dtau_dqd[4]")
    assert plain[5].startswith("<SimulationResult double_pendulum")
    assert base64.b64decode(data[6]["image/png"]).startswith(PNG)  # SimulationResult.plot(), inline
    assert plain[7].startswith("LinearModel(numeric, A 4x4")
    # the linearised pendulum's frequencies, as the notebook printed them, are those of its small oscillations
    periods = rd.simulation.small_oscillations(load_quiet("double_pendulum"), [0.0, 0.0], params={
        "L1": 1.0, "L2": 0.5, "m1": 2.0, "m2": 1.0, "g": 9.81}).periods
    printed = np.array([float(x) for x in plain[8].removeprefix("array([").removesuffix("])").split(",")])
    assert np.allclose(np.unique(printed.round(6)), np.sort(2 * np.pi / periods), rtol=1e-6)
