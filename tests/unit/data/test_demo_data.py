"""The built-in demo set: format, coverage, grounding, and that it is what the builder makes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest
from conventions_oracle import chunk_texts, gold_chunks, normalize, visible_text

from streamrag.data.demo import demo_path

ROOT = Path(__file__).resolve().parents[3]
TYPES = {"simple", "simple_w_condition", "set", "comparison", "aggregation", "multi-hop", "post-processing", "false_premise"}
DOMAINS = {"finance", "sports", "music", "movie", "open"}
DYNAMISM = {"static", "slow-changing", "fast-changing", "real-time"}


@pytest.fixture(scope="module")
def records() -> list[dict]:
    with demo_path().open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_file_is_shipped_small_and_parses(records: list[dict]) -> None:
    path = demo_path()
    assert path.name == "demo_questions.jsonl" and path.parent.name == "demo"
    assert path.stat().st_size < 1_000_000
    assert len(records) == 32
    for rec in records:
        assert uuid.UUID(rec["interaction_id"])
        assert re.fullmatch(r"\d\d/\d\d/2024, \d\d:\d\d:\d\d PT", rec["query_time"])
        assert isinstance(rec["query"], str) and 3 <= len(rec["query"].split()) <= 40
        assert isinstance(rec["answer"], str) and rec["answer"]
        assert isinstance(rec["alt_ans"], list) and all(isinstance(a, str) for a in rec["alt_ans"])
        assert rec["split"] in (0, 1)
        assert len(rec["search_results"]) == 5
        for page in rec["search_results"]:
            assert set(page) == {"page_name", "page_url", "page_snippet", "page_result", "page_last_modified"}
            assert page["page_name"] and page["page_snippet"] and page["page_url"].startswith("https://")
    assert len({r["interaction_id"] for r in records}) == 32
    assert len({r["query"] for r in records}) == 32


def test_coverage_of_types_domains_dynamism_and_splits(records: list[dict]) -> None:
    types = Counter(r["question_type"] for r in records)
    domains = Counter(r["domain"] for r in records)
    assert set(types) == TYPES and min(types.values()) >= 3
    assert set(domains) == DOMAINS and min(domains.values()) >= 5
    assert {r["static_or_dynamic"] for r in records} == DYNAMISM
    splits = Counter(r["split"] for r in records)
    assert splits[0] == 24 and splits[1] == 8


def test_pages_carry_realistic_markup(records: list[dict]) -> None:
    pages = [p for r in records for p in r["search_results"]]
    html = [p["page_result"] for p in pages if p["page_result"]]
    assert len(pages) - len(html) in (1, 2)  # snippet-only pages
    for page in html:
        assert page.startswith("<!DOCTYPE html>") and "<head>" in page and "<script" in page and "<style>" in page
    assert any("<noscript>" in h for h in html) and any("<template" in h for h in html)
    # markup is removed: the head's <title> suffix and script code never reach the text
    text = " ".join(visible_text(p) for p in pages)
    assert "dataLayer" not in text and "@context" not in text and "| Openpedia" not in text
    words = [len(visible_text(p).split()) for p in pages if p["page_result"]]
    assert min(words) >= 100 and max(words) <= 1500


def test_chunk_counts_per_question(records: list[dict]) -> None:
    counts = [len(chunk_texts(r)) for r in records]
    assert min(counts) >= 5 and max(counts) <= 40


def test_answers_are_grounded_except_where_they_cannot_be(records: list[dict]) -> None:
    ungroundable = [r for r in records if not gold_chunks(r)]
    # false premise ("invalid question" is never a candidate) and one real-time question
    # whose pages predate the asked day
    expected = [r for r in records if r["answer"] == "invalid question" or r["static_or_dynamic"] == "real-time"]
    assert [r["interaction_id"] for r in ungroundable] == [r["interaction_id"] for r in expected]
    assert sum(r["answer"] != "invalid question" for r in ungroundable) == 1
    assert all(r["question_type"] == "false_premise" for r in records if r["answer"] == "invalid question")


def test_answer_shapes(records: list[dict]) -> None:
    answers = {r["answer"] for r in records}
    assert any(re.fullmatch(r"\d{1,3}(,\d{3})+", a) for a in answers)  # e.g. "1,204"
    assert sum(bool(r["alt_ans"]) for r in records) >= 5
    # a groundable question whose answer is only in a snippet-only page
    snippet_only = [
        r
        for r in records
        for p in r["search_results"]
        if not p["page_result"] and normalize(r["answer"]) in normalize(p["page_snippet"])
    ]
    assert len(snippet_only) == 1


def test_shipped_file_is_what_the_builder_makes() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_demo.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,  # the assert below shows the builder's stderr
    )
    assert done.returncode == 0, done.stderr
