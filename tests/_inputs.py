"""Small crafted inputs and a CLI runner shared by the hardening tests (not a test module)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamrag.cli import main

OVERLAP = '''\
"""A word-overlap ranker: the user's own file, 12 lines."""

from collections.abc import Sequence


class WordOverlap:
    def __init__(self, chunks: Sequence[str]) -> None:
        self.words = [set(chunk.lower().split()) for chunk in chunks]

    def score(self, query: str) -> list[float]:
        q = set(query.lower().split())
        return [float(len(q & words)) for words in self.words]
'''
"""The retriever under test, as a researcher would write it (well under 30 lines)."""


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


def anchor_feature_table(path: Path, n_questions: int = 60, seed: int = 3) -> Path:
    """A feature table in the anchor's format, labels that depend on t (so a model can learn)."""
    import numpy as np

    from streamrag.analysis.features.compute import ANCHOR_COLUMNS

    rng = np.random.default_rng(seed)
    lines = [",".join(ANCHOR_COLUMNS)]
    for i in range(n_questions):
        n = int(rng.integers(4, 14))
        rg = i % 3 != 0
        t_suf = int(rng.integers(1, n + 1)) if rg else None
        t_sc = int(rng.integers(1, n + 1))
        ne = int(rng.integers(1, n + 1))
        qw = ["who", "what", "how", "other"][i % 4]
        streak = 1
        top = 0
        for t in range(1, n + 1):
            changed = int(t > 1 and rng.random() < 0.3)
            streak = 1 if changed or t == 1 else streak + 1
            top += changed
            label = "" if t_suf is None else str(int(t >= t_suf))
            lines.append(
                f"q{i},simple,movie,{rg},{n},{t},{'' if t_suf is None else t_suf},{t_sc},{streak},{changed},"
                f"{int(t >= ne)},{max(0, t - ne) if t >= ne else 0},{qw},{label},{int(t >= t_sc)}"
            )
    path.write_text("\n".join(lines) + "\n")
    return path
