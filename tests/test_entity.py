"""t_entity: the anchor study's proposed predictor (first named entity), an optional extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamrag.analysis.entity import ner_unavailable_reason
from streamrag.cli import main
from streamrag.data.demo import demo_path

REASON = ner_unavailable_reason()
needs_ner = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@needs_ner
def test_first_entity_position_is_the_word_where_the_entity_begins() -> None:
    from streamrag.analysis.entity import first_entity_position

    # spaCy tags "Steve Nash" (PERSON) starting at word 3 and "2008" (DATE) later
    assert first_entity_position("how did Steve Nash play in 2008") == 3
    assert first_entity_position("what is the answer") is None
    # an entity beginning inside a word (after punctuation) belongs to that word
    assert first_entity_position("who was president in (1990)") == 5


@needs_ner
def test_analyze_writes_t_entity_and_the_anchor_section_says_what_each_predictor_is(tmp_path: Path) -> None:
    out = tmp_path / "a"
    args = ["analyze", str(demo_path()), "--split", "all", "--out", str(out), "--no-figures", "--no-cache", "--entity-predictor"]
    assert main(args) == 0
    header = (out / "stabilization.csv").read_text().splitlines()[0].split(",")
    assert header[-2:] == ["t_entity", "skip_reason"]
    anchor = json.loads((out / "summary.json").read_text())["anchor"]
    assert "online" in anchor["t_entity"]["what"] and "not an online predictor" in anchor["t_pivot"]["what"]
    assert "proxy" in anchor["t_anchor"]["what"]
    # stats recomputes the same section from the table alone
    assert main(["stats", str(out / "stabilization.csv"), "--out", str(tmp_path / "s")]) == 0
    again = json.loads((tmp_path / "s" / "summary.json").read_text())["anchor"]
    assert again["t_entity"] == anchor["t_entity"]


def test_without_the_extra_the_flag_is_a_one_line_error(tmp_path: Path, capsys, monkeypatch) -> None:
    import streamrag.analysis.entity as entity

    monkeypatch.setattr(
        entity, "ner_unavailable_reason", lambda: "the entity predictor needs spaCy: pip install 'streamrag[ner]'"
    )
    args = ["analyze", str(demo_path()), "--split", "all", "--out", str(tmp_path / "x"), "--entity-predictor"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'streamrag[ner]'" in err
    assert not (tmp_path / "x").exists()  # refused before any work or output
