"""Small crafted inputs and a CLI runner shared by the hardening tests (not a test module)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamrag.cli import main


def record(i: int = 0, **over: Any) -> dict[str, Any]:
    """A valid CRAG record whose query shares words with its one page (so it ranks)."""
    rec: dict[str, Any] = {
        "interaction_id": f"q{i}",
        "query": "who founded acme robotics in boston",
        "answer": "jane doe",
        "alt_ans": [],
        "domain": "finance",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "split": 0,
        "search_results": [
            {"page_name": "p", "page_url": "u", "page_snippet": "s",
             "page_result": "<p>acme robotics was founded in boston by jane doe.</p>"},
            {"page_name": "q", "page_url": "v", "page_snippet": "t",
             "page_result": "<p>robots are built in many cities, not only boston.</p>"},
            {"page_name": "r", "page_url": "w", "page_snippet": "x",
             "page_result": "<p>who knows what the weather in boston will be?</p>"},
        ],
    }  # fmt: skip
    rec.update(over)
    return rec


def write_jsonl(path: Path, records: list[dict[str, Any] | str]) -> Path:
    """One JSON object (or raw text) per line."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``main(argv)`` → (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(err: str) -> str:
    """The single ``streamrag: error:`` line of ``err`` without its prefix (fails otherwise)."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("streamrag: error: "), err
    assert "Traceback" not in err
    return lines[0].removeprefix("streamrag: error: ")


def files_under(folder: Path) -> list[Path]:
    """Every file below ``folder`` (none when it does not exist)."""
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []
