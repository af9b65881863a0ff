"""The README's ten-line Python example runs as written (in a scratch folder), and the README
stays a page a newcomer reads in five minutes (issue 48)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_python_api_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    section = README.read_text(encoding="utf-8").split("## Python in ten lines", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    assert len(code.strip().splitlines()) <= 10
    exec(compile(code, f"{README}:Python in ten lines", "exec"), namespace)
    deltas = namespace["deltas"]
    assert len(deltas) == 32 and {"delta_saved_ms", "saved_ms_a", "saved_ms_b"} <= set(deltas.columns)  # type: ignore[attr-defined]
    assert namespace["runs"].attrs["kind"] == "simulation"  # type: ignore[attr-defined]
    assert (tmp_path / "runs" / "gold" / "results.csv").is_file()


def test_the_readme_is_short_and_states_no_measurement_history() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300 and len(text.encode()) <= 20_000
    assert not re.search(r"20\d\d-\d\d-\d\d|load average", text), "measurement history belongs in benchmarks/results"


def test_every_link_of_the_readme_reaches_a_file() -> None:
    """The README links into docs/ (the site's pages, readable where the repository is)."""
    text = README.read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)", text) if not t.startswith(("http://", "https://"))]
    assert targets and not [t for t in targets if not (README.parent / t).is_file()]
