"""The README's Python API example runs as written (in a scratch folder)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_python_api_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    section = README.read_text(encoding="utf-8").split("## Python API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(code, f"{README}:Python API", "exec"), namespace)
    deltas = namespace["deltas"]
    assert len(deltas) == 32 and {"delta_saved_ms", "saved_ms_a", "saved_ms_b"} <= set(deltas.columns)  # type: ignore[attr-defined]
    assert namespace["runs"].attrs["kind"] == "simulation"  # type: ignore[attr-defined]
    assert (tmp_path / "runs" / "gold" / "results.csv").is_file()
