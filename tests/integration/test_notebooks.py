"""The notebooks run top to bottom (nbclient) on run folders made from the demo set."""

from __future__ import annotations

import itertools
import re
import textwrap
from pathlib import Path

import nbformat
import pytest

from streamrag.sweep import load_grid, run_sweep

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = ("stabilization", "rq3", "triggers")
PUBLIC_MODULES = {"streamrag", "streamrag.plots", "streamrag.sweep"}
"""What notebooks import: the curated API, every plot function, the sweep's API."""

# A quick cut of triggers.toml: every policy, two tool latencies, one cadence.
SMALL_TRIGGERS = textwrap.dedent("""
    kind = "simulate"
    input = "demo"
    scenario = "paper_rq3"
    [base]
    "select.population" = "all"
    [output]
    figures = false
    [axes]
    "latency.L_ms" = [600, 1000]
    "input.delta_wps" = [3.0]
""")


@pytest.fixture(scope="module")
def run_folders(tmp_path_factory, demo_analysis) -> dict[str, str]:
    work = tmp_path_factory.mktemp("notebooks")
    analysis = demo_analysis  # every demo question, read only
    run_sweep(load_grid("paper_rq2", input=f"table:{analysis / 'stabilization.csv'}"), work / "rq2")
    run_sweep(load_grid("paper_rq3", input="demo"), work / "rq3")
    variants = load_grid("triggers").text.split("[axes.trigger]", 1)[1]
    grid = work / "triggers.toml"
    grid.write_text(SMALL_TRIGGERS + "\n[axes.trigger]" + variants, encoding="utf-8")
    run_sweep(grid, work / "triggers")
    return {
        "STREAMRAG_ANALYSIS_DIR": str(analysis),
        "STREAMRAG_RQ2_RUN": str(work / "rq2"),
        "STREAMRAG_RQ3_RUN": str(work / "rq3"),
        "STREAMRAG_TRIGGERS_RUN": str(work / "triggers"),
        "STREAMRAG_NOTEBOOK_WORK": str(work / "work"),
    }


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_clean_and_uses_the_public_api(name):
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(book)  # the site's renderer refuses an invalid notebook
    code = [c for c in book.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code), "outputs must be cleared"
    assert any("parameters" in c.metadata.get("tags", []) for c in code)
    imports = [line for c in code for line in c.source.splitlines() if re.match(r"\s*(from|import) ", line)]
    assert not [line for line in imports if re.search(r"streamrag(\.\w+)*\._", line)], "private module imported"
    modules = [m.group(1) for line in imports if (m := re.match(r"\s*(?:from|import) (streamrag[\w.]*)", line))]
    assert modules and not [m for m in modules if m not in PUBLIC_MODULES], "a notebook reaches past the public modules"
    # A tutorial: prose before every code cell (issue 48), the parameters cell aside.
    after_code = [i for i, (a, b) in enumerate(itertools.pairwise(book.cells), 1) if a.cell_type == b.cell_type == "code"]
    assert book.cells[0].cell_type == "markdown" and not after_code, f"cells {after_code} follow a code cell without prose"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom(name, run_folders, monkeypatch, tmp_path):
    from nbclient import NotebookClient

    for key, value in run_folders.items():
        monkeypatch.setenv(key, value)  # the kernel inherits the environment
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(book, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, "the notebook shows its figures"
